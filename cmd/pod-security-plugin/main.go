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

// Command pod-security-plugin is an Exec pod admission plugin that enforces
// a Pod Security Standards level on the pods of a node, with the policy
// evaluator of the apiserver's PodSecurity admission.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/podadmission/podadmission/cmd/pod-security-plugin/app"
	"github.com/podadmission/podadmission/pkg/plugin"
)

func main() {
	o := &app.Options{}
	fs := pflag.NewFlagSet("pod-security-plugin", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		fail(err)
	}
	if fs.NArg() > 0 {
		fail(fmt.Errorf("unexpected argument %q; flags are %s", fs.Arg(0), flagNames(fs)))
	}
	p, err := app.NewPolicy(o)
	if err != nil {
		fail(err)
	}
	// The SDK's core, without its GRPC server (package grpcplugin): this
	// process starts for every pod, and pays for every package it links.
	// The evaluator needs k8s.io/api/core/v1's Pod (package corepod), which
	// it pays for (docs/plugins.md); pod-security-plugin-grpc pays once.
	plugin.RunExec(p.Handle)
}

func flagNames(fs *pflag.FlagSet) string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, "--"+f.Name) })
	return strings.Join(names, ", ")
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "pod-security-plugin: %v\n", err)
	os.Exit(1)
}
