//go:build e2e_node

package framework

import "encoding/json"

// cniBridgeName is the bridge the containerd mode's pods attach to; the
// teardown deletes it.
const cniBridgeName = "podadme2e0"

// cniSubnet leaves room for more pods than the benchmarks create.
const cniSubnet = "10.244.77.0/24"

// cniConfig is a bridge network without a gateway, masquerading or
// forwarding: pods get an address and nothing on the host changes beyond
// the bridge itself (the tests never send traffic to a pod).
func cniConfig(ipamDataDir string) ([]byte, error) {
	conf := map[string]any{
		"cniVersion": "0.4.0",
		"name":       "podadmission-e2e",
		"plugins": []any{
			map[string]any{
				"type":        "bridge",
				"bridge":      cniBridgeName,
				"isGateway":   false,
				"ipMasq":      false,
				"hairpinMode": false,
				"ipam": map[string]any{
					"type":    "host-local",
					"ranges":  [][]map[string]string{{{"subnet": cniSubnet}}},
					"dataDir": ipamDataDir,
				},
			},
		},
	}
	return json.MarshalIndent(conf, "", "  ")
}
