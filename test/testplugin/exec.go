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

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
	"github.com/podadmission/podadmission/pkg/plugin"
)

// runExec serves one call as an Exec plugin. The modes that break the
// protocol on purpose write stdout themselves, since the SDK cannot be made
// to send anything invalid.
func runExec(o *options) {
	if o.decisionFile != "" {
		plugin.RunExec(o.handler)
	}
	switch o.mode {
	case modeCrash:
		fmt.Fprintln(os.Stderr, "testplugin: crashing as asked")
		os.Exit(3)
	case modeGarbage:
		fmt.Println("this is not a PodAdmissionResponse")
		os.Exit(0)
	case modeHuge:
		chunk := bytes.Repeat([]byte("x"), protocol.MaxResponseSize)
		for range 10 {
			if _, err := os.Stdout.Write(chunk); err != nil {
				fail(err)
			}
		}
		os.Exit(0)
	case modeWrongAPIVersion:
		stdin, err := io.ReadAll(os.Stdin)
		if err != nil {
			fail(err)
		}
		req, err := plugin.DecodeRequest(stdin)
		if err != nil {
			fail(err)
		}
		out, _ := json.Marshal(map[string]any{"apiVersion": "podadmission.kubelet.k8s.io/v1", "kind": "PodAdmissionResponse", "uid": req.UID, "allowed": true})
		os.Stdout.Write(out)
		os.Exit(0)
	case modeForkSleep:
		// The pids as the host sees them (/proc is the host's): the
		// plugin runs in a PID namespace of its own.
		self, err := os.Readlink("/proc/self")
		if err != nil {
			fail(err)
		}
		r, w, err := os.Pipe()
		if err != nil {
			fail(err)
		}
		child := exec.Command("/bin/sh", "-c", `read -r pid rest < /proc/self/stat; echo "$pid" >&3; exec 3>&-; exec sleep 3600`)
		child.Stdout = os.Stdout
		child.ExtraFiles = []*os.File{w}
		if err := child.Start(); err != nil {
			fail(err)
		}
		w.Close()
		childPid, err := io.ReadAll(r)
		if err != nil {
			fail(err)
		}
		fmt.Fprintf(os.Stderr, "testplugin: pid %s forked child pid %s\n", self, bytes.TrimSpace(childPid))
		time.Sleep(24 * time.Hour)
		os.Exit(0)
	}
	plugin.RunExec(o.handler)
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "testplugin: %v\n", err)
	os.Exit(1)
}
