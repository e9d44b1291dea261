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

// Command modinfo prints what the build scripts need from the JSON the go
// command writes about modules, so that the scripts do not parse JSON and
// go.mod files with sed and awk:
//
//	go mod download -json M@V... | modinfo fields [-e] FIELD...
//	go list -m -e -json M@V...   | modinfo fields -e Path Version Error
//	go mod edit -json FILE       | modinfo requires|replaced|staging
//
// Its output is one line per module or directive; it exits 1 when the
// input is not what it expects or names a module the go command could not
// get, and 2 on a usage error. build/modinfo.sh runs it.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

const usage = `usage:
  modinfo fields [-e] FIELD...  of each go mod download -json (or go list -m
                                -json) object on stdin, the FIELDs separated
                                by tabs, one line per object; an object with
                                an Error fails unless -e, which prints it
  modinfo requires              of go mod edit -json on stdin: "go VERSION",
                                "toolchain NAME" and "PATH VERSION" for each
                                requirement
  modinfo replaced              of go mod edit -json on stdin: the left-hand
                                side (PATH or PATH@VERSION) of each replace
  modinfo staging               of go mod edit -json on stdin: NAME of each
                                k8s.io/NAME replaced by ./staging/src/k8s.io/...
`

// usageError is an error in the command line rather than in the input.
type usageError string

func (e usageError) Error() string { return string(e) }

// commands are the subcommands: each reads stdin and writes its lines.
var commands = map[string]func(args []string, in io.Reader, out io.Writer) error{
	"fields":   fields,
	"requires": requires,
	"replaced": replaced,
	"staging":  staging,
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run runs the command line args and returns the exit code: 0, 1 when the
// input is wrong or names a module in error, 2 on a usage error.
func run(args []string, in io.Reader, out, errOut io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(errOut, "modinfo: no subcommand\n%s", usage)
		return 2
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(errOut, "modinfo: unknown subcommand %q\n%s", args[0], usage)
		return 2
	}
	w := bufio.NewWriter(out)
	err := cmd(args[1:], in, w)
	if err == nil {
		err = w.Flush()
	}
	switch {
	case err == nil:
		return 0
	case errors.As(err, new(usageError)):
		fmt.Fprintf(errOut, "modinfo %s: %v\n%s", args[0], err, usage)
		return 2
	default:
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(errOut, "modinfo %s: %s\n", args[0], line)
		}
		return 1
	}
}

// usagef is a usageError.
func usagef(format string, a ...any) error {
	return usageError(fmt.Sprintf(format, a...))
}
