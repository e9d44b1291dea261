//go:build e2e_node

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
