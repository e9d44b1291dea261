//go:build e2e_node

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

package framework

import (
	"context"
	"fmt"
	"time"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// Runtime modes, selected by E2E_RUNTIME / -e2e.runtime.
const (
	// ContainerdMode runs containerd 2.x and runc built from the module
	// proxy (make containerd), with Debian's CNI plugins: the runtime a
	// node runs.
	ContainerdMode = "containerd"
	// Containerd16Mode runs Debian's containerd 1.6 and runc 1.1: the skew
	// check, a runtime without the CRI RuntimeConfig call.
	Containerd16Mode = "containerd1.6"
	// FakeMode runs k8s.io/cri-client/pkg/fake: fast, nothing really runs.
	FakeMode = "fake"
)

// Runtime is the container runtime of the node. The kubelet reaches it
// through the CRI recorder, whose journal the tests read.
type Runtime interface {
	// Mode is ContainerdMode, Containerd16Mode or FakeMode.
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

// newRuntime returns the runtime for mode; nri configures containerd 2.x's
// NRI (nil: its defaults).
func newRuntime(mode string, layout Layout, bins Binaries, nri *NRIOptions) (Runtime, error) {
	switch mode {
	case FakeMode:
		if nri != nil {
			return nil, fmt.Errorf("the %s runtime mode has no NRI: use %s", mode, ContainerdMode)
		}
		return &fakeRuntime{layout: layout, bins: bins}, nil
	case ContainerdMode, Containerd16Mode:
		r, err := newContainerdRuntime(mode, layout, bins, nri)
		if err != nil {
			// Not r: a nil *containerdRuntime in a Runtime is not nil, and
			// the cluster's teardown would stop it.
			return nil, err
		}
		return r, nil
	default:
		return nil, fmt.Errorf("unknown runtime mode %q: want %s, %s or %s", mode, ContainerdMode, Containerd16Mode, FakeMode)
	}
}

// IsContainerd says whether mode runs containerd (2.x or 1.6): real
// sandboxes, network namespaces and containers.
func IsContainerd(mode string) bool {
	return mode == ContainerdMode || mode == Containerd16Mode
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
