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
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/podadmission/podadmission/pkg/apis/config/scheme"
	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
)

// heldByLabel is the label of a property test pod that names the one
// plugin holding it.
const heldByLabel = "held-by"

// completeOnlyFactory creates plugins that hold the pods labelled
// held-by=<their name> only when configured exactly as in the complete
// configuration: the worst a plugin read from a half-written file can do
// is admit everything, so that is what such a plugin does here.
type completeOnlyFactory struct {
	complete map[string]configv1alpha1.PluginConfig
}

func (f *completeOnlyFactory) New(cfg *configv1alpha1.PluginConfig, _ string) (transport.Plugin, error) {
	complete, ok := f.complete[cfg.Name]
	holds := ok && equality.Semantic.DeepEqual(complete, *cfg)
	name := cfg.Name
	decide := func(_ context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
		if holds && req.Pod.Labels[heldByLabel] == name {
			return &podadmissionv1alpha1.PodAdmissionResponse{UID: req.UID, Reason: "Held", Message: "held by " + name}, nil
		}
		return &podadmissionv1alpha1.PodAdmissionResponse{UID: req.UID, Allowed: true}, nil
	}
	return &fakePlugin{name: name, decide: decide, reevaluations: make(chan transport.Reevaluation, 10)}, nil
}

// podHeldBy is a pod that only plugin holds.
func podHeldBy(plugin, suffix string) *v1.Pod {
	pod := testPod(plugin + "-" + suffix)
	pod.Labels = map[string]string{heldByLabel: plugin}
	return pod
}

// configFile is one file of a configuration directory.
type configFile struct{ name, content string }

// A writer writes files, the complete configuration, into dir, which holds
// the configuration before the change, the way some tool or person would;
// it calls step after every change a reload could see.
type writer func(t *testing.T, dir string, files []configFile, step func(what string))

// inPlace writes each file in place through prefixes of it.
func inPlace(write func(t *testing.T, file, content string, step func(written int))) writer {
	return func(t *testing.T, dir string, files []configFile, step func(string)) {
		for _, f := range files {
			write(t, filepath.Join(dir, f.name), f.content, func(n int) { step(fmt.Sprintf("%d bytes of %s:\n%s", n, f.name, f.content[:n])) })
		}
	}
}

func freshOpenPerPrefix(t *testing.T, file, content string, step func(int)) {
	for n := 0; n <= len(content); n++ {
		rewriteInPlace(t, file, content[:n])
		step(n)
	}
}

func oneOpenFileWrittenProgressively(t *testing.T, file, content string, step func(int)) {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	step(0)
	for n := 1; n <= len(content); n++ {
		_, err := f.WriteString(content[n-1 : n])
		require.NoError(t, err)
		step(n)
	}
	require.NoError(t, f.Close())
	step(len(content))
}

// openPerLine truncates the file, then appends a line at a time, each with
// an open of its own (a script's echo >> file).
func openPerLine(t *testing.T, file, content string, step func(int)) {
	rewriteInPlace(t, file, "")
	step(0)
	for n, line := 0, ""; n < len(content); n += len(line) {
		line = nextLine(content[n:])
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = f.WriteString(line)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		step(n + len(line))
	}
}

// unlinkPerLine unlinks the file and creates it anew with one more line,
// line after line: a new inode at every step.
func unlinkPerLine(t *testing.T, file, content string, step func(int)) {
	for n, line := 0, ""; n < len(content); n += len(line) {
		line = nextLine(content[n:])
		require.NoError(t, os.Remove(file))
		step(n)
		writeConfigFile(t, file, content[:n+len(line)])
		step(n + len(line))
	}
}

func nextLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i+1]
	}
	return s
}

// directoryRecreated removes the directory and creates it again, then
// copies the files into it one by one (rm -rf dir && mkdir dir && cp ...).
func directoryRecreated(t *testing.T, dir string, files []configFile, step func(string)) {
	require.NoError(t, os.RemoveAll(dir))
	step("directory removed")
	require.NoError(t, os.Mkdir(dir, 0o755))
	step("directory created, empty")
	for _, f := range files {
		writeConfigFile(t, filepath.Join(dir, f.name), f.content)
		step(f.name + " copied")
	}
}

