// Package stdlibanswer answers one pod admission request from stdin with
// "allowed" on stdout, with the standard library only: the plugin logic of
// the benchmark's minimal plugins.
package stdlibanswer

import (
	"encoding/json"
	"os"
)

// Run reads the request's apiVersion and uid and writes the answer; on a
// failure it exits 1.
func Run() {
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
