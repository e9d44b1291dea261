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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// What go mod download -json prints for a module it downloaded and for
// one the proxy refuses (go list -m -e -json prints Error as an object).
const (
	downloaded = `{
	"Path": "k8s.io/kubernetes",
	"Version": "v1.37.2",
	"Info": "/mod/cache/download/k8s.io/kubernetes/@v/v1.37.2.info",
	"GoMod": "/mod/cache/download/k8s.io/kubernetes/@v/v1.37.2.mod",
	"Dir": "/mod/k8s.io/kubernetes@v1.37.2",
	"Sum": "h1:A2VDEiObzkYqFTKhSsn0ZEb0RlLEXpHWj93gi2HqEwE="
}
`
	refused = `{
	"Path": "k8s.io/kubernetes",
	"Version": "v1.37.77",
	"Error": "k8s.io/kubernetes@v1.37.77: reading https://proxy.golang.org/k8s.io/kubernetes/@v/v1.37.77.info: 403 Forbidden\n\tserver response: This module version is not available."
}
`
	listedError = `{
	"Path": "example.invalid/nope",
	"Version": "v1.0.0",
	"Error": {
		"Err": "example.invalid/nope@v1.0.0: reading https://proxy.golang.org/example.invalid/nope/@v/v1.0.0.info: 400 Bad Request"
	}
}
`
	listed = `{
	"Path": "k8s.io/api",
	"Version": "v0.37.2",
	"Time": "2026-10-28T07:53:31Z",
	"GoMod": "/mod/cache/download/k8s.io/api/@v/v0.37.2.mod",
	"Main": false
}
`
	// What go mod edit -json prints for goModText.
	goModJSON = `{
	"Module": {"Path": "example.com/fixture"},
	"Go": "1.24.0",
	"Toolchain": "go1.24.3",
	"Require": [
		{"Path": "example.com/single", "Version": "v1.2.3"},
		{"Path": "example.com/b", "Version": "v0.0.0-20240101000000-abcdefabcdef", "Indirect": true}
	],
	"Exclude": [{"Path": "example.com/x", "Version": "v1.0.0"}],
	"Replace": [
		{"Old": {"Path": "example.com/single"}, "New": {"Path": "../single"}},
		{"Old": {"Path": "example.com/a", "Version": "v1.0.0"}, "New": {"Path": "example.com/a-fork", "Version": "v1.0.1"}},
		{"Old": {"Path": "k8s.io/api"}, "New": {"Path": "./staging/src/k8s.io/api"}},
		{"Old": {"Path": "k8s.io/client-go"}, "New": {"Path": "./staging/src/k8s.io/client-go"}},
		{"Old": {"Path": "k8s.io/kms", "Version": "v0.37.2"}, "New": {"Path": "./staging/src/k8s.io/kms"}},
		{"Old": {"Path": "k8s.io/utils"}, "New": {"Path": "k8s.io/utils", "Version": "v0.1.0"}},
		{"Old": {"Path": "k8s.io/klog/v2"}, "New": {"Path": "./staging/src/k8s.io/klog"}},
		{"Old": {"Path": "sigs.k8s.io/yaml"}, "New": {"Path": "./staging/src/k8s.io/yaml"}}
	],
	"Tool": [{"Path": "example.com/tool"}]
}
`
)

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		stdin  string
		stdout string
		code   int
		stderr []string // each is in stderr
	}{
		{
			name:   "fields of a download",
			args:   []string{"fields", "Dir", "Sum"},
			stdin:  downloaded,
			stdout: "/mod/k8s.io/kubernetes@v1.37.2\th1:A2VDEiObzkYqFTKhSsn0ZEb0RlLEXpHWj93gi2HqEwE=\n",
		},
		{
			name:   "one line per object",
			args:   []string{"fields", "Path", "Version"},
			stdin:  downloaded + listed,
			stdout: "k8s.io/kubernetes\tv1.37.2\nk8s.io/api\tv0.37.2\n",
		},
		{
			name:   "a field that is not a string",
			args:   []string{"fields", "Main", "Time"},
			stdin:  listed,
			stdout: "false\t2026-10-28T07:53:31Z\n",
		},
		{
			name:   "an .info file",
			args:   []string{"fields", "Time"},
			stdin:  `{"Version":"v1.37.2","Time":"2026-10-27T12:01:04Z","Origin":{"VCS":"git"}}`,
			stdout: "2026-10-27T12:01:04Z\n",
		},
		{
			name:  "a module the proxy refuses",
			args:  []string{"fields", "Dir"},
			stdin: downloaded + refused,
			code:  1,
			stderr: []string{"modinfo fields: module k8s.io/kubernetes@v1.37.77: reading https://proxy.golang.org/k8s.io/kubernetes/@v/v1.37.77.info: " +
				"403 Forbidden; server response: This module version is not available.\n"},
		},
		{
			name:  "every module in error is named",
			args:  []string{"fields", "Dir"},
			stdin: refused + downloaded + listedError,
			code:  1,
			stderr: []string{
				"module k8s.io/kubernetes@v1.37.77: reading ",
				"modinfo fields: module example.invalid/nope@v1.0.0: reading https://proxy.golang.org/example.invalid/nope/@v/v1.0.0.info: 400 Bad Request\n",
			},
		},
		{
			name:  "-e prints the errors",
			args:  []string{"fields", "-e", "Path", "Version", "Error"},
			stdin: downloaded + refused + listedError,
			stdout: "k8s.io/kubernetes\tv1.37.2\t\n" +
				"k8s.io/kubernetes\tv1.37.77\treading https://proxy.golang.org/k8s.io/kubernetes/@v/v1.37.77.info: 403 Forbidden; server response: This module version is not available.\n" +
				"example.invalid/nope\tv1.0.0\treading https://proxy.golang.org/example.invalid/nope/@v/v1.0.0.info: 400 Bad Request\n",
		},
		{
			name:   "-e: a module in error has no Dir",
			args:   []string{"fields", "-e", "Dir", "Path"},
			stdin:  refused,
			stdout: "\tk8s.io/kubernetes\n",
		},
		{
			name:   "an error that does not start with the module",
			args:   []string{"fields", "Dir"},
			stdin:  `{"Path": "m", "Version": "v1", "Error": "no such module"}`,
			code:   1,
			stderr: []string{"modinfo fields: module m@v1: no such module\n"},
		},
		{
			name:   "an error object without Err",
			args:   []string{"fields", "Dir"},
			stdin:  `{"Path": "m", "Error": {"Code": 3}}`,
			code:   1,
			stderr: []string{`modinfo fields: module m: {"Code":3}`},
		},
		{
			name:   "a missing field",
			args:   []string{"fields", "Dir"},
			stdin:  listed,
			code:   1,
			stderr: []string{"modinfo fields: module k8s.io/api@v0.37.2: no Dir in its JSON (it has GoMod, Main, Path, Time, Version)\n"},
		},
		{
			name:   "a null field is missing",
			args:   []string{"fields", "Dir"},
			stdin:  `{"Path": "m", "Dir": null}`,
			code:   1,
			stderr: []string{"module m: no Dir"},
		},
		{
			name:   "a field with a tab",
			args:   []string{"fields", "Dir"},
			stdin:  `{"Path": "m", "Dir": "/a\tb"}`,
			code:   1,
			stderr: []string{`module m: its Dir "/a\tb" has a tab or a newline`},
		},
		{
			name:   "invalid JSON",
			args:   []string{"fields", "Dir"},
			stdin:  downloaded + `{"Path": "k8s.io/api",`,
			code:   1,
			stderr: []string{"modinfo fields: invalid JSON on stdin (value 2): unexpected EOF\n"},
		},
		{
			name:   "not JSON",
			args:   []string{"fields", "Dir"},
			stdin:  "go: k8s.io/kubernetes@v1.37.77: invalid version\n",
			code:   1,
			stderr: []string{"modinfo fields: invalid JSON on stdin (value 1): invalid character 'g' looking for beginning of value\n"},
		},
		{
			name:   "not an object",
			args:   []string{"fields", "Dir"},
			stdin:  `["/mod"]`,
			code:   1,
			stderr: []string{"JSON value 1 on stdin is not an object but a JSON array"},
		},
		{
			name:   "null",
			args:   []string{"fields", "Dir"},
			stdin:  "null",
			code:   1,
			stderr: []string{"JSON value 1 on stdin is null, not an object"},
		},
		{
			name:   "nothing on stdin",
			args:   []string{"fields", "Dir"},
			stdin:  " \n",
			code:   1,
			stderr: []string{"modinfo fields: no JSON object on stdin"},
		},
		{
			name:   "requires",
			args:   []string{"requires"},
			stdin:  goModJSON,
			stdout: "go 1.24.0\ntoolchain go1.24.3\nexample.com/single v1.2.3\nexample.com/b v0.0.0-20240101000000-abcdefabcdef\n",
		},
		{
			name:   "requires of a go.mod without directives",
			args:   []string{"requires"},
			stdin:  `{"Module": {"Path": "m"}}`,
			stdout: "",
		},
		{
			name:   "replaced",
			args:   []string{"replaced"},
			stdin:  goModJSON,
			stdout: "example.com/single\nexample.com/a@v1.0.0\nk8s.io/api\nk8s.io/client-go\nk8s.io/kms@v0.37.2\nk8s.io/utils\nk8s.io/klog/v2\nsigs.k8s.io/yaml\n",
		},
		{
			name:   "staging",
			args:   []string{"staging"},
			stdin:  goModJSON,
			stdout: "api\nclient-go\n",
		},
		{
			name:   "a go.mod requirement without a version",
			args:   []string{"requires"},
			stdin:  `{"Module": {"Path": "m"}, "Require": [{"Path": "a"}]}`,
			code:   1,
			stderr: []string{"modinfo requires: go.mod of m: requirement 1 has no Path or no Version\n"},
		},
		{
			name:   "a go.mod replacement without a new path",
			args:   []string{"replaced"},
			stdin:  `{"Module": {"Path": "m"}, "Replace": [{"Old": {"Path": "a"}}]}`,
			code:   1,
			stderr: []string{"go.mod of m: replacement 1 has no Old.Path or no New.Path"},
		},
		{
			name:   "go mod download output is not a go.mod",
			args:   []string{"requires"},
			stdin:  downloaded,
			code:   1,
			stderr: []string{"modinfo requires: no Module.Path in the JSON on stdin: not go mod edit -json output\n"},
		},
		{
			name:   "invalid go.mod JSON",
			args:   []string{"staging"},
			stdin:  `{"Module": {"Path": "m"}, "Replace": [`,
			code:   1,
			stderr: []string{"modinfo staging: invalid go mod edit -json output on stdin: unexpected EOF\n"},
		},
		{
			name:   "a go.mod field of another type",
			args:   []string{"requires"},
			stdin:  `{"Module": {"Path": "m"}, "Require": {"Path": "a"}}`,
			code:   1,
			stderr: []string{"modinfo requires: invalid go mod edit -json output on stdin: json: cannot unmarshal object"},
		},
		{
			name:   "two go.mods",
			args:   []string{"requires"},
			stdin:  goModJSON + goModJSON,
			code:   1,
			stderr: []string{"more than one JSON value on stdin"},
		},
		{
			name:   "no go.mod",
			args:   []string{"replaced"},
			code:   1,
			stderr: []string{"modinfo replaced: no go mod edit -json output on stdin\n"},
		},
		{name: "no subcommand", code: 2, stderr: []string{"modinfo: no subcommand\n", "usage:"}},
		{name: "unknown subcommand", args: []string{"dir"}, code: 2, stderr: []string{`modinfo: unknown subcommand "dir"`, "usage:"}},
		{name: "fields without a field", args: []string{"fields"}, stdin: downloaded, code: 2, stderr: []string{"modinfo fields: no FIELD to print\n", "usage:"}},
		{name: "fields with an unknown flag", args: []string{"fields", "-x", "Dir"}, stdin: downloaded, code: 2, stderr: []string{"modinfo fields: flag provided but not defined: -x\n"}},
		{name: "requires with an argument", args: []string{"requires", "go.mod"}, stdin: goModJSON, code: 2, stderr: []string{`modinfo requires: no arguments expected, got ["go.mod"]`, "usage:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			code := run(tc.args, strings.NewReader(tc.stdin), &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			if stdout.String() != tc.stdout {
				t.Errorf("stdout:\n%q\nwant:\n%q", stdout.String(), tc.stdout)
			}
			for _, want := range tc.stderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr:\n%s\nwant it to contain %q", stderr.String(), want)
				}
			}
			if tc.code == 0 && stderr.Len() > 0 {
				t.Errorf("stderr of a success: %s", stderr.String())
			}
			if tc.code == 1 && strings.Contains(stderr.String(), "usage:") {
				t.Errorf("an input error prints the usage: %s", stderr.String())
			}
		})
	}
}

