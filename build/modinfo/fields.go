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
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// fields prints the named fields of every JSON object on in (go mod
// download -json or go list -m -json output), tab separated, one line per
// object. An object whose Error is set is an error naming the module and
// the go command's error, unless -e: then its Error field is that error
// (on one line) and its missing fields are empty. Nothing is printed when
// any object is in error.
func fields(args []string, in io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("fields", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	keepErrors := fs.Bool("e", false, "print objects with an Error instead of failing")
	if err := fs.Parse(args); err != nil {
		return usagef("%v", err)
	}
	names := fs.Args()
	if len(names) == 0 {
		return usagef("no FIELD to print")
	}
	objects, err := decodeObjects(in)
	if err != nil {
		return err
	}
	var lines []string
	var errs []error
	for _, obj := range objects {
		line, err := obj.line(names, *keepErrors)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		lines = append(lines, line)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return printLines(out, lines)
}

// object is one JSON object the go command printed about a module.
type object struct {
	n      int // its place in the input, from 1
	values map[string]json.RawMessage
}

// decodeObjects reads every JSON object of in; there must be one at least.
func decodeObjects(in io.Reader) ([]object, error) {
	dec := json.NewDecoder(in)
	var objects []object
	for {
		var values map[string]json.RawMessage
		err := dec.Decode(&values)
		if errors.Is(err, io.EOF) {
			break
		}
		n := len(objects) + 1
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typeErr):
			return nil, fmt.Errorf("JSON value %d on stdin is not an object but a JSON %s", n, typeErr.Value)
		case err != nil:
			return nil, fmt.Errorf("invalid JSON on stdin (value %d): %v", n, err)
		case values == nil:
			return nil, fmt.Errorf("JSON value %d on stdin is null, not an object", n)
		}
		objects = append(objects, object{n: n, values: values})
	}
	if len(objects) == 0 {
		return nil, errors.New("no JSON object on stdin (did the go command fail before printing one?)")
	}
	return objects, nil
}

// name is the module the object describes, PATH@VERSION, for messages.
func (o object) name() string {
	path, _ := o.str("Path")
	version, _ := o.str("Version")
	switch {
	case path == "":
		return fmt.Sprintf("(JSON object %d)", o.n)
	case version == "":
		return path
	default:
		return path + "@" + version
	}
}

// str is the field as a string: a JSON string as it is, any other value as
// its JSON text; ok is false when the field is missing or null.
func (o object) str(name string) (s string, ok bool) {
	raw, ok := o.values[name]
	if !ok || string(raw) == "null" {
		return "", false
	}
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, true
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw), true
	}
	return b.String(), true
}

// moduleError is the object's Error on one line, without the PATH@VERSION
// the go command starts it with, or "". go mod download -json prints it as
// a string, go list -m -json as an object {"Err": "..."}.
func (o object) moduleError() string {
	raw, ok := o.values["Error"]
	if !ok || string(raw) == "null" {
		return ""
	}
	var text string
	if json.Unmarshal(raw, &text) != nil {
		var obj struct{ Err string }
		if json.Unmarshal(raw, &obj) == nil && obj.Err != "" {
			text = obj.Err
		} else {
			text, _ = o.str("Error")
		}
	}
	text = strings.TrimPrefix(text, o.name()+": ")
	return oneLine(text)
}

// oneLine joins the lines of a go command error with "; ".
func oneLine(s string) string {
	var parts []string
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, "; ")
}

// line is the object's line: the named fields, tab separated.
func (o object) line(names []string, keepErrors bool) (string, error) {
	modErr := o.moduleError()
	if modErr != "" && !keepErrors {
		return "", fmt.Errorf("module %s: %s", o.name(), modErr)
	}
	values := make([]string, len(names))
	for i, name := range names {
		if name == "Error" {
			values[i] = modErr
			continue
		}
		value, ok := o.str(name)
		if !ok && modErr == "" {
			return "", fmt.Errorf("module %s: no %s in its JSON (it has %s)", o.name(), name, strings.Join(o.names(), ", "))
		}
		if strings.ContainsAny(value, "\t\n") {
			return "", fmt.Errorf("module %s: its %s %q has a tab or a newline, which the output cannot hold", o.name(), name, value)
		}
		values[i] = value
	}
	return strings.Join(values, "\t"), nil
}

// names are the object's field names, sorted.
func (o object) names() []string {
	names := make([]string, 0, len(o.values))
	for name := range o.values {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
