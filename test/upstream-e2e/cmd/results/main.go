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

// Command results writes test/upstream-e2e/RESULTS.md from the JUnit
// reports of one run of upstream's node e2e suite against several kubelet
// configurations (test/upstream-e2e/run.sh): per configuration the tests
// passed, failed and skipped, the difference of every pass set from the
// reference configuration's, and the tests that fail on the reference too,
// each with its cause from the causes file ("regexp<TAB>cause" lines,
// matched against the test's name; the failure's first line otherwise).
//
//	results -runs DIR -causes causes.tsv -command 'make ...' CONFIGURATION...
//
// The first configuration is the reference. It exits 1 when a test that
// passes on the reference does not pass on another configuration.
//
//	results -check -runs DIR CONFIGURATION...
//
// checks a run instead of reporting on it (check.go): it names every test
// that failed and exits 1 when one did, when the suite itself exited
// non-zero or when no test passed.
package main

import (
	"bufio"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

type testcase struct {
	Name    string `xml:"name,attr"`
	Status  string `xml:"status,attr"`
	Failure *struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	} `xml:"failure"`
	Error *struct {
		Message string `xml:"message,attr"`
	} `xml:"error"`
	Skipped *struct {
		Message string `xml:"message,attr"`
	} `xml:"skipped"`
}

// notSelected is a spec the run's focus, skip or label filter left out:
// ginkgo reports it as skipped with the bare message "skipped".
func notSelected(tc testcase) bool {
	return tc.Skipped != nil && tc.Skipped.Message == "skipped" && tc.Failure == nil && tc.Error == nil
}

type configuration struct {
	name    string
	tests   map[string]testcase
	passed  []string
	failed  []string
	skipped []string
	feature []string
	seconds int
	// exits holds the suite's exit code (run.sh's exit-code) of each part,
	// by the part's directory.
	exits   map[string]string
	kubelet string
	runtime string
}

// featureLabel marks the feature's own tests in their names.
var featureLabel = new(string)

func isFeatureTest(name string) bool {
	return *featureLabel != "" && strings.Contains(name, *featureLabel)
}

type cause struct {
	re    *regexp.Regexp
	cause string
}

func main() {
	runs := flag.String("runs", "", "the run's directories (comma-separated, one per part of the run), each with one subdirectory per configuration")
	causesFile := flag.String("causes", "", "file of \"regexp<TAB>cause\" lines for the tests that fail on the reference")
	command := flag.String("command", "", "the command that made the run, for the report")
	selection := flag.String("selection", "", "what the run selected, for the report")
	check := flag.Bool("check", false, "check the run instead of writing the report: exit 1 when a test failed, the suite exited non-zero or no test passed")
	featureLabel = flag.String("feature", "[Feature:PodAdmissionPlugin]", "the feature's own tests: reported on their own, out of the pass-set comparison (they depend on the gate)")
	flag.Parse()
	if *runs == "" || flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: results -runs DIR [-causes FILE] [-command CMD] CONFIGURATION...")
		os.Exit(2)
	}
	causes, err := readCauses(*causesFile)
	if err != nil {
		fail(err)
	}
	var configs []*configuration
	for _, name := range flag.Args() {
		c := &configuration{name: name, tests: map[string]testcase{}}
		for _, dir := range strings.Split(*runs, ",") {
			if err := c.load(filepath.Join(dir, name)); err != nil {
				fail(err)
			}
		}
		c.classify()
		configs = append(configs, c)
	}
	if *check {
		if problems := checkRun(os.Stdout, configs); problems > 0 {
			fmt.Fprintf(os.Stderr, "results: %d problems in the run (above)\n", problems)
			os.Exit(1)
		}
		return
	}
	regressions := report(os.Stdout, configs, causes, *command, *selection)
	if regressions > 0 {
		fmt.Fprintf(os.Stderr, "results: %d tests pass on %s and not on another configuration\n", regressions, configs[0].name)
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "results: %v\n", err)
	os.Exit(2)
}

func readCauses(path string) ([]cause, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var causes []cause
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		expr, text, ok := strings.Cut(line, "\t")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want regexp<TAB>cause", path, n)
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		causes = append(causes, cause{re, text})
	}
	return causes, s.Err()
}

