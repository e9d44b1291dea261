// Command minimal is the smallest valid Exec plugin in Go: it admits every
// pod, using only the standard library. The benchmark runs it as the bare
// reference (fork+exec, the request on stdin, the answer on stdout, nothing
// of the kubelet's around it) and through the kubelet's Exec transport.
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
