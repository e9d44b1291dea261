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

// Command linked is the minimal plugin (plugins/minimal) with the SDK
// linked in but not called: what an Exec plugin pays at every start for the
// packages the SDK brings (k8s.io/api and its dependencies: their
// initialisation, a larger binary), before it decodes anything.
package main

import (
	_ "github.com/podadmission/podadmission/pkg/plugin"
	"github.com/podadmission/podadmission/test/transportbench/plugins/stdlibanswer"
)

func main() { stdlibanswer.Run() }
