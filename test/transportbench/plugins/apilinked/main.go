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

// Command apilinked is an SDK Exec plugin linked with k8s.io/api/core/v1,
// what corepod links, which it does not call: what linking it costs a
// process (its package initialisation, a larger binary), apart from what
// getting the k8s.io/api Pod costs (corepod). It admits every pod: what
// sdkexec's handler reads of the pod costs nothing next to the process.
package main

import (
	"context"

	_ "k8s.io/api/core/v1"

	"github.com/podadmission/podadmission/pkg/plugin"
)

func main() {
	plugin.RunExec(func(context.Context, *plugin.Request) (*plugin.Response, error) {
		return plugin.Allow(), nil
	})
}
