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

// Command minimal is the smallest valid Exec plugin in Go: it admits every
// pod, using only the standard library. The benchmark runs it as the bare
// reference (fork+exec, the request on stdin, the answer on stdout, nothing
// of the kubelet's around it) and through the kubelet's Exec transport.
package main

import "github.com/podadmission/podadmission/test/transportbench/plugins/stdlibanswer"

func main() { stdlibanswer.Run() }
