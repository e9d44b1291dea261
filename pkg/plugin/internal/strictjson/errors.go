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

package strictjson

import (
	"strconv"
	"strings"
)

// errorKind tells the kinds of Error apart, for their messages.
type errorKind uint8

const (
	unknownField errorKind = iota
	duplicateField
	invalidValue
	syntaxError
)

// Error is one fault of a document, at a path such as
// spec.containers[0].image (empty for the document itself).
type Error struct {
	kind errorKind
	path string
	msg  string
}

// Error formats unknown and duplicate fields as sigs.k8s.io/json does,
// other faults as "path: message".
func (e *Error) Error() string {
	switch e.kind {
	case unknownField:
		return "unknown field " + strconv.Quote(e.path)
	case duplicateField:
		return "duplicate field " + strconv.Quote(e.path)
	}
	if e.path == "" {
		return e.msg
	}
	return e.path + ": " + e.msg
}

const (
	// maxErrors is how many faults a decoder collects, as
	// sigs.k8s.io/json does; the rest are dropped.
	maxErrors = 100
	// maxShown is how many of them an error message lists: messages end
	// up in pod statuses.
	maxShown = 5
)

// Errors is what Decode returns: every fault found, in document order; a
// syntax error alone, since nothing after it can be read.
type Errors []*Error

// Error lists the first few faults on one line.
func (errs Errors) Error() string {
	msgs := make([]string, 0, maxShown+1)
	for i, err := range errs {
		if i == maxShown {
			msgs = append(msgs, "and "+strconv.Itoa(len(errs)-maxShown)+" more")
			break
		}
		msgs = append(msgs, err.Error())
	}
	return strings.Join(msgs, ", ")
}

// join appends path to field: "pod" and "spec.x" give "pod.spec.x", "pod"
// and "[0]" give "pod[0]".
func join(field, path string) string {
	switch {
	case path == "":
		return field
	case field == "":
		return path
	case path[0] == '[':
		return field + path
	}
	return field + "." + path
}