// goModText is a go.mod with each form of require and replace.
const goModText = `module example.com/fixture

go 1.24.0

toolchain go1.24.3

require example.com/single v1.2.3

require (
	// a comment
	example.com/a v1.0.0
	example.com/b v0.0.0-20240101000000-abcdefabcdef // indirect
)

replace example.com/single => ../single

replace (
	example.com/a v1.0.0 => example.com/a-fork v1.0.1
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/kms v0.37.2 => ./staging/src/k8s.io/kms
)

exclude example.com/x v1.0.0
`

// TestGoModEditJSON reads what this Go release's go mod edit -json prints.
func TestGoModEditJSON(t *testing.T) {
	gomod := filepath.Join(t.TempDir(), "go.mod")
	if err := os.WriteFile(gomod, []byte(goModText), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("no go command: %v", err)
	}
	cmd := exec.Command("go", "mod", "edit", "-json", gomod)
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	for _, tc := range []struct{ cmd, want string }{
		{"requires", "go 1.24.0\ntoolchain go1.24.3\nexample.com/single v1.2.3\nexample.com/a v1.0.0\nexample.com/b v0.0.0-20240101000000-abcdefabcdef\n"},
		{"replaced", "example.com/single\nexample.com/a@v1.0.0\nk8s.io/api\nk8s.io/kms@v0.37.2\n"},
		{"staging", "api\n"},
	} {
		var stdout, stderr strings.Builder
		if code := run([]string{tc.cmd}, strings.NewReader(string(out)), &stdout, &stderr); code != 0 {
			t.Errorf("%s: exit code %d: %s", tc.cmd, code, stderr.String())
		}
		if stdout.String() != tc.want {
			t.Errorf("%s:\n%q\nwant:\n%q", tc.cmd, stdout.String(), tc.want)
		}
	}
}
