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
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// curl runs the stand-in with args and returns its exit code and outputs.
func curl(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	o, err := parse(args)
	if err != nil {
		return exitUsage, "", err.Error()
	}
	var stdout, stderr bytes.Buffer
	code := run(o, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestTheSuitesCommands(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo":
			_, _ = w.Write([]byte(r.URL.Query().Get("msg")))
		case "/moved":
			http.Redirect(w, r, "/echo?msg=followed", http.StatusFound)
		case "/slow":
			time.Sleep(2 * time.Second)
		default:
			http.NotFound(w, r)
		}
	}))
	defer server.Close()
	host := strings.TrimPrefix(server.URL, "http://")

	// lifecycle_hook.go: curl http://HOST:8080/echo?msg=poststart
	code, out, _ := curl(t, server.URL+"/echo?msg=poststart")
	assert.Equal(t, 0, code)
	assert.Equal(t, "poststart", out)

	// network/utils.go: curl -g -q -s -o /dev/null -w %{http_code} http://...
	code, out, _ = curl(t, "-g", "-q", "-s", "-o", "/dev/null", "-w", "%{http_code}", server.URL+"/missing")
	assert.Equal(t, 0, code, "an HTTP error status is an answer: exit 0, as curl without -f")
	assert.Equal(t, "404", out)

	// network/utils.go: curl -i -q -s --connect-timeout 1 http://...
	code, out, _ = curl(t, "-i", "-q", "-s", "--connect-timeout", "1", server.URL+"/echo?msg=hi")
	assert.Equal(t, 0, code)
	assert.True(t, strings.HasPrefix(out, "HTTP/1.1 200 OK\r\n"), out)
	assert.True(t, strings.HasSuffix(out, "\r\n\r\nhi"), out)

	// A URL without a scheme is http, as for curl.
	code, out, _ = curl(t, "-s", host+"/echo?msg=noscheme")
	assert.Equal(t, 0, code)
	assert.Equal(t, "noscheme", out)

	code, out, _ = curl(t, "-s", "-o", "/dev/null", "-w", "%{http_code}", server.URL+"/moved")
	assert.Equal(t, 0, code)
	assert.Equal(t, "302", out, "redirects are not followed without -L")
	code, out, _ = curl(t, "-s", "-L", server.URL+"/moved")
	assert.Equal(t, 0, code)
	assert.Equal(t, "followed", out)

	file := filepath.Join(t.TempDir(), "body")
	code, _, _ = curl(t, "-s", "-o", file, server.URL+"/echo?msg=saved")
	assert.Equal(t, 0, code)
	saved, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "saved", string(saved))

	code, _, stderr := curl(t, "-s", "--max-time", "0.2", server.URL+"/slow")
	assert.Equal(t, exitTimeout, code, stderr)
}

func TestFailures(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := l.Addr().String()
	require.NoError(t, l.Close())

	code, _, stderr := curl(t, "-s", "http://"+closed+"/")
	assert.Equal(t, exitConnect, code, "connection refused: %s", stderr)

	for name, tc := range map[string]struct {
		args    []string
		code    int
		message string
	}{
		"unsupported option": {[]string{"-X", "POST", "http://x/"}, exitUsage, "option -X: not supported by this stand-in"},
		"no URL":             {[]string{"-s"}, exitUsage, "no URL"},
		"two URLs":           {[]string{"http://a/", "http://b/"}, exitUsage, "more than one URL"},
		"missing value":      {[]string{"http://a/", "-o"}, exitUsage, "option -o needs a value"},
		"bad timeout":        {[]string{"--max-time", "soon", "http://a/"}, exitUsage, `--max-time "soon": want a number of seconds`},
		"bad URL":            {[]string{"http://[::1/"}, exitURL, "(3)"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, stderr := curl(t, tc.args...)
			assert.Equal(t, tc.code, code)
			assert.Contains(t, stderr, tc.message)
		})
	}
}