// load adds the tests of the JUnit reports in dir, one part of the run.
func (c *configuration) load(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "junit*.xml"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("%s: no JUnit report (junit*.xml): did the suite start? (see its build-log.txt)", dir)
	}
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		d := xml.NewDecoder(f)
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			} else if err != nil {
				f.Close()
				return fmt.Errorf("%s: %w", file, err)
			}
			if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "testcase" {
				var tc testcase
				if err := d.DecodeElement(&tc, &se); err != nil {
					f.Close()
					return fmt.Errorf("%s: %w", file, err)
				}
				if notSelected(tc) {
					continue
				}
				// A test a part only skipped does not hide its result in another.
				if old, seen := c.tests[tc.Name]; !seen || isSkipped(old) {
					c.tests[tc.Name] = tc
				}
			}
		}
		f.Close()
	}
	c.seconds += atoi(readTrimmed(filepath.Join(dir, "seconds")))
	if c.exits == nil {
		c.exits = map[string]string{}
	}
	c.exits[dir] = readTrimmed(filepath.Join(dir, "exit-code"))
	c.kubelet = readTrimmed(filepath.Join(dir, "kubelet-version"))
	c.runtime = runtimeVersions(readTrimmed(filepath.Join(dir, "runtime-versions.txt")))
	return nil
}

// runtimeVersions shortens the output of containerd --version and runc
// --version (run.sh's runtime-versions.txt) to "containerd v2.4.2, runc
// 1.5.3"; "?" when the file is missing or names neither.
func runtimeVersions(text string) string {
	var names []string
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "containerd":
			names = append(names, "containerd "+f[2])
		case len(f) >= 3 && f[0] == "runc" && f[1] == "version":
			names = append(names, "runc "+f[2])
		}
	}
	if len(names) == 0 {
		return "?"
	}
	return strings.Join(names, ", ")
}

func atoi(s string) int {
	n := 0
	fmt.Sscanf(s, "%d", &n)
	return n
}

func isSkipped(tc testcase) bool {
	return tc.Failure == nil && tc.Error == nil && (tc.Skipped != nil || tc.Status == "skipped" || tc.Status == "pending")
}

func isFailed(tc testcase) bool {
	switch tc.Status {
	case "failed", "panicked", "timedout", "interrupted", "aborted":
		return true
	}
	return tc.Failure != nil || tc.Error != nil
}

func (c *configuration) classify() {
	for name, tc := range c.tests {
		switch {
		case isFeatureTest(name):
			c.feature = append(c.feature, name)
		case isFailed(tc):
			c.failed = append(c.failed, name)
		case isSkipped(tc):
			c.skipped = append(c.skipped, name)
		default:
			c.passed = append(c.passed, name)
		}
	}
	slices.Sort(c.passed)
	slices.Sort(c.failed)
	slices.Sort(c.skipped)
	slices.Sort(c.feature)
}

