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
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"
)

// dumpState writes the pods, events and node of the cluster into the
// artifacts, for looking at a failed run afterwards.
func (c *Cluster) dumpState(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	dumps := map[string]func() (any, error){
		"pods.yaml": func() (any, error) {
			return c.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		},
		"events.yaml": func() (any, error) {
			return c.Client.CoreV1().Events("").List(ctx, metav1.ListOptions{})
		},
		"nodes.yaml": func() (any, error) {
			return c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		},
	}
	for name, list := range dumps {
		obj, err := list()
		if err != nil {
			klog.ErrorS(err, "Cannot dump cluster state", "file", name)
			continue
		}
		data, err := yaml.Marshal(obj)
		if err != nil {
			continue
		}
		if err := os.WriteFile(c.Layout.ArtifactPath(name), data, 0o644); err != nil {
			klog.ErrorS(err, "Cannot write dump", "file", name)
		}
	}
}