// directoryRenamedIntoPlace renames a new directory holding all files but
// the last into place (mv dir dir.old && mv dir.new dir), then copies the
// last file into it.
func directoryRenamedIntoPlace(t *testing.T, dir string, files []configFile, step func(string)) {
	next, old := dir+".new", dir+".old"
	require.NoError(t, os.Mkdir(next, 0o755))
	last := files[len(files)-1]
	for _, f := range files[:len(files)-1] {
		writeConfigFile(t, filepath.Join(next, f.name), f.content)
	}
	require.NoError(t, os.Rename(dir, old))
	step("directory moved away")
	require.NoError(t, os.Rename(next, dir))
	step("new directory renamed into place without " + last.name)
	writeConfigFile(t, filepath.Join(dir, last.name), last.content)
	step(last.name + " copied")
	require.NoError(t, os.RemoveAll(old))
}

// addedPlugin is a plugin entry appended to a configuration file in the
// property tests: a plugin added in place, whose entry parses before its
// last fields are written.
const addedPlugin = "- name: added-in-place\n  type: Exec\n  args:\n  - --strict\n  timeout: 3s\n"

// The cases of issue 12 and 18, as a property: with a configuration in
// effect and pods held, writing a change into the configuration directory
// in any of the ways a tool or a person does never admits a pod that both
// the configuration before and the one written hold, at any step; a writer
// that pauses less than the settle window between its steps never gets
// anything but the configuration before or the complete one applied; and
// once the write is done and has settled, the complete configuration is in
// effect. The change is a rewrite of the same content, or a plugin added
// at the end of the last file.
func TestNoPrefixOfAConfigurationFileAdmitsAHeldPod(t *testing.T) {
	examples := map[string]string{}
	for _, name := range []string{"10-pod-security.yaml", "20-netpol-gate.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "pod-admission", name))
		require.NoError(t, err)
		examples[name] = string(data)
	}
	configurations := map[string][]configFile{
		"10-pod-security.yaml": {{"10-pod-security.yaml", examples["10-pod-security.yaml"]}},
		"20-netpol-gate.yaml":  {{"20-netpol-gate.yaml", examples["20-netpol-gate.yaml"]}},
		"two-file directory": {
			{"10-pod-security.yaml", examples["10-pod-security.yaml"]},
			{"20-netpol-gate.yaml", examples["20-netpol-gate.yaml"]},
		},
	}
	// Paused longer than any settle window between steps: each step is
	// taken for whole, so only in-place writers are safe (a new inode
	// cannot be told from a file renamed into place).
	slowWriters := map[string]writer{
		"fresh open per prefix":              inPlace(freshOpenPerPrefix),
		"one open file written byte by byte": inPlace(oneOpenFileWrittenProgressively),
		"an open per line":                   inPlace(openPerLine),
	}
	// Pausing less than the settle window between steps.
	quickWriters := map[string]writer{
		"an open per line":                            inPlace(openPerLine),
		"unlinked and rewritten line by line":         inPlace(unlinkPerLine),
		"directory recreated, files copied":           directoryRecreated,
		"directory renamed into place, a file copied": directoryRenamedIntoPlace,
	}
	// A kubelet restarted (or a node that lost power) at every step of a
	// write in place, each step closed: a new Manager on the same state
	// directory. A writer that has the file open cannot be restarted
	// over: the kubelet does not start while a file is open for writing.
	restartWriters := map[string]writer{
		"fresh open per prefix": inPlace(freshOpenPerPrefix),
		"an open per line":      inPlace(openPerLine),
	}
	for name, files := range configurations {
		added := slices.Clone(files)
		last := &added[len(added)-1]
		last.content += addedPlugin
		for change, after := range map[string][]configFile{"rewritten": files, "plugin added": added} {
			for pause, writers := range map[time.Duration]map[string]writer{time.Hour: slowWriters, settleWindow - time.Millisecond: quickWriters} {
				for writerName, write := range writers {
					t.Run(fmt.Sprintf("%s/%s/%s/paused %s", name, change, writerName, pause), func(t *testing.T) {
						t.Parallel()
						checkWritesNeverAdmit(t, files, after, write, pause, false)
					})
				}
			}
			for writerName, write := range restartWriters {
				if len(files) > 1 && writerName == "fresh open per prefix" {
					continue // the prefixes of each file alone cover it, at a third of the cost
				}
				t.Run(fmt.Sprintf("%s/%s/%s/kubelet restarted mid-write", name, change, writerName), func(t *testing.T) {
					t.Parallel()
					checkWritesNeverAdmit(t, files, after, write, time.Hour, true)
				})
			}
		}
	}
}

