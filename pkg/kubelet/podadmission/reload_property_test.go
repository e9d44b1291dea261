package podadmission

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/podadmission/podadmission/pkg/apis/config/scheme"
	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
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

func (f *completeOnlyFactory) New(cfg *configv1alpha1.PluginConfig, _ string) (Plugin, error) {
	complete, ok := f.complete[cfg.Name]
	holds := ok && equality.Semantic.DeepEqual(complete, *cfg)
	name := cfg.Name
	decide := func(_ context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
		if holds && req.Pod.Labels[heldByLabel] == name {
			return &podadmissionv1alpha1.PodAdmissionResponse{UID: req.UID, Reason: "Held", Message: "held by " + name}, nil
		}
		return &podadmissionv1alpha1.PodAdmissionResponse{UID: req.UID, Allowed: true}, nil
	}
	return &fakePlugin{name: name, decide: decide, reevaluations: make(chan Reevaluation, 10)}, nil
}

// podHeldBy is a pod that only plugin holds.
func podHeldBy(plugin, suffix string) *v1.Pod {
	pod := testPod(plugin + "-" + suffix)
	pod.Labels = map[string]string{heldByLabel: plugin}
	return pod
}

// configFile is one file of a configuration directory.
type configFile struct{ name, content string }

// writePrefixes rewrites file in place through every prefix of content,
// calling step after each write: with a fresh open(O_TRUNC) per prefix, or
// through one file descriptor written a byte at a time and closed at the
// end.
type writePrefixes func(t *testing.T, file, content string, step func(written int))

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

// Case 2 of issue 12, as a property: with the complete configuration in
// effect and pods held, rewriting any of its files in place through every
// prefix, pausing longer than any settle window and reloading after each
// step, never admits a held pod, and a new pod the complete configuration
// holds is held at every step.
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
	modes := map[string]writePrefixes{
		"fresh open per prefix":              freshOpenPerPrefix,
		"one open file written byte by byte": oneOpenFileWrittenProgressively,
	}
	for name, files := range configurations {
		for modeName, write := range modes {
			t.Run(name+"/"+modeName, func(t *testing.T) {
				t.Parallel()
				checkPrefixesNeverAdmit(t, files, write)
			})
		}
	}
}

func checkPrefixesNeverAdmit(t *testing.T, files []configFile, write writePrefixes) {
	factory := &completeOnlyFactory{complete: map[string]configv1alpha1.PluginConfig{}}
	var plugins []string
	for _, f := range files {
		cfg, err := scheme.Decode([]byte(f.content))
		require.NoError(t, err)
		for _, p := range cfg.Plugins {
			factory.complete[p.Name] = p
			plugins = append(plugins, p.Name)
		}
	}
	tm := newTestManager(t, configHeader+"plugins: []\n", func(_ *fakeFactory, opts *Options) {
		opts.NewPlugin = factory.New
		opts.Recorder = nil // hundreds of refused reloads: more events than the fake recorder holds
	})
	tm.runCtx = t.Context()
	for _, f := range files {
		writeConfig(t, filepath.Join(tm.dir, f.name), f.content)
	}
	tm.reload(t.Context())
	require.Equal(t, plugins, tm.pluginNames(), "the complete configuration is in effect")

	var held []*v1.Pod
	for _, p := range plugins {
		pod := podHeldBy(p, "held")
		require.True(t, heldBy(t, tm, pod), "%s holds its pod", p)
		held = append(held, pod)
	}

	steps := 0
	for _, f := range files {
		file := filepath.Join(tm.dir, f.name)
		write(t, file, f.content, func(written int) {
			steps++
			// Longer than any settle window, and than any back-off.
			tm.clock.Step(time.Hour)
			tm.reload(t.Context())
			for _, pod := range held {
				require.True(t, heldBy(t, tm, pod), "%s admitted after %d bytes of %s were written:\n%s", pod.Name, written, f.name, f.content[:written])
			}
			for _, p := range plugins {
				pod := podHeldBy(p, fmt.Sprintf("new-%d", steps))
				require.True(t, heldBy(t, tm, pod), "a new pod for %s admitted after %d bytes of %s were written:\n%s", p, written, f.name, f.content[:written])
			}
		})
	}
	t.Logf("%d steps", steps)
}
