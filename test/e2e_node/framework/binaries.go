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
	"fmt"
	"os"
	"path/filepath"
)

// Binaries are the executables a run uses. The upstream ones come from the
// same patched tree as the kubelet (make kubelet e2e-binaries), the harness
// ones from test/e2e_node/cmd (make e2e-node-binaries).
type Binaries struct {
	Kubelet           string
	APIServer         string
	ControllerManager string
	Scheduler         string
	// Kubectl is for the tests that drive the cluster as a user would
	// (kubectl wait on the kubelet's pod conditions).
	Kubectl string

	Etcd        string
	FakeRuntime string
	CRIRecorder string
	// PauseImage and WorkloadImage are the static binaries the containerd
	// mode packs into its local images.
	PauseImage    string
	WorkloadImage string
	// TestPlugin is the pod admission plugin the tests configure, and
	// the GRPC plugin daemon they run (--serve).
	TestPlugin string
	// TestExecPlugin is the same plugin built as an Exec plugin only
	// (-tags testplugin_exec): the Exec plugins the tests install. Without
	// the GRPC server linked in, a call costs what an Exec plugin written
	// with the SDK costs, not the start-up of gRPC's packages.
	TestExecPlugin string
	// ContainerdDir has containerd 2.x, its shim, ctr and runc (make
	// containerd: build/containerd.sh dir).
	ContainerdDir string
	// NRIPlugin is the NRI comparison's NRI plugin (test/e2e_node/nriplugin).
	NRIPlugin string
}

// BinariesIn finds the binaries in binDir (the Makefile's BIN) and its e2e
// subdirectory.
func BinariesIn(binDir string) Binaries {
	e2e := filepath.Join(binDir, "e2e")
	return Binaries{
		Kubelet:           filepath.Join(binDir, "kubelet"),
		APIServer:         filepath.Join(binDir, "kube-apiserver"),
		ControllerManager: filepath.Join(binDir, "kube-controller-manager"),
		Scheduler:         filepath.Join(binDir, "kube-scheduler"),
		Kubectl:           filepath.Join(binDir, "kubectl"),
		Etcd:              filepath.Join(e2e, "etcd"),
		FakeRuntime:       filepath.Join(e2e, "fakeruntime"),
		CRIRecorder:       filepath.Join(e2e, "crirecorder"),
		PauseImage:        filepath.Join(e2e, "pause"),
		WorkloadImage:     filepath.Join(e2e, "workload"),
		TestPlugin:        filepath.Join(binDir, "testplugin"),
		TestExecPlugin:    filepath.Join(binDir, "testplugin-exec"),
		NRIPlugin:         filepath.Join(e2e, "nriplugin"),
	}
}

// check fails with the list of missing binaries and how to build them.
func (b Binaries) check(paths ...string) error {
	var missing []string
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing binaries %v: build them with make kubelet e2e-binaries e2e-node-binaries", missing)
	}
	return nil
}