// pluginsOf returns the plugins files list, by name.
func pluginsOf(t *testing.T, files []configFile) map[string]configv1alpha1.PluginConfig {
	plugins := map[string]configv1alpha1.PluginConfig{}
	for _, f := range files {
		cfg, err := scheme.Decode([]byte(f.content))
		require.NoError(t, err)
		for _, p := range cfg.Plugins {
			plugins[p.Name] = p
		}
	}
	return plugins
}

// checkWritesNeverAdmit writes after over before and checks, at every
// step, that no pod is admitted that both hold; with restart, the kubelet
// is also restarted at every step (a new Manager on the same state
// directory), and starts with every plugin that was in effect, as it was.
func checkWritesNeverAdmit(t *testing.T, before, after []configFile, write writer, pause time.Duration, restart bool) {
	was, complete := pluginsOf(t, before), pluginsOf(t, after)
	// Held throughout: the plugins the change leaves as they were.
	var kept []string
	for name, p := range was {
		if q, ok := complete[name]; ok && equality.Semantic.DeepEqual(p, q) {
			kept = append(kept, name)
		}
	}
	slices.Sort(kept)
	factory := &completeOnlyFactory{complete: complete}
	state := stateDir(t)
	tm := newTestManager(t, configHeader+"plugins: []\n", func(_ *fakeFactory, opts *Options) {
		opts.newPlugin = factory.New
		opts.Recorder = nil // hundreds of refused reloads: more events than the fake recorder holds
		if restart {
			opts.StateDir = state
		}
	})
	tm.runUntilRestart(t)
	require.NoError(t, os.Remove(tm.file))
	for _, f := range before {
		writeConfig(t, filepath.Join(tm.dir, f.name), f.content)
	}
	tm.clock.Step(time.Hour)
	tm.reload(t.Context())
	tm.clock.Step(time.Hour)
	tm.reload(t.Context())
	require.ElementsMatch(t, slices.Collect(maps.Keys(was)), tm.pluginNames(), "the configuration before is in effect")

	var held []*v1.Pod
	for _, p := range kept {
		pod := podHeldBy(p, "held")
		require.True(t, heldBy(t, tm, pod), "%s holds its pod", p)
		held = append(held, pod)
	}

	steps := 0
	check := func(what string) {
		for _, pod := range held {
			require.True(t, heldBy(t, tm, pod), "%s admitted after %s", pod.Name, what)
		}
		for _, p := range kept {
			pod := podHeldBy(p, fmt.Sprintf("new-%d", steps))
			require.True(t, heldBy(t, tm, pod), "a new pod for %s admitted after %s", p, what)
		}
		if pause >= settleWindow {
			return
		}
		for _, p := range tm.chain.Load().plugins {
			configured := p.config.PluginConfig
			if q, ok := was[p.config.Name]; ok && equality.Semantic.DeepEqual(q, configured) {
				continue
			}
			require.Equal(t, complete[p.config.Name], configured, "a plugin in effect as neither before nor after the change, after %s", what)
		}
	}
	restarts := 0
	write(t, tm.dir, after, func(what string) {
		steps++
		// Seen at once, then once more after the pause.
		tm.reload(t.Context())
		check(what)
		tm.clock.Step(pause)
		tm.reload(t.Context())
		check(what)
		if !restart {
			return
		}
		inEffect := tm.chain.Load().Plugins()
		if tm.tryRestart(t) != nil {
			// Invalid as it is (an empty file, half a list): the kubelet
			// does not start, and admits nothing.
			return
		}
		restarts++
		restarted := map[string]configv1alpha1.PluginConfig{}
		for _, p := range tm.chain.Load().Plugins() {
			restarted[p.Name] = p.PluginConfig
		}
		for _, p := range inEffect {
			q, ok := restarted[p.Name]
			require.True(t, ok, "%s is not in effect after a restart after %s", p.Name, what)
			require.True(t, equality.Semantic.DeepEqual(p.PluginConfig, q), "%s changed by a restart after %s: %+v, was %+v", p.Name, what, q, p.PluginConfig)
		}
		check(what + ", then a kubelet restart")
	})
	t.Logf("%d steps, %d restarts", steps, restarts)

	for range 2 {
		tm.clock.Step(time.Hour)
		tm.reload(t.Context())
	}
	require.ElementsMatch(t, slices.Collect(maps.Keys(complete)), tm.pluginNames(), "the complete configuration is in effect once it settled")
	for name := range complete {
		require.True(t, heldBy(t, tm, podHeldBy(name, "after")), "%s, as complete, holds its pods", name)
	}
}
