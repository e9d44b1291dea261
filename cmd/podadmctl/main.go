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

// Command podadmctl checks a node's pod admission plugin configuration and
// dry-runs pod manifests through its plugins, exactly as the kubelet would.
//
//	podadmctl validate /etc/kubernetes/pod-admission
//	podadmctl check -f pod.yaml --config /etc/kubernetes/pod-admission --bin-dir /usr/libexec/kubernetes/pod-admission
//	podadmctl version
//
// Exit status: 0 success (check: admitted), 1 invalid configuration or a
// rejected pod, 2 usage or other errors.
package main

import (
	"os"

	"github.com/podadmission/podadmission/cmd/podadmctl/app"
)

func main() {
	os.Exit(app.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
