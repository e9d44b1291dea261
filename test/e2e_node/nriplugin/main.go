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

// Command nriplugin is an NRI plugin, written with containerd's NRI stub
// library, that enforces the policies of the NRI comparison
// (test/e2e_node/nri) in containerd 2.x: the same policies a podadmission
// plugin enforces in the kubelet.
//
// It refuses the pods labelled e2e.podadmission.io/nri=<hook> at that hook:
//
//	sandbox   RunPodSandbox: the earliest NRI sees a pod (its sandbox is
//	          started, its network set up, then torn down again)
//	create    CreateContainer: a plain plugin's answer to a container
//	validate  ValidateContainerAdjustment: a validation plugin, the
//	          NRI way to enforce a policy (containerd 2.2+)
//
// and for each such pod:
//
//	hostNetwork pod         refused ("host network")
//	otherwise               refused ("held") until <release-dir>/<namespace>.<name>
//	                        exists
//	label nri-hang=true     the hook never answers (NRI gives up after its
//	                        plugin_request_timeout)
//
// Every call on a labelled pod appends a JSON line to --log, and so does
// the registration (hook "configure", with the runtime's name and version).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"
)

// Pod labels the plugin reads.
const (
	hookLabel = "e2e.podadmission.io/nri"
	hangLabel = "e2e.podadmission.io/nri-hang"
)

type plugin struct {
	releaseDir string
	logMu      sync.Mutex
	log        *os.File
}

// call is one line of the log.
type call struct {
	Time      time.Time `json:"time"`
	Hook      string    `json:"hook"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       string    `json:"uid"`
	Container string    `json:"container,omitempty"`
	Decision  string    `json:"decision"`
}

// errHeld and errHostNetwork are the plugin's refusals.
var (
	errHeld        = errors.New("held by the NRI plugin until released")
	errHostNetwork = errors.New("host network pods are refused by the NRI plugin")
)

// decide applies the policy to pod at hook: nil admits.
func (p *plugin) decide(ctx context.Context, hook string, pod *api.PodSandbox, container string) error {
	if pod.GetLabels()[hookLabel] != hook {
		return nil
	}
	if pod.GetLabels()[hangLabel] == "true" {
		p.record(hook, pod, container, "hang")
		<-ctx.Done()
		time.Sleep(time.Hour)
	}
	err := p.policy(pod)
	decision := "admit"
	if err != nil {
		decision = "refuse: " + err.Error()
	}
	p.record(hook, pod, container, decision)
	return err
}

func (p *plugin) policy(pod *api.PodSandbox) error {
	if hostNetwork(pod) {
		return errHostNetwork
	}
	if _, err := os.Stat(filepath.Join(p.releaseDir, pod.GetNamespace()+"."+pod.GetName())); err != nil {
		return errHeld
	}
	return nil
}

// hostNetwork says whether the pod has no network namespace of its own.
func hostNetwork(pod *api.PodSandbox) bool {
	for _, ns := range pod.GetLinux().GetNamespaces() {
		if ns.GetType() == "network" && ns.GetPath() != "" {
			return false
		}
	}
	return true
}

func (p *plugin) record(hook string, pod *api.PodSandbox, container, decision string) {
	line, _ := json.Marshal(call{
		Time: time.Now(), Hook: hook, Namespace: pod.GetNamespace(), Name: pod.GetName(),
		UID: pod.GetUid(), Container: container, Decision: decision,
	})
	p.logMu.Lock()
	defer p.logMu.Unlock()
	// One write per line: the test reads the file while the plugin runs.
	_, _ = p.log.Write(append(line, '\n'))
}

// Configure is called once the runtime registered the plugin.
func (p *plugin) Configure(_ context.Context, _, runtime, version string) (api.EventMask, error) {
	p.record("configure", &api.PodSandbox{}, "", runtime+" "+version)
	return 0, nil
}

func (p *plugin) RunPodSandbox(ctx context.Context, pod *api.PodSandbox) error {
	return p.decide(ctx, "sandbox", pod, "")
}

func (p *plugin) CreateContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	return nil, nil, p.decide(ctx, "create", pod, ctr.GetName())
}

func (p *plugin) ValidateContainerAdjustment(ctx context.Context, req *api.ValidateContainerAdjustmentRequest) error {
	return p.decide(ctx, "validate", req.GetPod(), req.GetContainer().GetName())
}

func main() {
	socket := flag.String("socket", "", "the NRI socket of the runtime")
	name := flag.String("name", "podadmission-nri", "plugin name")
	idx := flag.String("idx", "50", "plugin index (order among NRI plugins)")
	releaseDir := flag.String("release-dir", "", "directory whose <namespace>.<name> files release held pods")
	logPath := flag.String("log", "", "file to append one JSON line per call to")
	flag.Parse()
	if *socket == "" || *releaseDir == "" || *logPath == "" {
		fmt.Fprintln(os.Stderr, "nriplugin: --socket, --release-dir and --log are required")
		os.Exit(2)
	}
	log, err := os.OpenFile(*logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nriplugin:", err)
		os.Exit(1)
	}
	p := &plugin{releaseDir: *releaseDir, log: log}
	s, err := stub.New(p, stub.WithSocketPath(*socket), stub.WithPluginName(*name), stub.WithPluginIdx(*idx),
		// The runtime closes a plugin that did not answer in time: the
		// plugin is then gone, as the comparison reports.
		stub.WithOnClose(func() {
			fmt.Fprintln(os.Stderr, "nriplugin: the runtime closed the connection")
			os.Exit(3)
		}))
	if err != nil {
		fmt.Fprintln(os.Stderr, "nriplugin:", err)
		os.Exit(1)
	}
	if err := s.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "nriplugin:", err)
		os.Exit(1)
	}
}
