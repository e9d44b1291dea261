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

package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission"
)

// TestCheckGivesTheKubeletsVerdict runs pods through podadmctl check and
// through the kubelet's Manager (SoftAdmit, the kubelet's soft admission
// stage) with the same configuration and real plugin processes, and
// requires the same decision: admitted or not, terminal or not, and the
// same pod status reason and message.
func TestCheckGivesTheKubeletsVerdict(t *testing.T) {
	grpcSocket := startGRPCTestPlugin(t, "--mode=deny", "--reason=NetworkPolicyPending", "--message=waiting for NetworkPolicy default/deny-all")
	configDir := trustedDir(t, "config")
	binDir := trustedDir(t, "bin")
	writeFile(t, configDir, "10-first.yaml", configHeader+`- name: allow-all
  type: Exec
- name: deny-team-b
  type: Exec
  args: [--mode=deny, --reason=TeamBNotHere, "--message=team b runs elsewhere"]
  match:
    podSelector:
      matchLabels: {team: b}
`)
	writeFile(t, configDir, "20-second.yaml", configHeader+`- name: crash-ignored
  type: Exec
  failurePolicy: Ignore
  args: [--mode=crash]
- name: hard-deny-prod
  type: Exec
  rejectionMode: Hard
  args: [--mode=deny, --reason=ProdIsFrozen]
  match:
    namespaces: [prod]
- name: deny-static
  type: Exec
  args: [--mode=deny, --reason=StaticPodsOff, "--message=no static pods here"]
  match:
    podSource: Static
- name: crash-failing
  type: Exec
  args: [--mode=crash]
  match:
    podSelector:
      matchLabels: {crash: "yes"}
- name: netpol-gate
  type: GRPC
  endpoint: unix://`+grpcSocket+`
  match:
    podSelector:
      matchLabels: {netpol: "yes"}
- name: missing-binary
  type: Exec
  match:
    podSelector:
      matchLabels: {missing: "yes"}
`)
	installTestPlugin(t, binDir, "allow-all", "deny-team-b", "crash-ignored", "hard-deny-prod", "deny-static", "crash-failing", "netpol-gate")

	cases := []struct {
		name, namespace, labels string
		static                  bool
		wantVerdict             string
		wantReason              string
	}{
		{name: "plain", wantVerdict: VerdictAdmitted},
		{name: "team-b", labels: "team: b", wantVerdict: VerdictBlocked, wantReason: "TeamBNotHere"},
		{name: "prod", namespace: "prod", wantVerdict: VerdictRejected, wantReason: "ProdIsFrozen"},
		{name: "team-b-in-prod", namespace: "prod", labels: "team: b", wantVerdict: VerdictBlocked, wantReason: "TeamBNotHere"},
		{name: "static", static: true, wantVerdict: VerdictBlocked, wantReason: "StaticPodsOff"},
		{name: "static-in-prod", namespace: "prod", static: true, wantVerdict: VerdictRejected, wantReason: "ProdIsFrozen"},
		{name: "crash", labels: `crash: "yes"`, wantVerdict: VerdictBlocked, wantReason: podadmission.ReasonPluginFailed},
		{name: "netpol", labels: `netpol: "yes"`, wantVerdict: VerdictBlocked, wantReason: "NetworkPolicyPending"},
		{name: "missing-binary", labels: `missing: "yes"`, wantVerdict: VerdictBlocked, wantReason: podadmission.ReasonPluginFailed},
	}
	// podadmctl first: each run sets up klog as a command does, which must
	// not race with the Manager's goroutines.
	reports := make([]checkReport, len(cases))
	for i, tc := range cases {
		t.Run("podadmctl/"+tc.name, func(t *testing.T) {
			manifest := podManifest(tc.name, tc.namespace, tc.labels)
			podFile := writeFile(t, t.TempDir(), "pod.yaml", manifest)
			args := []string{"check", "-f", podFile, "--config", configDir, "--bin-dir", binDir, "--node-name", "node-1", "-o", "json"}
			if tc.static {
				args = append(args, "--static")
			}
			r := podadmctl(t, "", args...)
			report := &reports[i]
			require.NoError(t, json.Unmarshal([]byte(r.stdout), report), "stdout: %s\nstderr: %s", r.stdout, r.stderr)
			assert.Equal(t, tc.wantVerdict, report.Verdict)
			assert.Equal(t, tc.wantReason, report.Reason)
			if tc.wantVerdict == VerdictAdmitted {
				assert.Equal(t, ExitOK, r.code)
			} else {
				assert.Equal(t, ExitRejected, r.code)
			}
		})
	}

	manager, err := podadmission.NewManager(podadmission.Options{
		ConfigPath: configDir,
		BinDir:     binDir,
		NodeName:   "node-1",
	})
	require.NoError(t, err)
	manager.Start(t.Context())
	t.Cleanup(manager.Stop)

	for i, tc := range cases {
		t.Run("kubelet/"+tc.name, func(t *testing.T) {
			report := reports[i]
			manifest := podManifest(tc.name, tc.namespace, tc.labels)
			// The kubelet's pod: the same manifest, as the API server or
			// the static pod source gives it.
			decoded, err := readPod("pod.yaml", strings.NewReader(manifest))
			require.NoError(t, err)
			pod, err := podAsNodeSees("pod.yaml", decoded, "node-1", tc.static)
			require.NoError(t, err)
			result, terminal := manager.SoftAdmit(context.Background(), &lifecycle.PodAdmitAttributes{Pod: pod})

			assert.Equal(t, report.Admitted, result.Admit, "admitted")
			assert.Equal(t, report.Verdict == VerdictRejected, terminal, "terminal")
			assert.Equal(t, report.Reason, result.Reason, "reason")
			assert.Equal(t, report.Message, result.Message, "message")
		})
	}
}

