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
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podadmission/podadmission/pkg/apis/config/scheme"
	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
)

// startTest is a configuration directory and a state directory that
// kubelets start on, one after the other.
type startTest struct {
	dir, state string
	// complete is the configuration whose plugins hold their pods
	// (completeOnlyFactory); a plugin configured otherwise admits all.
	complete map[string]configv1alpha1.PluginConfig
}

func newStartTest(t *testing.T, files ...configFile) *startTest {
	t.Helper()
	st := &startTest{dir: configDir(t), state: stateDir(t), complete: pluginsOf(t, files)}
	for _, f := range files {
		writeConfig(t, filepath.Join(st.dir, f.name), f.content)
	}
	_, err := st.start(t, st.state)
	require.NoError(t, err, "the first start")
	return st
}

// start creates a Manager on state the way the kubelet does at start, and
// runs the reload Start runs first. The Manager is stopped when t ends.
func (st *startTest) start(t *testing.T, state string) (*testManager, error) {
	t.Helper()
	resetMetrics()
	fc := clocktesting.NewFakeClock(testStart)
	recorder := record.NewFakeRecorder(100)
	m, err := NewManager(Options{
		ConfigPath: st.dir, BinDir: "/usr/libexec/kubernetes/pod-admission", NodeName: "node-1",
		StateDir: state, Clock: fc, Recorder: recorder,
		newPlugin: (&completeOnlyFactory{complete: st.complete}).New,
	})
	if err != nil {
		return nil, err
	}
	t.Cleanup(m.Stop)
	// Stop ends what the plugins started, as after Start.
	m.runCtx, m.cancel = context.WithCancel(t.Context())
	tm := &testManager{Manager: m, clock: fc, recorder: recorder, dir: st.dir}
	tm.reload(t.Context())
	return tm, nil
}

// restartCopy starts a Manager on a copy of the state directory, so that
// what it records is lost with it.
func (st *startTest) restartCopy(t *testing.T) (*testManager, error) {
	t.Helper()
	return st.start(t, copyState(t, st.state))
}

func copyState(t *testing.T, state string) string {
	t.Helper()
	dir := stateDir(t)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	entries, err := os.ReadDir(state)
	require.NoError(t, err)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(state, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), data, 0o600))
	}
	return dir
}

// requireHolding asserts that every plugin of the complete configuration
// holds a new pod: it is in effect as it was applied.
func (st *startTest) requireHolding(t *testing.T, tm *testManager, when string) {
	t.Helper()
	for name := range st.complete {
		require.True(t, heldBy(t, tm, podHeldBy(name, "new")), "%s does not hold its pods %s", name, when)
	}
}

// twoPlugins is a file whose second plugin, b, is configured by its last
// line: a prefix that parses lists a without b, or b without its args.
var twoPlugins = configFile{"10-test.yaml", pluginsYAML(execPlugin("a"), execPlugin("b", "args: [--level=restricted]"))}

// Issue 18 case 4: a power loss in the middle of a write leaves a prefix of
// the file, which a restarted kubelet read as a configuration with fewer
// plugins and applied. Cut at every byte, written in place (the same
// inode) or into a new file (unlinked and written again), the prefix never
// takes effect at the next start: it does not parse (a startup error
// naming the file), or the configuration last applied stays in use, also
// after the settle window, until the file changes again.
func TestPowerLossMidWriteNeverAppliesAPrefixAtStart(t *testing.T) {
	for name, cut := range map[string]func(t *testing.T, file, content string){
		"written in place": rewriteInPlaceT,
		"unlinked and written again": func(t *testing.T, file, content string) {
			require.NoError(t, os.Remove(file))
			writeConfigFile(t, file, content)
		},
	} {
		t.Run(name, func(t *testing.T) {
			st := newStartTest(t, twoPlugins)
			file := filepath.Join(st.dir, twoPlugins.name)
			refused := 0
			for n := range len(twoPlugins.content) {
				cut(t, file, twoPlugins.content[:n])
				tm, err := st.restartCopy(t)
				if err != nil {
					require.ErrorContains(t, err, file, "a prefix that does not parse is a startup error naming the file")
					continue
				}
				refused++
				st.requireHolding(t, tm, fmt.Sprintf("after a start on its first %d bytes", n))
				tm.clock.Step(time.Hour)
				tm.reload(t.Context())
				tm.clock.Step(time.Hour)
				tm.reload(t.Context())
				st.requireHolding(t, tm, fmt.Sprintf("an hour after a start on its first %d bytes", n))
				if prefix, err := scheme.Decode([]byte(twoPlugins.content[:n])); err != nil || len(prefix.Plugins) < 2 || len(prefix.Plugins[1].Args) == 0 {
					assert.Equal(t, 1.0, reloads(t, reloadFailure), "refused and reported once, at %d bytes", n)
				}
			}
			require.Positive(t, refused, "some prefixes parse")

			cut(t, file, twoPlugins.content)
			tm, err := st.restartCopy(t)
			require.NoError(t, err)
			st.requireHolding(t, tm, "once the file is whole")
		})
	}
}

