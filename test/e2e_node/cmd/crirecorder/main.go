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

// Command crirecorder is the CRI proxy of package crirecord: the kubelet of
// the node e2e cluster talks to the runtime through it, and it records the
// pod lifecycle calls in a journal the tests read.
package main

import (
	"errors"
	"flag"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/podadmission/podadmission/test/e2e_node/crirecord"
)

func main() {
	listen := flag.String("listen", "", "unix socket to serve the CRI on, as unix:///path (required)")
	runtimeEndpoint := flag.String("runtime-endpoint", "", "the runtime's CRI socket, as unix:///path (required)")
	journal := flag.String("journal", "", "file to append the JSON-lines call journal to (required)")
	klog.InitFlags(nil)
	flag.Parse()

	if *listen == "" || *runtimeEndpoint == "" || *journal == "" {
		klog.ErrorS(errors.New("--listen, --runtime-endpoint and --journal are required"), "Bad usage")
		os.Exit(2)
	}
	proxy, err := crirecord.NewProxy(*runtimeEndpoint, *journal)
	if err != nil {
		klog.ErrorS(err, "Cannot start the CRI recorder")
		os.Exit(1)
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		sig := <-signals
		klog.InfoS("Stopping the CRI recorder", "signal", sig)
		proxy.Stop()
	}()
	klog.InfoS("CRI recorder serving", "listen", *listen, "runtime", *runtimeEndpoint, "journal", *journal)
	if err := proxy.Serve(*listen); err != nil {
		klog.ErrorS(err, "CRI recorder stopped")
		os.Exit(1)
	}
}