func podManifest(name, namespace, labels string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n", name)
	if namespace != "" {
		fmt.Fprintf(&b, "  namespace: %s\n", namespace)
	}
	if labels != "" {
		fmt.Fprintf(&b, "  labels: {%s}\n", labels)
	}
	b.WriteString("spec:\n  containers:\n  - name: c\n    image: registry.example/app:1\n")
	return b.String()
}

// TestValidateGivesTheKubeletsVerdict loads the same configuration trees,
// good, bad, untrusted and partial, with podadmctl validate and with the
// kubelet's loader (NewManager, what the kubelet calls at start), and
// requires the same verdict and the same messages: validate prints every
// error the kubelet would refuse to start with, and nothing else.
func TestValidateGivesTheKubeletsVerdict(t *testing.T) {
	type tree struct{ configDir, binDir string }
	newTree := func(t *testing.T, files map[string]string, binaries ...string) tree {
		tr := tree{configDir: trustedDir(t, "config"), binDir: trustedDir(t, "bin")}
		for name, content := range files {
			writeFile(t, tr.configDir, name, content)
		}
		installTestPlugin(t, tr.binDir, binaries...)
		return tr
	}
	good := map[string]string{
		"10-exec.yaml": configHeader + "- name: pss\n  type: Exec\n  args: [--mode=allow]\n",
		"20-grpc.yaml": configHeader + "- name: gate\n  type: GRPC\n  endpoint: unix:///run/podadmission/gate.sock\n",
	}
	// valid is what the kubelet makes of each tree, so that the test
	// compares verdicts of both kinds.
	valid := map[string]bool{"good": true, "good, an executable not installed yet": true}
	cases := map[string]func(t *testing.T) tree{
		"good":                                  func(t *testing.T) tree { return newTree(t, good, "pss") },
		"good, an executable not installed yet": func(t *testing.T) tree { return newTree(t, good) },
		"bad values, a typo, a duplicate name": func(t *testing.T) tree {
			return newTree(t, map[string]string{
				"10-a.yaml": configHeader + "- name: a\n  type: Exec\n  timeout: 0s\n- name: b\n  type: GRPC\n  endpoint: relative.sock\n",
				"20-b.yaml": configHeader + "- name: a\n  type: Exec\n- name: c\n  type: Exec\n  timeot: 1s\n",
			}, "a")
		},
		"untrusted file": func(t *testing.T) tree {
			tr := newTree(t, good, "pss")
			require.NoError(t, os.Chmod(filepath.Join(tr.configDir, "10-exec.yaml"), 0o666))
			return tr
		},
		"untrusted directory above": func(t *testing.T) tree {
			tr := newTree(t, good, "pss")
			require.NoError(t, os.Chown(filepath.Dir(tr.configDir), 65534, 65534))
			return tr
		},
		"untrusted bin dir": func(t *testing.T) tree {
			tr := newTree(t, good, "pss")
			require.NoError(t, os.Chmod(tr.binDir, 0o777))
			return tr
		},
		"executable symlinked into another user's directory": func(t *testing.T) tree {
			tr := newTree(t, good)
			vendor := trustedDir(t, "vendor")
			installTestPlugin(t, vendor, "pss")
			require.NoError(t, os.Symlink(filepath.Join(vendor, "pss"), filepath.Join(tr.binDir, "pss")))
			require.NoError(t, os.Chown(vendor, 65534, 65534))
			return tr
		},
		"half-written file": func(t *testing.T) tree {
			return newTree(t, map[string]string{"10-exec.yaml": configHeader + "- name: pss\n  type: Ex"}, "pss")
		},
		"empty file, comments only": func(t *testing.T) tree {
			return newTree(t, map[string]string{"10-empty.yaml": "", "20-comments.yaml": "# plugins come later\n"}, "pss")
		},
		"file open for writing": func(t *testing.T) tree {
			tr := newTree(t, good, "pss")
			writer, err := os.OpenFile(filepath.Join(tr.configDir, "20-grpc.yaml"), os.O_WRONLY, 0)
			require.NoError(t, err)
			t.Cleanup(func() { writer.Close() })
			return tr
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			tr := setup(t)
			r := podadmctl(t, "", "validate", tr.configDir, "--bin-dir", tr.binDir)

			manager, kubeletErr := podadmission.NewManager(podadmission.Options{ConfigPath: tr.configDir, BinDir: tr.binDir, NodeName: "node-1"})
			if manager != nil {
				manager.Stop()
			}
			require.Equal(t, valid[name], kubeletErr == nil, "the kubelet's verdict: %v", kubeletErr)
			if kubeletErr != nil {
				assert.Equal(t, ExitRejected, r.code, "the kubelet refuses it: %v", kubeletErr)
				var want strings.Builder
				n := 0
				for _, e := range utilerrors.Flatten(utilerrors.NewAggregate([]error{kubeletErr})).Errors() {
					fmt.Fprintf(&want, "error: %v\n", e)
					n++
				}
				fmt.Fprintf(&want, "%s: invalid pod admission configuration (%d %s)\n", tr.configDir, n, plural(n, "error", "errors"))
				assert.Equal(t, want.String(), r.stderr, "the kubelet's errors, word for word")
				assert.Empty(t, r.stdout)
				return
			}
			require.Equal(t, ExitOK, r.code, "the kubelet accepts it; validate said: %s", r.stderr)
			cfg, err := podadmission.LoadNodeConfig(tr.configDir, tr.binDir)
			require.NoError(t, err)
			var want strings.Builder
			for _, missing := range podadmission.CheckExecutables(cfg, tr.binDir) {
				assert.ErrorIs(t, missing, fs.ErrNotExist)
				fmt.Fprintf(&want, "warning: %v: the kubelet holds the pods this plugin matches until it is installed\n", missing)
			}
			assert.Equal(t, want.String(), r.stderr)
			for i, p := range cfg.Plugins {
				assert.Regexp(t, fmt.Sprintf(`(?m)^%d\s+%s\s+%s\s+%s\s`, i+1, p.Name, p.Type, regexp.QuoteMeta(p.File)), r.stdout, "the kubelet's plugins, in its order")
			}
		})
	}
}
