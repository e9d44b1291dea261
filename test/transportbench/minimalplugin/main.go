// Command minimalplugin is the smallest valid Exec plugin in Go: it admits
// every pod, using only the standard library. The transport benchmark runs
// it next to the SDK-built test plugin, to separate what the Exec transport
// and a process cost from what a plugin's own start-up (Go packages such as
// k8s.io/api, decoding the pod) costs.
package main

import (
	"encoding/json"
	"os"
)

func main() {
	var req struct {
		APIVersion string `json:"apiVersion"`
		UID        string `json:"uid"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	resp := map[string]any{"apiVersion": req.APIVersion, "kind": "PodAdmissionResponse", "uid": req.UID, "allowed": true}
	if err := json.NewEncoder(os.Stdout).Encode(resp); err != nil {
		os.Exit(1)
	}
}
