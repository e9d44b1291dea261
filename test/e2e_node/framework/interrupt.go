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

package framework

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"
)

// TearDownOnInterrupt runs down when the harness gets SIGINT (Ctrl-C),
// SIGTERM or SIGHUP, then exits with 128+signal. The components run in
// their own process groups, so a Ctrl-C reaches only the harness, which
// stops them in order. Further signals during teardown are ignored: an
// impatient second Ctrl-C must not leave mounts behind.
func TearDownOnInterrupt(down func()) {
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig := <-signals
		fmt.Fprintf(os.Stderr, "\n%s: tearing the cluster down, please wait\n", sig)
		klog.InfoS("Interrupted: tearing the cluster down", "signal", sig)
		go func() {
			for s := range signals {
				klog.InfoS("Still tearing down; ignoring signal", "signal", s)
			}
		}()
		down()
		klog.Flush()
		fmt.Fprintln(os.Stderr, "cluster is down")
		os.Exit(128 + int(sig.(syscall.Signal)))
	}()
}
