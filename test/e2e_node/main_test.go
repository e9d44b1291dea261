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

// Package e2enode holds the node e2e tests: they run the drop-in kubelet
// against a real kube-apiserver, scheduler and controller manager (see
// package framework) and prove that pod admission plugins refuse pods
// without controllers thrashing. Run them with make test-e2e-node.
package e2enode

import (
	"os"
	"testing"

	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

var suite framework.Suite

// The cluster starts with a kubelet that needs nothing from the patch
// series; tests that need plugins restart it with what they need.
func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, framework.KubeletOptions{}, &suite))
}
