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
