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
)

// restartableManager is startedManager with a state directory: it records
// the configuration it applies, and restart starts it again from there.
func restartableManager(t *testing.T, config string) *testManager {
	t.Helper()
	state := stateDir(t)
	tm := newTestManager(t, config, func(f *fakeFactory, opts *Options) {
		for _, name := range []string{"a", "b", "c", "d"} {
			f.set(name, deny("No", "held by "+name))
		}
		opts.StateDir = state
	})
	tm.runUntilRestart(t)
	return tm
}

// runUntilRestart gives the Manager a runCtx that a restart ends, so that
// it can be stopped without Start.
func (tm *testManager) runUntilRestart(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	tm.runCtx, tm.cancelRun = ctx, cancel
}

// restart stops the Manager and creates a new one with the same options
// and state directory, as a kubelet restart (or a reboot) does.
func (tm *testManager) restart(t *testing.T) {
	t.Helper()
	require.NoError(t, tm.tryRestart(t))
}

// tryRestart is restart, unless the new Manager cannot be created (the
// kubelet would not start): then the Manager in use runs on.
func (tm *testManager) tryRestart(t *testing.T) error {
	m, err := NewManager(tm.opts)
	if err != nil {
		return err
	}
	if tm.cancelRun != nil {
		tm.cancelRun()
	}
	tm.Manager.Stop()
	t.Cleanup(m.Stop)
	tm.Manager = m
	tm.runUntilRestart(t)
	return nil
}

// pluginArgs maps the name of every plugin in use to its args.
func (tm *testManager) pluginArgs() map[string][]string {
	args := map[string][]string{}
	for _, p := range tm.chain.Load().Plugins() {
		args[p.Name] = p.Args
	}
	return args
}

var restricted = []string{"--level=restricted"}

// Case 4 of issue 18: a kubelet restarted, or a node that lost power,
// while a file was rewritten in place finds a prefix of it; it starts with
// the plugins as last applied, reports it, and does not repeat the report
// at the next reload.
func TestRestartMidWriteStartsWithThePluginsLastApplied(t *testing.T) {
	for name, tc := range map[string]struct {
		cut  string
		lost string
	}{
		"a plugin missing":          {cut: pluginsYAML(execPlugin("a")), lost: "[b]"},
		"a field missing":           {cut: pluginsYAML(execPlugin("a"), execPlugin("b")), lost: "[b]"},
		"another plugin written":    {cut: pluginsYAML(execPlugin("c")), lost: "[a, b]"},
		"every plugin but the last": {cut: pluginsYAML(execPlugin("a"), execPlugin("b", "args:")), lost: "[b]"},
	} {
		t.Run(name, func(t *testing.T) {
			tm := restartableManager(t, pluginsYAML(execPlugin("a"), execPlugin("b", "args: [--level=restricted]")))
			rewriteInPlace(t, tm.file, tc.cut)

			logs := captureLogs(t)
			tm.restart(t)
			args := tm.pluginArgs()
			require.Contains(t, args, "a")
			require.Contains(t, args, "b")
			assert.Equal(t, restricted, args["b"], "b with its last fields, as last applied")
			assert.Contains(t, logs.String(), "A pod admission configuration file was changed in place in a way that removes or changes its plugins while the kubelet was not running")
			assert.Contains(t, logs.String(), `file="`+tm.file+`"`)
			assert.Contains(t, logs.String(), "lostPlugins=")
			assert.Contains(t, tm.nextEvent(t), "Warning PodAdmissionConfigChangedInPlace Started with the pod admission plugins last applied from a file changed in place while the kubelet was not running: "+
				tm.file+": changed in place in a way that removes or changes its plugins "+tc.lost)
			assert.Equal(t, 1.0, reloads(t, reloadFailure), "counted as a refused reload")
			assert.True(t, heldBy(t, tm, testPod("new")))

			tm.clock.Step(time.Hour)
			tm.reloadSettled(t.Context())
			assert.Equal(t, restricted, tm.pluginArgs()["b"], "the reload loop goes on from what was kept")
			assert.Equal(t, 1.0, reloads(t, reloadFailure), "reported once")
			assert.Empty(t, tm.recorder.Events)
		})
	}
}

// The plugins a cut file adds are loaded too: only what it loses is taken
// from the record.
func TestRestartLoadsThePluginsAddedOnDisk(t *testing.T) {
	tm := restartableManager(t, pluginsYAML(execPlugin("a"), execPlugin("b", "args: [--level=restricted]")))
	rewriteInPlace(t, tm.file, pluginsYAML(execPlugin("a"), execPlugin("c"), execPlugin("b")))
	tm.restart(t)
	assert.Equal(t, []string{"a", "b", "c"}, tm.pluginNames(), "as last applied, then what the file adds")
	assert.Equal(t, restricted, tm.pluginArgs()["b"])

	// A change in place that only adds plugins is taken as it is.
	rewriteInPlace(t, tm.file, pluginsYAML(execPlugin("d"), execPlugin("a"), execPlugin("b", "args: [--level=restricted]"), execPlugin("c")))
	tm.restart(t)
	assert.Equal(t, []string{"d", "a", "b", "c"}, tm.pluginNames())
	assert.Equal(t, 1.0, reloads(t, reloadFailure), "only the cut file was reported")
}

