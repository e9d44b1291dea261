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
	"time"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// fakeRuntime is the fake CRI: pods "run" without any process, so a run is
// fast and the kubelet's behaviour is all there is to measure.
type fakeRuntime struct {
	layout   Layout
	bins     Binaries
	backend  *Process
	recorder *criRecorder
}

func (r *fakeRuntime) Mode() string { return FakeMode }

// WorkloadImage is never pulled from anywhere: the fake "pulls" any name.
func (r *fakeRuntime) WorkloadImage() string { return "e2e.podadmission.local/workload:1" }

func (r *fakeRuntime) configureKubelet(cfg *kubeletconfigv1beta1.KubeletConfiguration) {
	cfg.CgroupDriver = "cgroupfs"
}

func (r *fakeRuntime) start(ctx context.Context) (string, []*Process, error) {
	backend := "unix://" + r.layout.SocketPath("fakeruntime.sock")
	p, err := StartProcess(ProcessSpec{
		Name:    "fakeruntime",
		Binary:  r.bins.FakeRuntime,
		Args:    []string{"--listen=" + backend, "--image-fs=" + r.layout.State},
		LogPath: r.layout.LogPath("fakeruntime"),
	})
	if err != nil {
		return "", nil, err
	}
	r.backend = p
	if err := waitCRIReady(ctx, p, backend); err != nil {
		return "", []*Process{p}, err
	}
	r.recorder, err = startCRIRecorder(ctx, r.layout, r.bins, backend)
	if r.recorder == nil {
		return "", []*Process{p}, err
	}
	return r.recorder.Endpoint, []*Process{p, r.recorder.process}, err
}

func (r *fakeRuntime) stop(context.Context) {
	if r.recorder != nil {
		r.recorder.process.Stop(5 * time.Second)
	}
	if r.backend != nil {
		r.backend.Stop(5 * time.Second)
	}
}
