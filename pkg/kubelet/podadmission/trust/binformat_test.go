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

package trust

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The #! line is parsed as fs/binfmt_script.c load_script parses it.
func TestShebangInterpreter(t *testing.T) {
	long := "#!/" + strings.Repeat("a", binprmBufSize)
	for name, tc := range map[string]struct {
		header string
		want   string
	}{
		"plain":                  {header: "#!/bin/sh\necho\n", want: "/bin/sh"},
		"with an argument":       {header: "#!/usr/bin/python3 -u -E\n", want: "/usr/bin/python3"},
		"spaces and tabs":        {header: "#! \t/bin/sh \t -e \t\n", want: "/bin/sh"},
		"no newline, short file": {header: "#!/bin/sh", want: "/bin/sh"},
		"carriage return":        {header: "#!/bin/sh\r\n", want: "/bin/sh\r"},
		"NUL ends the name":      {header: "#!/bin/sh\x00junk\n", want: "/bin/sh"},
		"relative":               {header: "#!bin/sh\n", want: "bin/sh"},
		"name within a full buffer, no newline": {
			header: "#!/bin/sh " + strings.Repeat("x", binprmBufSize), want: "/bin/sh",
		},
		"no #!":            {header: "echo hi\n"},
		"one #":            {header: "#/bin/sh\n"},
		"no name":          {header: "#!\n"},
		"only blanks":      {header: "#!  \t \n"},
		"name may be cut":  {header: long},
		"empty":            {header: ""},
		"ELF":              {header: "\x7fELF\x02\x01\x01"},
		"newline at start": {header: "#!\n/bin/sh\n"},
	} {
		t.Run(name, func(t *testing.T) {
			header := []byte(tc.header)
			if len(header) > binprmBufSize {
				header = header[:binprmBufSize]
			}
			got, ok := shebangInterpreter(header)
			assert.Equal(t, tc.want != "", ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestELFInterpreterOfSystemBinaries(t *testing.T) {
	f, err := os.Open("/bin/sh")
	require.NoError(t, err)
	defer f.Close()
	loader, err := elfInterpreter(f)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(loader, "/lib"), loader)

	self, err := os.Executable()
	require.NoError(t, err)
	g, err := os.Open(self)
	require.NoError(t, err)
	defer g.Close()
	_, err = elfInterpreter(g)
	require.NoError(t, err, "a Go binary, static or not, is read")
}

// Whatever the bytes, parsing a header never panics, and a #! name is never
// empty, never has a blank, and is within the buffer.
func FuzzShebangInterpreter(f *testing.F) {
	f.Add([]byte("#!/bin/sh -e\n"))
	f.Add([]byte("#! /usr/bin/env python3"))
	f.Add(bytes.Repeat([]byte("#!"), 200))
	f.Fuzz(func(t *testing.T, header []byte) {
		if len(header) > binprmBufSize {
			header = header[:binprmBufSize]
		}
		name, ok := shebangInterpreter(header)
		if !ok {
			return
		}
		if name == "" || strings.ContainsAny(name, " \t\x00\n") || !bytes.Contains(header, []byte(name)) {
			t.Fatalf("header %q gave interpreter %q", header, name)
		}
	})
}

// Whatever the file, reading its program headers never panics and never
// reads far: the kernel's bounds apply.
func FuzzELFInterpreter(f *testing.F) {
	if sh, err := os.ReadFile("/bin/sh"); err == nil {
		f.Add(sh[:min(len(sh), 4096)])
	}
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		name, err := elfInterpreter(bytes.NewReader(data))
		if err == nil && len(name) > maxInterpreterSize {
			t.Fatalf("loader name of %d bytes", len(name))
		}
	})
}
