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

package crirecord

import (
	"path"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
)

// podRef says which pod a sandbox or container belongs to.
type podRef struct {
	uid, namespace, name string
}

// recorder turns the wire bytes of pod lifecycle calls into journal
// entries. Stop and remove calls name only an id, so it remembers which pod
// each sandbox and container it saw created belongs to.
type recorder struct {
	journal *journalWriter

	mu             sync.Mutex
	sandboxes      map[string]podRef
	containers     map[string]podRef
	containerNames map[string]string
}

func newRecorder(journal *journalWriter) *recorder {
	return &recorder{
		journal:        journal,
		sandboxes:      map[string]podRef{},
		containers:     map[string]podRef{},
		containerNames: map[string]string{},
	}
}

// recorded lists the methods worth a journal entry; the rest (status and
// list calls the kubelet makes all the time) are only forwarded.
var recorded = map[string]bool{
	"RunPodSandbox":    true,
	"StopPodSandbox":   true,
	"RemovePodSandbox": true,
	"CreateContainer":  true,
	"StartContainer":   true,
	"StopContainer":    true,
	"RemoveContainer":  true,
	"PullImage":        true,
}

// record writes the entry for one finished call, which the kubelet made at
// started; request and response are the first message in each direction
// (CRI's recorded calls are unary).
func (r *recorder) record(fullMethod string, started time.Time, request, response []byte, callErr error) {
	method := path.Base(fullMethod)
	if !recorded[method] {
		return
	}
	call := Call{Started: started, Time: time.Now(), Method: method}
	if callErr != nil {
		call.Error = callErr.Error()
	}
	if err := r.describe(&call, request, response); err != nil {
		klog.ErrorS(err, "Cannot decode CRI call", "method", method)
		call.Error = "recorder: " + err.Error()
	}
	if err := r.journal.write(call); err != nil {
		klog.ErrorS(err, "Cannot write CRI journal")
	}
}

func (r *recorder) describe(call *Call, request, response []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()

	switch call.Method {
	case "RunPodSandbox":
		var req runtimeapi.RunPodSandboxRequest
		if err := proto.Unmarshal(request, &req); err != nil {
			return err
		}
		md := req.GetConfig().GetMetadata()
		ref := podRef{uid: md.GetUid(), namespace: md.GetNamespace(), name: md.GetName()}
		call.setPod(ref)
		if call.Error == "" {
			var resp runtimeapi.RunPodSandboxResponse
			if err := proto.Unmarshal(response, &resp); err != nil {
				return err
			}
			call.SandboxID = resp.GetPodSandboxId()
			r.sandboxes[call.SandboxID] = ref
		}
	case "StopPodSandbox":
		var req runtimeapi.StopPodSandboxRequest
		if err := proto.Unmarshal(request, &req); err != nil {
			return err
		}
		call.SandboxID = req.GetPodSandboxId()
		call.setPod(r.sandboxes[call.SandboxID])
	case "RemovePodSandbox":
		var req runtimeapi.RemovePodSandboxRequest
		if err := proto.Unmarshal(request, &req); err != nil {
			return err
		}
		call.SandboxID = req.GetPodSandboxId()
		call.setPod(r.sandboxes[call.SandboxID])
	case "CreateContainer":
		var req runtimeapi.CreateContainerRequest
		if err := proto.Unmarshal(request, &req); err != nil {
			return err
		}
		call.SandboxID = req.GetPodSandboxId()
		call.ContainerName = req.GetConfig().GetMetadata().GetName()
		call.Image = req.GetConfig().GetImage().GetImage()
		md := req.GetSandboxConfig().GetMetadata()
		ref := podRef{uid: md.GetUid(), namespace: md.GetNamespace(), name: md.GetName()}
		call.setPod(ref)
		if call.Error == "" {
			var resp runtimeapi.CreateContainerResponse
			if err := proto.Unmarshal(response, &resp); err != nil {
				return err
			}
			call.ContainerID = resp.GetContainerId()
			r.containers[call.ContainerID] = ref
			r.containerNames[call.ContainerID] = call.ContainerName
		}
	case "StartContainer":
		var req runtimeapi.StartContainerRequest
		if err := proto.Unmarshal(request, &req); err != nil {
			return err
		}
		r.describeContainer(call, req.GetContainerId())
	case "StopContainer":
		var req runtimeapi.StopContainerRequest
		if err := proto.Unmarshal(request, &req); err != nil {
			return err
		}
		r.describeContainer(call, req.GetContainerId())
	case "RemoveContainer":
		var req runtimeapi.RemoveContainerRequest
		if err := proto.Unmarshal(request, &req); err != nil {
			return err
		}
		r.describeContainer(call, req.GetContainerId())
	case "PullImage":
		var req runtimeapi.PullImageRequest
		if err := proto.Unmarshal(request, &req); err != nil {
			return err
		}
		call.Image = req.GetImage().GetImage()
		md := req.GetSandboxConfig().GetMetadata()
		call.setPod(podRef{uid: md.GetUid(), namespace: md.GetNamespace(), name: md.GetName()})
	}
	return nil
}

// describeContainer fills in what is known about a container created earlier.
func (r *recorder) describeContainer(call *Call, id string) {
	call.ContainerID = id
	call.ContainerName = r.containerNames[id]
	call.setPod(r.containers[id])
}

func (c *Call) setPod(ref podRef) {
	c.PodUID, c.PodNamespace, c.PodName = ref.uid, ref.namespace, ref.name
}
