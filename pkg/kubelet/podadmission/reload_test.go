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
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/utils/clock"
)

// These tests run the real watch loop on the real clock and file system.

const reloadWait = 10 * time.Second

// startWatchedManager starts a manager on the real clock, so that file
// system events reload it.
func startWatchedManager(t *testing.T, config string, setup func(*fakeFactory, *Options)) *testManager {
	t.Helper()
	tm := newTestManager(t, config, func(f *fakeFactory, opts *Options) {
		opts.Clock = clock.RealClock{}
		if setup != nil {
			setup(f, opts)
		}
	})
	tm.Start(t.Context())
	return tm
}

func reloads(t *testing.T, result string) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(configReloadsTotal.WithLabelValues(result))
	require.NoError(t, err)
	return v
}

func (tm *testManager) pluginNames() []string {
	var names []string
	for _, p := range tm.chain.Load().plugins {
		names = append(names, p.name())
	}
	return names
}

func (tm *testManager) waitForPlugins(t *testing.T, names ...string) {
	t.Helper()
	require.Eventually(t, func() bool { return assert.ObjectsAreEqual(names, tm.pluginNames()) }, reloadWait, 10*time.Millisecond,
		"plugins never became %v", names)
}

func (tm *testManager) nextEvent(t *testing.T) string {
	t.Helper()
	select {
	case e := <-tm.recorder.Events:
		return e
	case <-time.After(reloadWait):
		require.FailNow(t, "no event recorded")
		return ""
	}
}

func TestReloadGoodBadGood(t *testing.T) {
	tm := startWatchedManager(t, pluginsYAML(execPlugin("a")), func(f *fakeFactory, _ *Options) {
		f.set("a", deny("No", "not yet"))
	})
	pod := testPod("web")
	admitted, _, _, _ := tm.admit(pod)
	require.False(t, admitted)

	writeConfig(t, tm.file, pluginsYAML(execPlugin("b", "timeout: 0s")))
	assert.Equal(t, "Warning PodAdmissionConfigInvalid Refused the changed pod admission configuration; the last good one stays in use: "+
		tm.file+`: plugins[0].timeout: Invalid value: "0s": must be greater than 0`, tm.nextEvent(t))
	assert.Equal(t, 1.0, reloads(t, reloadFailure))
	assert.Equal(t, 0.0, reloads(t, reloadSuccess))
	assert.Equal(t, []string{"a"}, tm.pluginNames(), "the last good configuration stays in use")
	assert.False(t, tm.factory.plugin(t, "a").isClosed())
	assert.False(t, tm.due(pod))

	writeConfig(t, tm.file, pluginsYAML(execPlugin("b")))
	assert.Equal(t, "Normal PodAdmissionConfigReloaded Pod admission configuration reloaded: 1 plugins [b]", tm.nextEvent(t))
	tm.waitForPlugins(t, "b")
	assert.Equal(t, 1.0, reloads(t, reloadSuccess))
	assert.True(t, tm.due(pod), "blocked pods are evaluated again after a reload")
	admitted, _, _, _ = tm.admit(pod)
	assert.True(t, admitted)
	assert.Eventually(t, tm.factory.plugin(t, "a").isClosed, reloadWait, time.Millisecond, "the removed plugin is closed")
}

func TestReloadKeepsUnchangedPlugins(t *testing.T) {
	tm := startWatchedManager(t, pluginsYAML(execPlugin("same"), execPlugin("changed")), nil)
	same, changed := tm.factory.plugin(t, "same"), tm.factory.plugin(t, "changed")

	writeConfig(t, tm.file, pluginsYAML(execPlugin("added"), execPlugin("same"), execPlugin("changed", "timeout: 2s")))
	tm.waitForPlugins(t, "added", "same", "changed")
	assert.Equal(t, 1, tm.factory.creations("same"))
	assert.Equal(t, 2, tm.factory.creations("changed"))
	assert.Equal(t, 1, tm.factory.creations("added"))
	assert.Eventually(t, changed.isClosed, reloadWait, time.Millisecond)
	assert.False(t, same.isClosed())
	assert.False(t, tm.factory.plugin(t, "changed").isClosed())
}

