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

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// goMod is what the subcommands read of go mod edit -json output (the
// GoMod type of go help mod edit).
type goMod struct {
	Module    struct{ Path string }
	Go        string
	Toolchain string
	Require   []struct {
		Path, Version string
		Indirect      bool
	}
	Replace []struct {
		Old, New struct{ Path, Version string }
	}
}

// readGoMod decodes the one go mod edit -json object of in.
func readGoMod(args []string, in io.Reader) (*goMod, error) {
	if len(args) > 0 {
		return nil, usagef("no arguments expected, got %q (go mod edit -json is read from stdin)", args)
	}
	dec := json.NewDecoder(in)
	var m goMod
	if err := dec.Decode(&m); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("no go mod edit -json output on stdin")
		}
		return nil, fmt.Errorf("invalid go mod edit -json output on stdin: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one JSON value on stdin; expected the one object of go mod edit -json")
	}
	if m.Module.Path == "" {
		return nil, errors.New("no Module.Path in the JSON on stdin: not go mod edit -json output")
	}
	for i, r := range m.Require {
		if r.Path == "" || r.Version == "" {
			return nil, fmt.Errorf("go.mod of %s: requirement %d has no Path or no Version", m.Module.Path, i+1)
		}
	}
	for i, r := range m.Replace {
		if r.Old.Path == "" || r.New.Path == "" {
			return nil, fmt.Errorf("go.mod of %s: replacement %d has no Old.Path or no New.Path", m.Module.Path, i+1)
		}
	}
	return &m, nil
}

// requires prints "go VERSION" and "toolchain NAME" for those directives
// and "PATH VERSION" for every requirement, in the go.mod's order.
func requires(args []string, in io.Reader, out io.Writer) error {
	m, err := readGoMod(args, in)
	if err != nil {
		return err
	}
	var lines []string
	if m.Go != "" {
		lines = append(lines, "go "+m.Go)
	}
	if m.Toolchain != "" {
		lines = append(lines, "toolchain "+m.Toolchain)
	}
	for _, r := range m.Require {
		lines = append(lines, r.Path+" "+r.Version)
	}
	return printLines(out, lines)
}

// replaced prints the left-hand side of every replace directive: PATH, or
// PATH@VERSION when it replaces one version.
func replaced(args []string, in io.Reader, out io.Writer) error {
	m, err := readGoMod(args, in)
	if err != nil {
		return err
	}
	var lines []string
	for _, r := range m.Replace {
		old := r.Old.Path
		if r.Old.Version != "" {
			old += "@" + r.Old.Version
		}
		lines = append(lines, old)
	}
	return printLines(out, lines)
}

// stagingDir is where upstream Kubernetes keeps its staging modules.
const stagingDir = "./staging/src/k8s.io/"

// staging prints NAME for every k8s.io/NAME (all versions) that the go.mod
// replaces with a directory under ./staging/src/k8s.io/, as the main
// go.mod of a Kubernetes tree does.
func staging(args []string, in io.Reader, out io.Writer) error {
	m, err := readGoMod(args, in)
	if err != nil {
		return err
	}
	var lines []string
	for _, r := range m.Replace {
		name, ok := strings.CutPrefix(r.Old.Path, "k8s.io/")
		if !ok || name == "" || strings.Contains(name, "/") || r.Old.Version != "" {
			continue
		}
		if r.New.Version != "" || !strings.HasPrefix(r.New.Path, stagingDir) {
			continue
		}
		lines = append(lines, name)
	}
	return printLines(out, lines)
}

func printLines(out io.Writer, lines []string) error {
	for _, line := range lines {
		if _, err := fmt.Fprintln(out, line); err != nil {
			return err
		}
	}
	return nil
}
