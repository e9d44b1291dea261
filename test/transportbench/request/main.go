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

// Command request prints the request the transport benchmark sends its
// Exec plugins (benchpod.RequestJSON), for measuring a plugin on it
// outside the benchmark, as build/bench-instructions.sh does.
package main

import (
	"fmt"
	"os"

	"github.com/podadmission/podadmission/test/transportbench/benchpod"
)

func main() {
	data, err := benchpod.RequestJSON()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Stdout.Write(data)
}
