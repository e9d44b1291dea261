// Command pod-security-plugin is an Exec pod admission plugin that enforces
// a Pod Security Standards level on the pods of a node, with the policy
// evaluator of the apiserver's PodSecurity admission.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/podadmission/podadmission/pkg/plugin"
)

func main() {
	o := &options{}
	fs := pflag.NewFlagSet("pod-security-plugin", pflag.ContinueOnError)
	o.addFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		fail(err)
	}
	if fs.NArg() > 0 {
		fail(fmt.Errorf("unexpected argument %q; flags are %s", fs.Arg(0), flagNames(fs)))
	}
	p, err := newPodSecurityPolicy(o)
	if err != nil {
		fail(err)
	}
	// The SDK's core, without its GRPC server (package grpcplugin): this
	// process starts for every pod, and pays for every package it links.
	plugin.RunExec(p.handle)
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
