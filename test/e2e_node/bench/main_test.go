//go:build e2e_node

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

// Package bench measures, on the node e2e cluster, what soft admission
// costs and saves: pods created by controllers in a window, soft against
// hard; the time from a GRPC plugin's push to Running; a 110-pod burst with
// and without a plugin; and the cost of holding 100 pods against running
// 100. make bench-e2e runs it and writes the rows into BENCHMARKS.md.
package bench

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

var (
	suite framework.Suite

	reportFile    = flag.String("e2e.bench-report", "", "file to write the markdown report of the run into")
	reportCommand = flag.String("e2e.bench-command", "make bench-e2e", "the command line the report says produced it")
)

func TestMain(m *testing.M) {
	code := framework.RunSuite(m, framework.KubeletOptions{}, &suite)
	if code == 0 && *reportFile != "" {
		if err := writeReport(*reportFile, *reportCommand); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: writing %s: %v\n", *reportFile, err)
			code = 1
		}
	}
	os.Exit(code)
}