// The writer goes on after the restart: its completion, the content read
// at start and more, is applied once it settled.
func TestRestartMidWriteThenTheWriteCompletes(t *testing.T) {
	bWithArgs := execPlugin("b", "args:", "- --level=restricted")
	tm := restartableManager(t, pluginsYAML(execPlugin("a"), bWithArgs))
	complete := pluginsYAML(execPlugin("a"), bWithArgs, execPlugin("c", "args: [--x]"))
	// Cut in the middle of b's args: b reads with args [--level=].
	cut := strings.Index(complete, "restricted")
	rewriteInPlace(t, tm.file, complete[:cut])
	tm.restart(t)
	require.Equal(t, []string{"a", "b"}, tm.pluginNames())
	require.Equal(t, restricted, tm.pluginArgs()["b"])

	f, err := os.OpenFile(tm.file, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(complete[cut:])
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Equal(t, settleWindow, tm.reload(t.Context()), "applied once it settled")
	assert.Equal(t, []string{"a", "b"}, tm.pluginNames())
	tm.clock.Step(settleWindow)
	assert.Zero(t, tm.reload(t.Context()))
	assert.Equal(t, map[string][]string{"a": nil, "b": restricted, "c": {"--x"}}, tm.pluginArgs())

	tm.restart(t)
	assert.Equal(t, map[string][]string{"a": nil, "b": restricted, "c": {"--x"}}, tm.pluginArgs(), "recorded as applied")
	assert.Equal(t, 1.0, reloads(t, reloadFailure))
}

// A removal made in place is refused as without a restart, and stays so
// across restarts; renamed into place, it is applied.
func TestInPlaceRemovalStaysRefusedAfterARestart(t *testing.T) {
	tm := restartableManager(t, pluginsYAML(execPlugin("a"), execPlugin("b")))
	rewriteInPlace(t, tm.file, pluginsYAML(execPlugin("a")))
	tm.reloadSettled(t.Context())
	require.Equal(t, []string{"a", "b"}, tm.pluginNames(), "refused")

	for i := range 2 {
		tm.restart(t)
		assert.Equal(t, []string{"a", "b"}, tm.pluginNames(), "restart %d", i)
		tm.clock.Step(time.Hour)
		tm.reloadSettled(t.Context())
		assert.Equal(t, []string{"a", "b"}, tm.pluginNames(), "reloaded after restart %d", i)
		assert.True(t, heldBy(t, tm, podHeldBy("b", "after-restart")))
	}
	// A new write in place over it that drops b is refused too.
	rewriteInPlace(t, tm.file, pluginsYAML(execPlugin("c")))
	tm.reloadSettled(t.Context())
	assert.Equal(t, []string{"a", "b"}, tm.pluginNames())

	writeConfig(t, tm.file, pluginsYAML(execPlugin("a")))
	tm.reloadSettled(t.Context())
	assert.Equal(t, []string{"a"}, tm.pluginNames(), "renamed into place")
	tm.restart(t)
	assert.Equal(t, []string{"a"}, tm.pluginNames())
}

// A file renamed into place while the kubelet was down is a new inode,
// whole: applied at start as it is, and recorded, so that a cut of it
// after the next restart is recognised.
func TestRenamedIntoPlaceWhileDownIsAppliedAtStart(t *testing.T) {
	tm := restartableManager(t, pluginsYAML(execPlugin("a"), execPlugin("b")))
	writeConfig(t, tm.file, pluginsYAML(execPlugin("a"), execPlugin("c")))
	tm.restart(t)
	assert.Equal(t, []string{"a", "c"}, tm.pluginNames())
	assert.Empty(t, tm.recorder.Events)

	rewriteInPlace(t, tm.file, pluginsYAML(execPlugin("a")))
	tm.restart(t)
	assert.Equal(t, []string{"a", "c"}, tm.pluginNames(), "judged against the renamed file")
}

// A recorded file that is gone at start keeps its plugins until a reload
// found it gone for the settle window, as a deletion on reload does.
func TestRestartKeepsAGoneFilesPluginsUntilItsRemovalSettled(t *testing.T) {
	tm := restartableManager(t, pluginsYAML(execPlugin("a")))
	second := filepath.Join(tm.dir, "20-b.yaml")
	writeConfig(t, second, pluginsYAML(execPlugin("b")))
	tm.reloadSettled(t.Context())
	require.Equal(t, []string{"a", "b"}, tm.pluginNames())

	require.NoError(t, os.Remove(second))
	logs := captureLogs(t)
	tm.restart(t)
	assert.Equal(t, []string{"a", "b"}, tm.pluginNames())
	assert.Contains(t, logs.String(), "A pod admission configuration file last applied is gone")
	assert.Contains(t, logs.String(), second)
	assert.Equal(t, settleWindow, tm.reload(t.Context()))
	assert.Equal(t, []string{"a", "b"}, tm.pluginNames())
	tm.clock.Step(settleWindow)
	assert.Zero(t, tm.reload(t.Context()))
	assert.Equal(t, []string{"a"}, tm.pluginNames())
	tm.restart(t)
	assert.Equal(t, []string{"a"}, tm.pluginNames())
}

// A plugin moved from one file to another in place while the kubelet was
// down: the cut file keeps it as last applied, the other file's copy is
// left out, and the kubelet starts.
func TestRestartKeepsAPluginMovedInPlaceWhereItWas(t *testing.T) {
	tm := restartableManager(t, pluginsYAML(execPlugin("a"), execPlugin("b", "args: [--level=restricted]")))
	second := filepath.Join(tm.dir, "20-c.yaml")
	writeConfig(t, second, pluginsYAML(execPlugin("c")))
	tm.reloadSettled(t.Context())

	rewriteInPlace(t, tm.file, pluginsYAML(execPlugin("a")))
	rewriteInPlace(t, second, pluginsYAML(execPlugin("c"), execPlugin("b")))
	tm.restart(t)
	assert.Equal(t, []string{"a", "b", "c"}, tm.pluginNames())
	assert.Equal(t, restricted, tm.pluginArgs()["b"])
	for _, p := range tm.chain.Load().Plugins() {
		if p.Name == "b" {
			assert.Equal(t, tm.file, p.File)
		}
	}
}

// A record the kubelet cannot use is logged, naming the file and the
// fault, and left out: the files are taken as they are, and the record is
// written anew.
func TestUnusableConfigRecordIsIgnored(t *testing.T) {
	for name, tc := range map[string]struct {
		content string
		mode    os.FileMode
		wantLog string
	}{
		"not JSON":          {content: "\x00\x01garbage", wantLog: "invalid character"},
		"truncated":         {content: `{"data":"{\"path\":\"/etc`, wantLog: "unexpected end of JSON input"},
		"checksum mismatch": {content: `{"data":"{\"path\":\"x\",\"files\":[]}","checksum":1}`, wantLog: "checkpoint is corrupted"},
		"unknown data":      {content: checkpointOf(t, `{"path":"x","files":[],"extra":1}`), wantLog: `data: unknown field \"extra\"`},
		"another path":      {content: checkpointOf(t, `{"path":"/elsewhere","files":[]}`), wantLog: `a record of the configuration at \"/elsewhere\"`},
		"untrusted":         {mode: 0o666, wantLog: "writable"},
	} {
		t.Run(name, func(t *testing.T) {
			tm := restartableManager(t, pluginsYAML(execPlugin("a"), execPlugin("b")))
			record := filepath.Join(tm.opts.StateDir, ConfigRecordName)
			if tc.content != "" {
				require.NoError(t, os.WriteFile(record, []byte(tc.content), 0o600))
			}
			if tc.mode != 0 {
				require.NoError(t, os.Chmod(record, tc.mode))
			}
			rewriteInPlace(t, tm.file, pluginsYAML(execPlugin("a")))

			logs := captureLogs(t)
			tm.restart(t)
			assert.Contains(t, logs.String(), "Pod admission cannot use its record of the configuration last applied")
			assert.Contains(t, logs.String(), record)
			assert.Contains(t, logs.String(), tc.wantLog)
			assert.Equal(t, []string{"a"}, tm.pluginNames(), "taken as it is, as without a record")

			require.NoError(t, os.Chmod(record, 0o600))
			files, err := newConfigRecord(openState(t, tm.opts.StateDir)).load(tm.dir)
			require.NoError(t, err, "written anew")
			require.Len(t, files, 1)
			assert.Equal(t, pluginsYAML(execPlugin("a")), string(files[0].data))
		})
	}
	t.Run("an invalid plugin", func(t *testing.T) {
		tm := restartableManager(t, pluginsYAML(execPlugin("a")))
		record := filepath.Join(tm.opts.StateDir, ConfigRecordName)
		require.NoError(t, os.WriteFile(record, []byte(checkpointOf(t,
			`{"path":"`+tm.dir+`","files":[{"path":"`+tm.file+`","ino":1,"btime":0,"data":"","plugins":[{"index":0,"config":{"name":"","type":"Exec"}}],"base":[]}]}`)), 0o600))
		logs := captureLogs(t)
		tm.restart(t)
		assert.Contains(t, logs.String(), "files[0].plugins[0].config.name: Required value")
		assert.Equal(t, []string{"a"}, tm.pluginNames())
	})
}

// Without a state directory nothing is recorded and the files are taken
// as they are at start, as before the record existed.
func TestWithoutAStateDirAFileIsTakenAsItIsAtStart(t *testing.T) {
	tm := startedManager(t, pluginsYAML(execPlugin("a"), execPlugin("b")))
	tm.runUntilRestart(t)
	require.Empty(t, tm.opts.StateDir)
	rewriteInPlace(t, tm.file, pluginsYAML(execPlugin("a")))
	tm.restart(t)
	assert.Equal(t, []string{"a"}, tm.pluginNames())
	assert.Nil(t, tm.record)
	assert.Empty(t, tm.recorder.Events)
}