func rewriteInPlaceT(t *testing.T, file, content string) { rewriteInPlace(t, file, content) }

// An operator who removes plugins while the kubelet is down gets them
// removed: a file replaced whole once it stayed unchanged for the settle
// window; one that could be a write cut short (now a prefix of what was
// applied, or removed) once it is touched, as the event says, and settled.
func TestRestartAppliesADeliberateRemovalOfPlugins(t *testing.T) {
	a, b := execPlugin("a"), execPlugin("b", "args: [--level=restricted]")
	for name, tc := range map[string]struct {
		before []configFile
		// change is made while the kubelet is down; touch is what the
		// operator touches, when the change is refused.
		change func(t *testing.T, dir string)
		touch  string
		kept   []string
		event  string
	}{
		"a file replaced whole": {
			before: []configFile{{"10-test.yaml", pluginsYAML(a, b)}},
			change: func(t *testing.T, dir string) { writeConfig(t, filepath.Join(dir, "10-test.yaml"), pluginsYAML(b)) },
			kept:   []string{"b"},
			event: "Normal PodAdmissionConfigSettling The pod admission configuration on disk removes or changes plugins [a] of the one last applied; " +
				"that stays in use until the change stayed unchanged for 5s",
		},
		"the last plugin of a file removed": {
			before: []configFile{{"10-test.yaml", pluginsYAML(a, b)}},
			change: func(t *testing.T, dir string) { writeConfig(t, filepath.Join(dir, "10-test.yaml"), pluginsYAML(a)) },
			touch:  "10-test.yaml",
			kept:   []string{"a"},
			event: "Warning PodAdmissionConfigMayBeCutShort Refused the changed pod admission configuration; the last good one stays in use: " +
				"DIR/10-test.yaml: the first 120 of the 172 bytes last applied, without its plugins [b]: this may be a write cut short by a power loss " +
				"or a kubelet restart, so it is not applied and the configuration last applied (recorded in STATE/applied_configuration_state) stays in use. " +
				"To apply it, write it again, renaming complete files into place, or, if it is complete as it is, touch DIR/10-test.yaml: it is then " +
				"applied once it stayed unchanged for 5s",
		},
		"a file removed": {
			before: []configFile{{"10-a.yaml", pluginsYAML(a)}, {"20-b.yaml", pluginsYAML(b)}},
			change: func(t *testing.T, dir string) { require.NoError(t, os.Remove(filepath.Join(dir, "20-b.yaml"))) },
			touch:  ".",
			kept:   []string{"a"},
			event: "Warning PodAdmissionConfigMayBeCutShort Refused the changed pod admission configuration; the last good one stays in use: " +
				"DIR/20-b.yaml: removed since it was last applied, with its plugins [b]: this may be a write cut short by a power loss " +
				"or a kubelet restart, so it is not applied and the configuration last applied (recorded in STATE/applied_configuration_state) stays in use. " +
				"To apply it, write it again, renaming complete files into place, or, if it is complete as it is, touch DIR: it is then " +
				"applied once it stayed unchanged for 5s",
		},
	} {
		t.Run(name, func(t *testing.T) {
			st := newStartTest(t, tc.before...)
			tc.change(t, st.dir)
			tm, err := st.start(t, st.state)
			require.NoError(t, err)
			event := strings.NewReplacer("DIR", st.dir, "STATE", st.state).Replace(tc.event)
			assert.Equal(t, event, tm.nextEvent(t))
			st.requireHolding(t, tm, "at start")

			if tc.touch != "" {
				tm.clock.Step(time.Hour)
				tm.reload(t.Context())
				st.requireHolding(t, tm, "an hour after the start")
				assert.Equal(t, 1.0, reloads(t, reloadFailure))
				now := time.Now()
				require.NoError(t, os.Chtimes(filepath.Join(st.dir, tc.touch), now, now))
			}
			tm.reload(t.Context())
			st.requireHolding(t, tm, "before the change settled")
			tm.clock.Step(settleWindow)
			tm.reload(t.Context())
			assert.ElementsMatch(t, tc.kept, tm.pluginNames(), "applied once it settled")

			// Recorded: the next start applies it at once.
			tm, err = st.restartCopy(t)
			require.NoError(t, err)
			assert.ElementsMatch(t, tc.kept, tm.pluginNames())
		})
	}
}

