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

// Package nri runs the same two policies, "hold the pods labelled X until a
// flag is set" and "refuse hostNetwork pods", once as an NRI plugin in
// containerd 2.x (test/e2e_node/nriplugin, written with containerd's NRI
// stub library) and once as podadmission plugins in the kubelet, on one
// node, side by side, and reports what each leaves on the node, what the
// pod's status and events say, how often the kubelet and the controller
// try again, what happens when the plugin hangs or is not running, and the
// time from the release to Running. make bench-nri runs it and writes the
// nri section of BENCHMARKS.md.
package nri

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

var (
	suite framework.Suite

	reportFile    = flag.String("e2e.nri-report", "", "file to write the markdown table of the comparison into")
	reportCommand = flag.String("e2e.nri-command", "make bench-nri", "the command line the report says produced it")
	window        = flag.Duration("e2e.nri-window", 2*time.Minute, "how long the held and refused pods are watched")
)

// The NRI plugin's name, which containerd's default validator requires,
// and the annotation with which a pod's author waives that.
const (
	nriPluginName        = "podadmission-nri"
	tolerateMissingNRI   = "e2e.podadmission.io/tolerate-missing-nri"
	nriPluginRequestTime = 2 * time.Second
)

func TestMain(m *testing.M) {
	code := framework.RunSuite(m, framework.KubeletOptions{PodAdmission: true, PluginFlags: true}, &suite, func(o *framework.Options) {
		o.NRI = &framework.NRIOptions{
			RequestTimeout:            nriPluginRequestTime,
			RequiredPlugins:           []string{nriPluginName},
			TolerateMissingAnnotation: tolerateMissingNRI,
		}
	})
	if code == 0 && *reportFile != "" {
		if err := os.WriteFile(*reportFile, []byte(report.markdown(*reportCommand)), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: writing %s: %v\n", *reportFile, err)
			code = 1
		}
	}
	os.Exit(code)
}
