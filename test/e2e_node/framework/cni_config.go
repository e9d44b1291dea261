//go:build e2e_node

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