// The record is what keeps a write cut short from being applied: one that
// cannot be trusted or decoded, or that holds no valid configuration, is a
// startup error that names it and says how to go on, never a crash, and
// never a start from the configuration on disk.
func TestUnusableRecordOfTheAppliedConfigurationIsAStartupError(t *testing.T) {
	valid := func(data string) string { return "VALID" + data }
	for name, tc := range map[string]struct {
		content string
		mode    os.FileMode
		want    string
	}{
		"not JSON":          {content: "\x00garbage", want: "invalid character"},
		"truncated":         {content: `{"data":"{\"configPath\":\"/etc`, want: "unexpected end of JSON input"},
		"checksum mismatch": {content: `{"data":"{\"configPath\":\"x\",\"files\":[]}","checksum":1}`, want: "checkpoint is corrupted"},
		"unknown field":     {content: valid(`{"configPath":"DIR","files":[],"changing":true}`), want: `data: unknown field "changing"`},
		"invalid configuration": {
			content: valid(`{"configPath":"DIR","files":[{"path":"DIR/10-test.yaml","dev":1,"ino":2,"btime":3,"data":"cGx1Z2luczogMQ=="}]}`),
			want:    "DIR/10-test.yaml: ",
		},
		"writable by others": {content: valid(`{"configPath":"DIR","files":[]}`), mode: 0o666, want: "writable"},
	} {
		t.Run(name, func(t *testing.T) {
			st := newStartTest(t, twoPlugins)
			path := filepath.Join(st.state, AppliedConfigurationName)
			content := strings.ReplaceAll(tc.content, "DIR", st.dir)
			if data, ok := strings.CutPrefix(content, "VALID"); ok {
				content = checkpointOf(t, data)
			}
			require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
			if tc.mode != 0 {
				require.NoError(t, os.Chmod(path, tc.mode))
			}
			var err error
			require.NotPanics(t, func() { _, err = st.start(t, st.state) })
			require.Error(t, err)
			assert.ErrorContains(t, err, "pod admission: the record of the configuration last applied cannot be used")
			assert.ErrorContains(t, err, strings.ReplaceAll(tc.want, "DIR", st.dir))
			assert.ErrorContains(t, err, "remove "+path+" to start from it as it is")
		})
	}
}

// At the first start with a state directory there is no record: the
// configuration on disk is applied and recorded, root's only.
func TestFirstStartRecordsTheConfigurationOnDisk(t *testing.T) {
	st := newStartTest(t, twoPlugins)
	info, err := os.Stat(filepath.Join(st.state, AppliedConfigurationName))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode())
	info, err = os.Stat(st.state)
	require.NoError(t, err)
	assert.Equal(t, os.ModeDir|0o700, info.Mode())

	// What the record is for: a prefix on disk at the next start.
	rewriteInPlace(t, filepath.Join(st.dir, twoPlugins.name), pluginsYAML(execPlugin("a")))
	tm, err := st.start(t, st.state)
	require.NoError(t, err)
	st.requireHolding(t, tm, "at the second start")
}

// A record of another configuration path says nothing about the files at
// this one (the kubelet's flag changed): the configuration on disk is
// applied and recorded in its place.
func TestRecordOfAnotherConfigurationPathIsReplaced(t *testing.T) {
	st := newStartTest(t, twoPlugins)
	other := &startTest{dir: configDir(t), state: st.state, complete: st.complete}
	writeConfig(t, filepath.Join(other.dir, "10-test.yaml"), pluginsYAML(execPlugin("a")))
	tm, err := other.start(t, other.state)
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, tm.pluginNames())

	rewriteInPlace(t, filepath.Join(other.dir, "10-test.yaml"), configHeader+"plugins:\n")
	_, err = other.start(t, other.state)
	require.ErrorContains(t, err, "10-test.yaml", "a prefix that does not parse")
	rewriteInPlace(t, filepath.Join(other.dir, "10-test.yaml"), configHeader+"plugins: []\n")
	tm, err = other.start(t, other.state)
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, tm.pluginNames())
	tm.clock.Step(settleWindow)
	tm.reload(t.Context())
	assert.Empty(t, tm.pluginNames(), `"plugins: []" is an explicit removal, applied once it settled`)
}

// A plugin added in place whose entry parsed before its last fields were
// written, applied so, then the kubelet restarts: the rest of the write is
// still the same write going on, applied once it settled, not refused as
// a change of the plugin.
func TestRestartMidWriteOfAPluginAddedInPlaceAppliesTheRest(t *testing.T) {
	a, c := execPlugin("a"), execPlugin("c", "args: [--strict]")
	complete := pluginsYAML(a, c)
	st := &startTest{dir: configDir(t), state: stateDir(t), complete: pluginsOf(t, []configFile{{"10-test.yaml", complete}})}
	file := filepath.Join(st.dir, "10-test.yaml")
	writeConfig(t, file, pluginsYAML(a))
	tm, err := st.start(t, st.state)
	require.NoError(t, err)
	rewriteInPlace(t, file, pluginsYAML(a, execPlugin("c")))
	tm.reloadSettled(t.Context())
	require.Equal(t, []string{"a", "c"}, tm.pluginNames(), "c applied without its args")
	tm.Stop()

	tm, err = st.start(t, st.state)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "c"}, tm.pluginNames())
	rewriteInPlace(t, file, complete)
	tm.reloadSettled(t.Context())
	assert.Zero(t, reloads(t, reloadFailure), "not refused as a change in place")
	st.requireHolding(t, tm, "once the rest of c's entry settled")
}
