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

// Command podtypes-gen writes the SDK's package corev1 (pkg/plugin/corev1):
// the Go types that k8s.io/api/core/v1's Pod and NodeSystemInfo reach, with
// the same names, fields, embedding and JSON, declared without
// k8s.io/apimachinery, and a strict decoder for them that uses no
// reflection. It also writes, for package corepod (pkg/plugin/corepod),
// the conversion of the SDK's Pod into k8s.io/api/core/v1's, field by
// field, without reflection either. build/generate.sh runs it:
//
//	go run ./build/podtypes-gen -header build/boilerplate.go.txt \
//	  -out pkg/plugin/corev1 -convert-out pkg/plugin/corepod
//
// It walks the types by reflection, at the k8s.io/api version this module
// pins, and copies the typed constants of the named types it emits from
// their packages' source. The apimachinery types a Pod holds are replaced
// by the package's own, written by hand (replacements): resource.Quantity,
// metav1.Time, intstr.IntOrString, types.UID and metav1.FieldsV1. Any other
// type with its own JSON methods, any kind of value the decoder does not
// support, and any clash of names fails the generator: a new upstream
// release that needs more must be looked at, not guessed.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"

	corev1 "k8s.io/api/core/v1"
)

// roots are the types the SDK hands plugins.
var roots = []any{corev1.Pod{}, corev1.NodeSystemInfo{}}

// converted is the root package corepod converts to k8s.io/api's type.
var converted = reflect.TypeFor[corev1.Pod]()

func main() {
	out := flag.String("out", "", "the package directory to write the types to (pkg/plugin/corev1)")
	convertOut := flag.String("convert-out", "", "the package directory to write the conversion to (pkg/plugin/corepod)")
	header := flag.String("header", "", "the licence header file (build/boilerplate.go.txt)")
	flag.Parse()
	if *out == "" || *convertOut == "" || *header == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: podtypes-gen -header FILE -out DIR -convert-out DIR")
		os.Exit(2)
	}
	if err := run(*out, *convertOut, *header); err != nil {
		fmt.Fprintln(os.Stderr, "podtypes-gen:", err)
		os.Exit(1)
	}
}

func run(out, convertOut, headerFile string) error {
	header, err := os.ReadFile(headerFile)
	if err != nil {
		return err
	}
	handWritten, err := declaredNames(out)
	if err != nil {
		return err
	}
	handWrittenConversions, err := declaredNames(convertOut)
	if err != nil {
		return err
	}
	versions, err := moduleVersions("k8s.io/api", "k8s.io/apimachinery")
	if err != nil {
		return err
	}
	m, err := walk(roots)
	if err != nil {
		return err
	}
	consts, err := typedConstants(m)
	if err != nil {
		return err
	}
	if err := m.checkNames(handWritten, consts); err != nil {
		return err
	}
	origin := fmt.Sprintf("k8s.io/api %s (k8s.io/apimachinery %s)", versions["k8s.io/api"], versions["k8s.io/apimachinery"])
	files := map[string]func() ([]byte, error){
		filepath.Join(out, "zz_generated.types.go"):  func() ([]byte, error) { return m.typesFile(header, origin, consts) },
		filepath.Join(out, "zz_generated.decode.go"): func() ([]byte, error) { return m.decodeFile(header, origin) },
		filepath.Join(convertOut, "zz_generated.convert.go"): func() ([]byte, error) {
			return m.convertFile(header, origin, converted, handWrittenConversions)
		},
	}
	for name, render := range files {
		src, err := render()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := os.WriteFile(name, src, 0o644); err != nil {
			return err
		}
	}
	return nil
}
