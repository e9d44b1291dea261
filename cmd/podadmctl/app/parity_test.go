package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transports"
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
		NewPlugin:  transports.New,
	})
	require.NoError(t, err)
	manager.Start(t.Context())

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