func TestReloadOnFilesWrittenInPlaceAddedAndRemoved(t *testing.T) {
	tm := startWatchedManager(t, pluginsYAML(execPlugin("a")), nil)

	second := filepath.Join(tm.dir, "20-second.yaml")
	writeConfigFile(t, second, pluginsYAML(execPlugin("b")))
	tm.waitForPlugins(t, "a", "b")

	// In place, adding a plugin: applied.
	writeConfigFile(t, tm.file, pluginsYAML(execPlugin("a"), execPlugin("a2")))
	tm.waitForPlugins(t, "a", "a2", "b")

	// Removed: applied once it stays removed for the settle window.
	removed := time.Now()
	require.NoError(t, os.Remove(second))
	tm.waitForPlugins(t, "a", "a2")
	assert.GreaterOrEqual(t, time.Since(removed), settleWindow, "a removal waits for the settle window")
	// The reload is counted just after its plugins are swapped in.
	assert.Eventually(t, func() bool { return reloads(t, reloadSuccess) == 3 }, reloadWait, time.Millisecond,
		"three reloads counted, got %v", reloads(t, reloadSuccess))
}

// swapConfigMapData writes files the way the kubelet updates a ConfigMap
// volume: into a new hidden directory, then an atomic rename of the ..data
// symlink to it; the visible names are symlinks through ..data.
func swapConfigMapData(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	data := fmt.Sprintf("..%d", time.Now().UnixNano())
	require.NoError(t, os.Mkdir(filepath.Join(dir, data), 0o755))
	for name, content := range files {
		writeConfigFile(t, filepath.Join(dir, data, name), content)
	}
	require.NoError(t, os.Symlink(data, filepath.Join(dir, "..data_tmp")))
	require.NoError(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
	for name := range files {
		link := filepath.Join(dir, name)
		if _, err := os.Lstat(link); os.IsNotExist(err) {
			require.NoError(t, os.Symlink(filepath.Join("..data", name), link))
		}
	}
}

func TestReloadConfigMapDirectory(t *testing.T) {
	tm := startWatchedManager(t, pluginsYAML(execPlugin("initial")), func(_ *fakeFactory, opts *Options) {
		dir := configDir(t)
		swapConfigMapData(t, dir, map[string]string{"10-a.yaml": pluginsYAML(execPlugin("a"))})
		opts.ConfigPath = dir
	})
	tm.waitForPlugins(t, "a")

	dir := tm.opts.ConfigPath
	swapConfigMapData(t, dir, map[string]string{"10-a.yaml": pluginsYAML(execPlugin("a"), execPlugin("b"))})
	tm.waitForPluginsWithin(t, pickUpWithin, "a", "b")
}

func TestReloadConfigMapFile(t *testing.T) {
	tm := startWatchedManager(t, pluginsYAML(execPlugin("initial")), func(_ *fakeFactory, opts *Options) {
		dir := configDir(t)
		swapConfigMapData(t, dir, map[string]string{"config.yaml": pluginsYAML(execPlugin("a"))})
		opts.ConfigPath = filepath.Join(dir, "config.yaml")
	})
	tm.waitForPlugins(t, "a")

	swapConfigMapData(t, filepath.Dir(tm.opts.ConfigPath), map[string]string{"config.yaml": pluginsYAML(execPlugin("b"))})
	tm.waitForPluginsWithin(t, pickUpWithin, "b")
}

func TestReloadSingleFileRenamedIntoPlace(t *testing.T) {
	tm := startWatchedManager(t, pluginsYAML(execPlugin("initial")), func(_ *fakeFactory, opts *Options) {
		opts.ConfigPath = filepath.Join(configDir(t), "pod-admission.yaml")
		writeConfig(t, opts.ConfigPath, pluginsYAML(execPlugin("a")))
	})
	tm.waitForPlugins(t, "a")

	// Twice: the first rename replaces the inode a file watch would follow.
	writeConfig(t, tm.opts.ConfigPath, pluginsYAML(execPlugin("b")))
	tm.waitForPlugins(t, "b")
	writeConfig(t, tm.opts.ConfigPath, pluginsYAML(execPlugin("c")))
	tm.waitForPlugins(t, "c")
	// Unrelated files next to the configuration change nothing.
	writeConfigFile(t, filepath.Join(filepath.Dir(tm.opts.ConfigPath), "other.yaml"), "not configuration")
	time.Sleep(3 * reloadDebounce)
	assert.Equal(t, []string{"c"}, tm.pluginNames())
	assert.Equal(t, 2.0, reloads(t, reloadSuccess))
	assert.Equal(t, 0.0, reloads(t, reloadFailure))
}

func TestReloadRefusesUntrustedConfiguration(t *testing.T) {
	tm := startWatchedManager(t, pluginsYAML(execPlugin("a")), nil)
	second := filepath.Join(tm.dir, "20-b.yaml")
	writeConfigFile(t, second, pluginsYAML(execPlugin("b")))
	tm.waitForPlugins(t, "a", "b")
	assert.Equal(t, "Normal PodAdmissionConfigReloaded Pod admission configuration reloaded: 2 plugins [a, b]", tm.nextEvent(t))

	require.NoError(t, os.Chmod(second, 0o666))
	assert.Equal(t, "Warning PodAdmissionConfigInvalid Refused the changed pod admission configuration; the last good one stays in use: "+
		second+": mode 0666 is group or world writable", tm.nextEvent(t))
	assert.Equal(t, []string{"a", "b"}, tm.pluginNames())

	require.NoError(t, os.Chown(second, 1000, 1000))
	require.NoError(t, os.Chmod(second, 0o644))
	assert.Equal(t, "Warning PodAdmissionConfigInvalid Refused the changed pod admission configuration; the last good one stays in use: "+
		second+": owned by uid 1000, must be owned by root", tm.nextEvent(t))
	assert.Equal(t, []string{"a", "b"}, tm.pluginNames())
	assert.Equal(t, 2.0, reloads(t, reloadFailure))
}

func TestReloadReportsEachErrorOnce(t *testing.T) {
	tm := newTestManager(t, pluginsYAML(execPlugin("a")), nil)
	tm.runCtx = t.Context()
	writeConfig(t, tm.file, pluginsYAML(execPlugin("a", "failurePolicy: Never")))
	for range 3 {
		tm.reload(t.Context())
	}
	assert.Equal(t, 1.0, reloads(t, reloadFailure))
	assert.Len(t, tm.recorder.Events, 1)

	writeConfig(t, tm.file, pluginsYAML(execPlugin("a", "rejectionMode: Never")))
	tm.reload(t.Context())
	assert.Equal(t, 2.0, reloads(t, reloadFailure), "a different error is reported")

	// Back to the configuration in use: nothing to do, and the next error
	// is news again.
	writeConfig(t, tm.file, pluginsYAML(execPlugin("a")))
	tm.reload(t.Context())
	assert.Equal(t, 0.0, reloads(t, reloadSuccess))
	writeConfig(t, tm.file, pluginsYAML(execPlugin("a", "rejectionMode: Never")))
	tm.reload(t.Context())
	assert.Equal(t, 3.0, reloads(t, reloadFailure))
}

func TestReloadFailsWhenAPluginCannotBeCreated(t *testing.T) {
	tm := newTestManager(t, pluginsYAML(execPlugin("a")), nil)
	tm.runCtx = t.Context()
	tm.factory.fail["c"] = fmt.Errorf("cannot create")
	writeConfig(t, tm.file, pluginsYAML(execPlugin("a"), execPlugin("b"), execPlugin("c")))
	tm.reloadSettled(t.Context())
	assert.Equal(t, []string{"a"}, tm.pluginNames())
	assert.Equal(t, "Warning PodAdmissionConfigInvalid Refused the changed pod admission configuration; the last good one stays in use: "+
		tm.file+`: plugins[2]: plugin "c": cannot create`, <-tm.recorder.Events)
	assert.True(t, tm.factory.plugin(t, "b").isClosed(), "plugins created for the refused configuration are closed")
	assert.False(t, tm.factory.plugin(t, "a").isClosed())
}

// pickUpWithin is how soon a configuration swapped in through a symlink is
// in use, and how soon after the settle window any other change is.
const pickUpWithin = 2 * time.Second

func (tm *testManager) waitForPluginsWithin(t *testing.T, within time.Duration, names ...string) {
	t.Helper()
	start := time.Now()
	tm.waitForPlugins(t, names...)
	assert.Less(t, time.Since(start), within, "plugins %v in use only after %s", names, time.Since(start))
}

// Case 6 of issue 12: the watch was lost when the configuration directory
// was replaced by a rename, until the next resync a minute later. Case 18.3:
// a directory renamed into place may be filled after the rename, so it is
// applied once it settled, like any change that is not a symlink swap.
func TestReloadConfigDirectoryReplacedByRename(t *testing.T) {
	tm := startWatchedManager(t, pluginsYAML(execPlugin("a")), nil)
	next := tm.dir + ".next"
	require.NoError(t, os.Mkdir(next, 0o755))
	writeConfigFile(t, filepath.Join(next, "20-other.yaml"), pluginsYAML(execPlugin("b")))

	settled := func(names ...string) {
		t.Helper()
		changed := time.Now()
		tm.waitForPluginsWithin(t, settleWindow+pickUpWithin, names...)
		assert.GreaterOrEqual(t, time.Since(changed), settleWindow, "%v applied before the change settled", names)
	}
	require.NoError(t, unix.Renameat2(unix.AT_FDCWD, next, unix.AT_FDCWD, tm.dir, unix.RENAME_EXCHANGE))
	settled("b")
	// And back: the directory now in place is watched too.
	require.NoError(t, unix.Renameat2(unix.AT_FDCWD, next, unix.AT_FDCWD, tm.dir, unix.RENAME_EXCHANGE))
	settled("a")
	writeConfigFile(t, filepath.Join(tm.dir, "30-more.yaml"), pluginsYAML(execPlugin("c")))
	settled("a", "c")
}

// The configured directory is a symlink an atomic writer swaps (a new
// directory, then a rename of a new symlink over the old one).
func TestReloadConfigDirectorySymlinkSwap(t *testing.T) {
	var root string
	version := func(name string, plugin string) {
		require.NoError(t, os.Mkdir(filepath.Join(root, name), 0o755))
		writeConfigFile(t, filepath.Join(root, name, "10-p.yaml"), pluginsYAML(execPlugin(plugin)))
	}
	swap := func(target string) {
		require.NoError(t, os.Symlink(target, filepath.Join(root, "current.tmp")))
		require.NoError(t, os.Rename(filepath.Join(root, "current.tmp"), filepath.Join(root, "current")))
	}
	tm := startWatchedManager(t, pluginsYAML(execPlugin("initial")), func(_ *fakeFactory, opts *Options) {
		root = configDir(t)
		version("..v1", "a")
		swap("..v1")
		opts.ConfigPath = filepath.Join(root, "current")
	})
	tm.waitForPlugins(t, "a")

	for i, plugin := range []string{"b", "c", "d"} {
		name := fmt.Sprintf("..v%d", i+2)
		version(name, plugin)
		swap(name)
		tm.waitForPluginsWithin(t, pickUpWithin, plugin)
	}
}
