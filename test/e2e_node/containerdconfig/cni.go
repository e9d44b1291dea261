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

package containerdconfig

import (
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
)

// Network is a CNI bridge network of the run's own.
type Network struct {
	Name, Bridge, Subnet string
	// IPAMDataDir is where host-local keeps its leases (not the default
	// /var/lib/cni).
	IPAMDataDir string
	// Gateway makes the host the pods' gateway with a default route, so
	// that the host reaches pods (upstream's suite probes them over HTTP);
	// without it nothing on the host changes beyond the bridge itself.
	// Neither masquerades or maps ports.
	Gateway bool
	// Hairpin lets a pod reach itself through the bridge.
	Hairpin bool
}

// CNI is the network's conflist, for containerd's CNI conf_dir.
func CNI(n Network) ([]byte, error) {
	if n.Name == "" || n.Bridge == "" {
		return nil, fmt.Errorf("CNI network: Name and Bridge must be set (name %q, bridge %q)", n.Name, n.Bridge)
	}
	if _, _, err := net.ParseCIDR(n.Subnet); err != nil {
		return nil, fmt.Errorf("CNI network %s: Subnet: %w", n.Name, err)
	}
	if !filepath.IsAbs(n.IPAMDataDir) {
		// host-local would keep its leases in /var/lib/cni, shared with
		// whatever else runs on the machine.
		return nil, fmt.Errorf("CNI network %s: IPAMDataDir must be an absolute path, not %q", n.Name, n.IPAMDataDir)
	}
	ipam := map[string]any{
		"type":    "host-local",
		"ranges":  [][]map[string]string{{{"subnet": n.Subnet}}},
		"dataDir": n.IPAMDataDir,
	}
	if n.Gateway {
		ipam["routes"] = []map[string]string{{"dst": "0.0.0.0/0"}}
	}
	conf := map[string]any{
		"cniVersion": "0.4.0",
		"name":       n.Name,
		"plugins": []any{
			map[string]any{
				"type":        "bridge",
				"bridge":      n.Bridge,
				"isGateway":   n.Gateway,
				"ipMasq":      false,
				"hairpinMode": n.Hairpin,
				"ipam":        ipam,
			},
		},
	}
	return json.MarshalIndent(conf, "", "  ")
}
