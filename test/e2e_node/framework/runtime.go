//go:build e2e_node

package framework

import (
	"context"
	"fmt"
	"time"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// Runtime modes, selected by E2E_RUNTIME / -e2e.runtime.
const (
	// ContainerdMode runs Debian's containerd, runc and CNI plugins: the
	// real runtime a node uses.
	ContainerdMode = "containerd"
	// FakeMode runs k8s.io/cri-client/pkg/fake: fast, nothing really runs.
	FakeMode = "fake"
)

// Runtime is the container runtime of the node. The kubelet reaches it
// through the CRI recorder, whose journal the tests read.
type Runtime interface {
	// Mode is ContainerdMode or FakeMode.
	Mode() string
	// WorkloadImage is the image test pods run.
	WorkloadImage() string
	// configureKubelet adapts the kubelet configuration to the runtime.
	configureKubelet(cfg *kubeletconfigv1beta1.KubeletConfiguration)
	// start starts the runtime and returns its CRI endpoint.
	start(ctx context.Context) (endpoint string, processes []*Process, err error)
	// stop removes every pod from the runtime and stops it; it undoes what
	// start did except what the generic host cleanup covers.
	stop(ctx context.Context)
}

// newRuntime returns the runtime for mode.
func newRuntime(mode string, layout Layout, bins Binaries) (Runtime, error) {
	switch mode {
	case FakeMode:
		return &fakeRuntime{layout: layout, bins: bins}, nil
	case ContainerdMode:
		return &containerdRuntime{layout: layout, bins: bins}, nil
	default:
		return nil, fmt.Errorf("unknown runtime mode %q: want %s or %s", mode, ContainerdMode, FakeMode)
	}
}

// criRecorder is the recording CRI proxy in front of a runtime.
type criRecorder struct {
	Endpoint    string
	JournalPath string
	process     *Process
}

// startCRIRecorder starts the proxy in front of backend and waits until a
// CRI call through it reaches a ready runtime.
func startCRIRecorder(ctx context.Context, layout Layout, bins Binaries, backend string) (*criRecorder, error) {
	r := &criRecorder{
		Endpoint:    "unix://" + layout.SocketPath("cri.sock"),
		JournalPath: layout.ArtifactPath("cri-journal.jsonl"),
	}
	p, err := StartProcess(ProcessSpec{
		Name:   "crirecorder",
		Binary: bins.CRIRecorder,
		Args: []string{
			"--listen=" + r.Endpoint,
			"--runtime-endpoint=" + backend,
			"--journal=" + r.JournalPath,
		},
		LogPath: layout.LogPath("crirecorder"),
	})
	if err != nil {
		return nil, err
	}
	r.process = p
	return r, waitCRIReady(ctx, p, r.Endpoint)
}

// waitCRIReady waits until endpoint answers CRI Status with every
// condition true, while p is running.
func waitCRIReady(ctx context.Context, p *Process, endpoint string) error {
	client, err := DialCRI(endpoint)
	if err != nil {
		return err
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	return p.WaitReady(ctx, client.ready)
}
