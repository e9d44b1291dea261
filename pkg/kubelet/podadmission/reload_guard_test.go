/*
Copyright The podadmission Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package podadmission

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
)

// These tests drive Manager.reload directly, on the fake clock.

// heldBy reports whether the Manager holds pod, a new pod, now. It is the
// one place these tests call the Manager's admission.
func heldBy(t *testing.T, tm *testManager, pod *v1.Pod) bool {
	t.Helper()
	admitted, _, _, _ := tm.admit(pod)
	return !admitted
}

// startedManager is newTestManager ready for reloads, with plugins that
// reject every pod.
func startedManager(t *testing.T, config string) *testManager {
	t.Helper()
	tm := newTestManager(t, config, func(f *fakeFactory, _ *Options) {
		for _, name := range []string{"a", "b", "c", "d"} {
			f.set(name, deny("No", "held by "+name))
		}
	})
	tm.runCtx = t.Context()
	return tm
}

// reloadSettled reloads the way the watch does after a change: once when
// the change is seen, and again when it stayed unchanged for the settle
// window.
func (tm *testManager) reloadSettled(ctx context.Context) time.Duration {
	tm.reload(ctx)
	tm.clock.Step(settleWindow)
	return tm.reload(ctx)
}

// rewriteInPlace truncates file and writes content through the same inode.
func rewriteInPlace(t testing.TB, file, content string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	_, err = f.WriteString(content)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// Case 2 of issue 12: a file rewritten in place passes through states that
// parse and list fewer plugins.
func TestReloadRefusesAnInPlaceChangeThatRemovesPlugins(t *testing.T) {
	tm := startedManager(t, pluginsYAML(execPlugin("a"), execPlugin("b", "args: [--level=restricted]")))
	held := testPod("held")
	require.True(t, heldBy(t, tm, held))

	for _, tc := range []struct{ name, partial string }{
		{"a plugin missing", pluginsYAML(execPlugin("a"))},
		{"a field missing", pluginsYAML(execPlugin("a"), execPlugin("b"))},
		{"another plugin", pluginsYAML(execPlugin("a"), execPlugin("c"))},
		{"moved to new names", pluginsYAML(execPlugin("c"), execPlugin("d"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rewriteInPlace(t, tm.file, tc.partial)
			assert.Equal(t, settleWindow, tm.reload(t.Context()), "nothing is refused before the change settled")
			tm.clock.Step(settleWindow)
			assert.Zero(t, tm.reload(t.Context()))
			assert.Equal(t, []string{"a", "b"}, tm.pluginNames(), "the last good configuration stays in use")
			tm.clock.Step(time.Hour)
			assert.True(t, heldBy(t, tm, held), "no held pod is admitted")
			assert.True(t, heldBy(t, tm, testPod("new-"+tc.name)), "a new pod is held")
		})
	}
	event := <-tm.recorder.Events
	assert.Contains(t, event, "Warning PodAdmissionConfigChangedInPlace Refused the changed pod admission configuration; the last good one stays in use: "+
		tm.file+": changed in place in a way that removes or changes its plugins [")
	assert.Contains(t, event, `Write the new content to a file whose name starts with "." or does not end in .yaml, .yml or .json (it is not read), then rename it to `+tm.file)
	assert.True(t, strings.HasSuffix(event, `to remove every plugin of the file, write "plugins: []"`), "a restart applies no removal made in place: %s", event)
	assert.Equal(t, 2.0, reloads(t, reloadFailure), "once per distinct error: [b] three times, then [a, b]")

	// The same change, renamed into place, is applied.
	writeConfig(t, tm.file, pluginsYAML(execPlugin("a")))
	tm.reloadSettled(t.Context())
	assert.Equal(t, []string{"a"}, tm.pluginNames())
}

func TestReloadAppliesAnInPlaceChangeThatAddsPlugins(t *testing.T) {
	tm := startedManager(t, pluginsYAML(execPlugin("a")))
	rewriteInPlace(t, tm.file, pluginsYAML(execPlugin("c"), execPlugin("a"), execPlugin("b")))
	tm.reloadSettled(t.Context())
	assert.Equal(t, []string{"c", "a", "b"}, tm.pluginNames())
	assert.Equal(t, 1, tm.factory.creations("a"), "the unchanged plugin is kept")
}

// Removing every plugin stays possible on purpose: "plugins: []", in place
// or not. Nothing half written reads so.
func TestReloadAppliesAnExplicitlyEmptyListInPlace(t *testing.T) {
	tm := startedManager(t, pluginsYAML(execPlugin("a"), execPlugin("b")))
	rewriteInPlace(t, tm.file, configHeader+"plugins: []\n")
	tm.reloadSettled(t.Context())
	assert.Empty(t, tm.pluginNames())
	assert.False(t, heldBy(t, tm, testPod("web")))
}

func TestReloadRefusesIncompleteFiles(t *testing.T) {
	for name, content := range map[string]string{
		"empty":          "",
		"only comments":  "# plugins:\n#- name: a\n",
		"plugins: null":  configHeader + "plugins:\n",
		"no plugins key": configHeader,
		"half a list":    configHeader + "plugins:\n- name: a\n  type: Ex",
	} {
		t.Run(name, func(t *testing.T) {
			tm := startedManager(t, pluginsYAML(execPlugin("a")))
			for _, write := range []func(testing.TB, string, string){rewriteInPlace, writeConfig} {
				write(t, tm.file, content)
				tm.reload(t.Context())
				assert.Equal(t, []string{"a"}, tm.pluginNames())
			}
			assert.Equal(t, 1.0, reloads(t, reloadFailure), "refused and reported")
			assert.Contains(t, <-tm.recorder.Events, "Warning PodAdmissionConfigInvalid")
		})
	}
}

func TestReloadWaitsWhileAFileIsOpenForWriting(t *testing.T) {
	tm := startedManager(t, pluginsYAML(execPlugin("a")))
	f, err := os.OpenFile(tm.file, os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	_, err = f.WriteString(configHeader + "plugins:\n")
	require.NoError(t, err)
	assert.Equal(t, reloadDebounce, tm.reload(t.Context()), "tried again soon")
	assert.Equal(t, []string{"a"}, tm.pluginNames())
	assert.Empty(t, tm.recorder.Events, "nothing to report yet")

	_, err = f.WriteString(execPlugin("a") + execPlugin("b"))
	require.NoError(t, err)
	assert.Equal(t, 2*reloadDebounce, tm.reload(t.Context()), "and later and later, should the file stay open")
	for range 10 {
		tm.reload(t.Context())
	}
	assert.Equal(t, maxWriterWait, tm.reload(t.Context()))
	require.NoError(t, f.Close())
	assert.Equal(t, settleWindow, tm.reload(t.Context()), "closed: applied once it settled")
	assert.Equal(t, []string{"a"}, tm.pluginNames())
	tm.clock.Step(settleWindow)
	assert.Zero(t, tm.reload(t.Context()))
	assert.Equal(t, []string{"a", "b"}, tm.pluginNames())
}

func TestReloadRemovesAFilesPluginsOnlyOnceItStaysRemoved(t *testing.T) {
	tm := startedManager(t, pluginsYAML(execPlugin("a")))
	second := filepath.Join(tm.dir, "20-b.yaml")
	writeConfig(t, second, pluginsYAML(execPlugin("b")))
	tm.reloadSettled(t.Context())
	require.Equal(t, []string{"a", "b"}, tm.pluginNames())

	// install(1) unlinks the file and creates it again: no removal.
	require.NoError(t, os.Remove(second))
	assert.Equal(t, settleWindow, tm.reload(t.Context()))
	assert.Equal(t, []string{"a", "b"}, tm.pluginNames())
	tm.clock.Step(settleWindow / 2)
	writeConfigFile(t, second, pluginsYAML(execPlugin("b")))
	assert.Zero(t, tm.reload(t.Context()))
	assert.Equal(t, []string{"a", "b"}, tm.pluginNames())
	tm.clock.Step(settleWindow)

	require.NoError(t, os.Remove(second))
	assert.Equal(t, settleWindow, tm.reload(t.Context()), "a removal that came back once starts its wait anew")
	tm.clock.Step(settleWindow - time.Millisecond)
	assert.Equal(t, time.Millisecond, tm.reload(t.Context()))
	assert.Equal(t, []string{"a", "b"}, tm.pluginNames())
	tm.clock.Step(time.Millisecond)
	assert.Zero(t, tm.reload(t.Context()))
	assert.Equal(t, []string{"a"}, tm.pluginNames())
}

// A file renamed over the one in effect may get the inode number the last
// one freed; its birth time tells it from an in-place change.
func TestReloadTellsAReusedInodeFromAnInPlaceChange(t *testing.T) {
	tm := startedManager(t, pluginsYAML(execPlugin("a"), execPlugin("b")))
	for i := range 5 {
		// Renaming frees the inode in effect, which ext4 hands to the next
		// new file: the temporary file of the next round.
		writeConfig(t, tm.file, pluginsYAML(execPlugin("a", "timeout: 1s", "#"+string(rune('a'+i)))))
		tm.reloadSettled(t.Context())
		writeConfig(t, tm.file, pluginsYAML(execPlugin("b")))
		tm.reloadSettled(t.Context())
		require.Equal(t, []string{"b"}, tm.pluginNames(), "round %d", i)
		writeConfig(t, tm.file, pluginsYAML(execPlugin("a"), execPlugin("b")))
		tm.reloadSettled(t.Context())
		require.Equal(t, []string{"a", "b"}, tm.pluginNames(), "round %d", i)
	}
	assert.Zero(t, reloads(t, reloadFailure))
}

func TestResyncOfAnUnchangedConfigurationReadsNothing(t *testing.T) {
	tm := startedManager(t, pluginsYAML(execPlugin("a")))
	snapshot := &tm.config.snapshot
	// Written just now: its timestamps cannot tell a write in the same
	// tick from none yet.
	assert.False(t, snapshot.unchanged())
	snapshot.takenAt = snapshot.takenAt.Add(racyWindow)
	assert.True(t, snapshot.unchanged())

	before := tm.config
	tm.reload(t.Context())
	assert.Same(t, before, tm.config, "nothing was read")

	// Any change to a file is seen by its stamp.
	require.NoError(t, os.Chmod(tm.file, 0o600))
	assert.False(t, snapshot.unchanged())
	tm.reload(t.Context())
	assert.NotSame(t, before, tm.config, "read again, same content: its new stamp is kept")
	assert.Equal(t, []string{"a"}, tm.pluginNames())
	assert.Zero(t, reloads(t, reloadSuccess))
}

// Case 7 of issue 12: text reaching the API is made plain, errors too: a
// file name or a value quoted in an error may hold anything.
func TestReloadEventsAreSanitized(t *testing.T) {
	tm := startedManager(t, pluginsYAML(execPlugin("a")))
	writeConfig(t, filepath.Join(tm.dir, "20-\x1b[31mred\nline.yaml"), pluginsYAML(execPlugin("b", "timeout: 0s")))
	tm.reload(t.Context())
	event := <-tm.recorder.Events
	assert.Contains(t, event, "/20-red line.yaml: plugins[0].timeout: Invalid value: \"0s\": must be greater than 0",
		"the escape and the line break are gone")
	assert.NotContains(t, event, "\x1b")
	assert.NotContains(t, event, "\n")
}

// At start there is no last good configuration to keep: a file being
// written is a startup error that names it.
func TestNewManagerRefusesAFileOpenForWriting(t *testing.T) {
	dir := configDir(t)
	file := filepath.Join(dir, "10-a.yaml")
	writeConfig(t, file, pluginsYAML(execPlugin("a")))
	writer, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	defer writer.Close()
	_, err = NewManager(Options{ConfigPath: dir, BinDir: "/bin-dir", NodeName: "node-1", newPlugin: newFakeFactory().New})
	require.EqualError(t, err, file+": open for writing by another process; read once it is closed")
}

// Case 18.4: a plugin added in place by a writer that pauses longer than
// the settle window is applied as soon as a prefix of its entry parses;
// the rest of its entry is the same write going on, not an in-place change
// of it, and is applied once it settled.
func TestReloadAppliesTheRestOfAPluginAddedInPlace(t *testing.T) {
	tm := startedManager(t, pluginsYAML(execPlugin("a")))
	appendInPlace := func(content string) {
		f, err := os.OpenFile(tm.file, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = f.WriteString(content)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	appendInPlace(execPlugin("c"))
	tm.reloadSettled(t.Context())
	require.Equal(t, []string{"a", "c"}, tm.pluginNames(), "a prefix that only adds is applied once it settled")

	appendInPlace("  args: [--strict]\n")
	assert.Zero(t, tm.reloadSettled(t.Context()))
	assert.Equal(t, []string{"a", "c"}, tm.pluginNames())
	assert.Equal(t, 2, tm.factory.creations("c"), "c is in effect with its args")
	assert.Equal(t, 1, tm.factory.creations("a"))
	assert.Zero(t, reloads(t, reloadFailure))

	// A new write over it is judged against the content in effect again:
	// its prefix without c is refused.
	rewriteInPlace(t, tm.file, pluginsYAML(execPlugin("a")))
	tm.reloadSettled(t.Context())
	assert.Equal(t, []string{"a", "c"}, tm.pluginNames())
	var last string
	for len(tm.recorder.Events) > 0 {
		last = <-tm.recorder.Events
	}
	assert.Contains(t, last, "Warning PodAdmissionConfigChangedInPlace Refused the changed pod admission configuration; the last good one stays in use: "+
		tm.file+": changed in place in a way that removes or changes its plugins [c]")
}

// Case 18.3: only an atomic writer's symlink swap of a directory written
// before the swap is applied without waiting for the configuration to
// settle; a directory filled after the swap waits like any other change.
func TestReloadAppliesOnlyASymlinkSwapOfAWholeDirectoryAtOnce(t *testing.T) {
	dir := configDir(t)
	swapConfigMapData(t, dir, map[string]string{"10-a.yaml": pluginsYAML(execPlugin("a"))})
	tm := startedManager(t, pluginsYAML(execPlugin("initial")))
	tm.opts.ConfigPath = dir
	tm.reloadSettled(t.Context())
	require.Equal(t, []string{"a"}, tm.pluginNames())

	swapConfigMapData(t, dir, map[string]string{"10-a.yaml": pluginsYAML(execPlugin("a"), execPlugin("b"))})
	assert.Zero(t, tm.reload(t.Context()))
	assert.Equal(t, []string{"a", "b"}, tm.pluginNames(), "applied at once")

	// ..data swapped to a directory the file is written into afterwards,
	// later than the change time granularity (a clock tick).
	empty := filepath.Join(dir, "..late")
	require.NoError(t, os.Mkdir(empty, 0o755))
	require.NoError(t, os.Symlink("..late", filepath.Join(dir, "..data_tmp")))
	require.NoError(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
	time.Sleep(20 * time.Millisecond)
	writeConfigFile(t, filepath.Join(empty, "10-a.yaml"), pluginsYAML(execPlugin("c")))
	assert.Equal(t, settleWindow, tm.reload(t.Context()), "not whole by construction: it waits")
	assert.Equal(t, []string{"a", "b"}, tm.pluginNames())
	tm.clock.Step(settleWindow)
	assert.Zero(t, tm.reload(t.Context()))
	assert.Equal(t, []string{"c"}, tm.pluginNames())
}
