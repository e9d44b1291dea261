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

import "github.com/podadmission/podadmission/test/e2e_node/containerdconfig"

// cniBridgeName is the bridge the containerd mode's pods attach to; the
// teardown deletes it.
const cniBridgeName = "podadme2e0"

// cniSubnet leaves room for more pods than the benchmarks create.
const cniSubnet = "10.244.77.0/24"

// cniConfig is a bridge network without a gateway: pods get an address and
// nothing on the host changes beyond the bridge itself (the tests never
// send traffic to a pod).
func cniConfig(ipamDataDir string) ([]byte, error) {
	return containerdconfig.CNI(containerdconfig.Network{
		Name:        "podadmission-e2e",
		Bridge:      cniBridgeName,
		Subnet:      cniSubnet,
		IPAMDataDir: ipamDataDir,
	})
}
