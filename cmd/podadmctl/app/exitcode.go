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

package app

import (
	"errors"
	"fmt"
	"io"
)

// Exit codes of podadmctl.
const (
	// ExitOK: the configuration is valid, or the pod is admitted.
	ExitOK = 0
	// ExitRejected: the configuration is invalid (validate), or the pod is
	// rejected (check).
	ExitRejected = 1
	// ExitError: a usage error, or an error that kept podadmctl from
	// deciding.
	ExitError = 2
)

// exitError ends a command with a given exit code. Its message, if any, has
// been printed already when printed is true.
type exitError struct {
	code    int
	err     error
	printed bool
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// silentExit ends a command with code after it printed its own output.
func silentExit(code int) error { return &exitError{code: code, printed: true} }

// exitCode returns the exit code of err and prints err to stderr unless the
// command printed it already.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return ExitOK
	}
	var exit *exitError
	if errors.As(err, &exit) {
		if !exit.printed && exit.err != nil {
			fmt.Fprintf(stderr, "error: %v\n", exit.err)
		}
		return exit.code
	}
	fmt.Fprintf(stderr, "error: %v\n", err)
	return ExitError
}
