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
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
)

// checkRun writes one line for each problem of the run and returns their
// number: a test that failed (the feature's own tests included), a part
// whose suite exited non-zero (a failure in a set-up node, a timeout or an
// interrupt fails no test of the report), a configuration where no test
// passed (a focus that matches nothing proves nothing). A CI target fails
// on any of them.
func checkRun(w io.Writer, configs []*configuration) int {
	problems := 0
	for _, c := range configs {
		before := problems
		var failed []string
		for name, tc := range c.tests {
			if isFailed(tc) {
				failed = append(failed, name)
			}
		}
		slices.Sort(failed)
		for _, name := range failed {
			fmt.Fprintf(w, "%s: FAILED %s: %s\n", c.name, name, firstLine(c.tests[name]))
			problems++
		}
		dirs := make([]string, 0, len(c.exits))
		for dir := range c.exits {
			dirs = append(dirs, dir)
		}
		sort.Strings(dirs)
		for _, dir := range dirs {
			if code := c.exits[dir]; code != "0" {
				fmt.Fprintf(w, "%s: the suite exited %s: see %s\n", c.name, code, filepath.Join(dir, "build-log.txt"))
				problems++
			}
		}
		passed := len(c.passed)
		for _, name := range c.feature {
			if tc := c.tests[name]; !isFailed(tc) && !isSkipped(tc) {
				passed++
			}
		}
		if passed == 0 {
			fmt.Fprintf(w, "%s: no test passed\n", c.name)
			problems++
		}
		if problems == before {
			fmt.Fprintf(w, "%s: %d tests passed, %d skipped, none failed\n", c.name, passed, len(c.skipped))
		}
	}
	return problems
}