func readTrimmed(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

func firstLine(tc testcase) string {
	msg := ""
	if tc.Failure != nil {
		msg = tc.Failure.Message
		if msg == "" {
			msg = tc.Failure.Text
		}
	} else if tc.Error != nil {
		msg = tc.Error.Message
	}
	msg = strings.TrimSpace(msg)
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	return strings.ReplaceAll(msg, "|", "\\|")
}

func (c causeList) of(name string, tc testcase) string {
	for _, k := range c {
		if k.re.MatchString(name) {
			return k.cause
		}
	}
	return "not root-caused yet: " + firstLine(tc)
}

type causeList []cause

func cell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// report writes RESULTS.md and returns the number of regressions: tests
// that pass on the reference and not on some other configuration.
func report(w io.Writer, configs []*configuration, causes causeList, command, selection string) int {
	ref := configs[0]
	fmt.Fprintln(w, "# Upstream's node e2e suite against the drop-in kubelet")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Written by `test/upstream-e2e/cmd/results` from one run of `test/upstream-e2e/run.sh`; see [README.md](README.md) for the node set-up and the choice of tests.")
	fmt.Fprintln(w)
	if command != "" {
		fmt.Fprintf(w, "Command: `%s`", command)
		if selection != "" {
			fmt.Fprintf(w, " (%s)", selection)
		}
		fmt.Fprintln(w, ".")
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "Upstream's tests (the suite's set-up and report nodes included; the feature's own tests are counted apart, below):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| Configuration | Kubelet | Runtime | Passed | Failed | Skipped | Duration |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, c := range configs {
		fmt.Fprintf(w, "| %s | %s | %s | %d | %d | %d | %d s |\n", c.name, cell(c.kubelet), cell(c.runtime), len(c.passed), len(c.failed), len(c.skipped), c.seconds)
	}
	fmt.Fprintln(w)

	regressions := 0
	fmt.Fprintf(w, "## Pass sets compared with %s\n\n", ref.name)
	for _, c := range configs[1:] {
		var lost, gained []string
		for _, name := range ref.passed {
			if !slices.Contains(c.passed, name) {
				lost = append(lost, name)
			}
		}
		for _, name := range c.passed {
			if !slices.Contains(ref.passed, name) {
				gained = append(gained, name)
			}
		}
		regressions += len(lost)
		if len(lost) == 0 && len(gained) == 0 {
			fmt.Fprintf(w, "- **%s**: the same pass set as %s (%d tests).\n", c.name, ref.name, len(ref.passed))
			continue
		}
		fmt.Fprintf(w, "- **%s**: %d passed on %s and not here, %d passed here and not on %s.\n", c.name, len(lost), ref.name, len(gained), ref.name)
		for _, name := range lost {
			tc, ran := c.tests[name]
			what := "not run"
			if ran {
				what = "failed: " + firstLine(tc)
				if !isFailed(tc) {
					what = "skipped"
				}
			}
			fmt.Fprintf(w, "  - lost: `%s` (%s) — %s\n", cell(name), what, cell(causes.ofRegression(name)))
		}
		for _, name := range gained {
			fmt.Fprintf(w, "  - gained: `%s` (on %s: %s)\n", cell(name), ref.name, statusOn(ref, name))
		}
	}
	fmt.Fprintln(w)

	fmt.Fprintln(w, "## The feature's own tests (patch 0013)")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Not in the comparison above: they depend on the gate (those of the gate on skip themselves with it off, and the gate-off one with it on).\n\n")
	var names []string
	for _, c := range configs {
		for _, n := range c.feature {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		fmt.Fprintln(w, "None ran.")
	} else {
		fmt.Fprint(w, "| Test |")
		for _, c := range configs {
			fmt.Fprintf(w, " %s |", c.name)
		}
		fmt.Fprint(w, "\n|---|")
		for range configs {
			fmt.Fprint(w, "---|")
		}
		fmt.Fprintln(w)
		for _, n := range names {
			fmt.Fprintf(w, "| `%s` |", cell(n))
			for _, c := range configs {
				fmt.Fprintf(w, " %s |", cell(statusWord(c, n)))
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w)

	fmt.Fprintf(w, "## Tests that fail on %s too\n\n", ref.name)
	if len(ref.failed) == 0 {
		fmt.Fprintln(w, "None.")
	} else {
		fmt.Fprintln(w, "| Test | Fails on | Cause |")
		fmt.Fprintln(w, "|---|---|---|")
		for _, name := range ref.failed {
			var on []string
			for _, c := range configs {
				if slices.Contains(c.failed, name) {
					on = append(on, c.name)
				}
			}
			fmt.Fprintf(w, "| `%s` | %s | %s |\n", cell(name), strings.Join(on, ", "), cell(causes.of(name, ref.tests[name])))
		}
	}
	return regressions
}

// ofRegression is the cause recorded for a test lost on the drop-in, if
// one is: a regression is a bug until its cause is written down.
func (c causeList) ofRegression(name string) string {
	for _, k := range c {
		if k.re.MatchString(name) {
			return k.cause
		}
	}
	return "a bug: not root-caused yet"
}

func statusWord(c *configuration, name string) string {
	tc, ok := c.tests[name]
	switch {
	case !ok:
		return "not run"
	case isFailed(tc):
		return "failed: " + firstLine(tc)
	case isSkipped(tc):
		return "skipped"
	}
	return "passed"
}

func statusOn(c *configuration, name string) string {
	tc, ok := c.tests[name]
	switch {
	case !ok:
		return "not run"
	case slices.Contains(c.failed, name):
		return "failed: " + firstLine(tc)
	default:
		return "skipped"
	}
}
