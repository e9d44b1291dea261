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

// Command e2e-cluster drives the node e2e cluster outside the test suite:
//
//	e2e-cluster up [-e2e.* flags]     bring the cluster up and keep it until Ctrl-C
//	e2e-cluster demo [-e2e.* flags]   bring it up, show a plugin holding a pod and
//	                                  then admitting it, keep it until Ctrl-C
//	e2e-cluster clean                 remove what a run killed with SIGKILL left
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"k8s.io/klog/v2"

	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

func main() {
	klog.InitFlags(nil)
	if len(os.Args) < 2 {
		usage()
	}
	command := os.Args[1]
	if err := flag.CommandLine.Parse(os.Args[2:]); err != nil {
		usage()
	}
	var err error
	switch command {
	case "up":
		err = up(context.Background())
	case "demo":
		err = demo(context.Background())
	case "clean":
		err = framework.CleanupStale()
	default:
		usage()
	}
	klog.Flush()
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: e2e-cluster up|demo|clean [-e2e.runtime=containerd|fake] [-e2e.bin-dir=DIR] [-e2e.artifacts=DIR]")
	flag.PrintDefaults()
	os.Exit(2)
}

// up brings the cluster up and waits for Ctrl-C, which tears it down.
func up(ctx context.Context) error {
	opts, err := framework.OptionsFromFlags(framework.KubeletOptions{})
	if err != nil {
		return err
	}
	cluster, err := framework.UpUntilInterrupted(ctx, opts)
	if err != nil {
		return err
	}
	fmt.Printf("cluster is up in %s\n  kubeconfig: %s\n  artifacts:  %s\nCtrl-C tears it down.\n",
		cluster.StartupTime.Round(1e6), cluster.ControlPlane.AdminKubeconfig, cluster.Layout.Artifacts)
	select {}
}
