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

// Command curl stands in for curl in the agnhost image built here: agnhost's
// Dockerfile adds curl with alpine's apk, which cannot run on this machine,
// and upstream's node e2e tests run it inside agnhost pods. It does what
// those tests ask of it (test/e2e/framework/network/utils.go,
// test/e2e/common/node/lifecycle_hook.go): one HTTP GET, with the options
//
//	-g -q -s -S          accepted, nothing to do
//	-i                   the status line and headers before the body
//	-L                   follow redirects (not followed otherwise)
//	-o FILE              the body into FILE (/dev/null to drop it)
//	-w FORMAT            after the body, FORMAT with %{http_code} replaced
//	-m, --max-time S     give up after S seconds (exit 28)
//	--connect-timeout S  give up connecting after S seconds (exit 28)
//
// and curl's exit codes for what the tests tell apart: 0 for any HTTP
// answer, 3 for a bad URL, 7 when the connection is refused, 28 on a
// timeout. Any other option is refused, naming it (exit 2), so a test
// that needs more fails clearly.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type options struct {
	url            string
	include        bool
	follow         bool
	output         string
	writeOut       string
	maxTime        time.Duration
	connectTimeout time.Duration
}

// Exit codes of curl.
const (
	exitUsage   = 2
	exitURL     = 3
	exitResolve = 6
	exitConnect = 7
	exitWrite   = 23
	exitTimeout = 28
	exitFailure = 56
)

func main() {
	o, err := parse(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "curl: %v\n", err)
		os.Exit(exitUsage)
	}
	os.Exit(run(o, os.Stdout, os.Stderr))
}

func parse(args []string) (*options, error) {
	o := &options{}
	seconds := func(flag, value string) (time.Duration, error) {
		s, err := strconv.ParseFloat(value, 64)
		if err != nil || s <= 0 {
			return 0, fmt.Errorf("%s %q: want a number of seconds", flag, value)
		}
		return time.Duration(s * float64(time.Second)), nil
	}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		value := func() (string, error) {
			if i+1 >= len(args) {
				return "", fmt.Errorf("option %s needs a value", arg)
			}
			i++
			return args[i], nil
		}
		var err error
		switch arg {
		case "-g", "-q", "-s", "-S", "--silent", "--globoff":
		case "-i", "--include":
			o.include = true
		case "-L", "--location":
			o.follow = true
		case "-o", "--output":
			o.output, err = value()
		case "-w", "--write-out":
			o.writeOut, err = value()
		case "-m", "--max-time":
			var v string
			if v, err = value(); err == nil {
				o.maxTime, err = seconds(arg, v)
			}
		case "--connect-timeout":
			var v string
			if v, err = value(); err == nil {
				o.connectTimeout, err = seconds(arg, v)
			}
		default:
			if strings.HasPrefix(arg, "-") {
				return nil, fmt.Errorf("option %s: not supported by this stand-in (test/upstream-e2e/cmd/curl)", arg)
			}
			if o.url != "" {
				return nil, fmt.Errorf("more than one URL: %s and %s", o.url, arg)
			}
			o.url = arg
		}
		if err != nil {
			return nil, err
		}
	}
	if o.url == "" {
		return nil, errors.New("no URL")
	}
	return o, nil
}

// run makes the request o describes, writes what curl would to stdout and
// stderr, and returns curl's exit code.
func run(o *options, stdout, stderr io.Writer) int {
	raw := o.url
	if !strings.Contains(raw, "://") {
		// curl takes a URL without a scheme as http.
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		fmt.Fprintf(stderr, "curl: (3) URL rejected: %s\n", o.url)
		return exitURL
	}
	ctx := context.Background()
	if o.maxTime > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.maxTime)
		defer cancel()
	}
	dialer := &net.Dialer{Timeout: o.connectTimeout}
	client := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true}}
	if !o.follow {
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		fmt.Fprintf(stderr, "curl: (3) %v\n", err)
		return exitURL
	}
	req.Header.Set("User-Agent", "curl/podadmission-stand-in")
	resp, err := client.Do(req)
	if err != nil {
		return requestError(stderr, err)
	}
	defer resp.Body.Close()

	out := stdout
	if o.output != "" {
		f, err := os.Create(o.output)
		if err != nil {
			fmt.Fprintf(stderr, "curl: (23) %v\n", err)
			return exitWrite
		}
		defer f.Close()
		out = f
	}
	if o.include {
		fmt.Fprintf(out, "%s %s\r\n", resp.Proto, resp.Status)
		_ = resp.Header.Write(out)
		fmt.Fprint(out, "\r\n")
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		return requestError(stderr, err)
	}
	if o.writeOut != "" {
		fmt.Fprint(stdout, strings.ReplaceAll(o.writeOut, "%{http_code}", fmt.Sprintf("%03d", resp.StatusCode)))
	}
	return 0
}

// requestError reports err as curl does and returns curl's exit code.
func requestError(stderr io.Writer, err error) int {
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, context.DeadlineExceeded), os.IsTimeout(err):
		fmt.Fprintf(stderr, "curl: (28) %v\n", err)
		return exitTimeout
	case errors.As(err, &dnsErr):
		fmt.Fprintf(stderr, "curl: (6) %v\n", err)
		return exitResolve
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		fmt.Fprintf(stderr, "curl: (7) %v\n", err)
		return exitConnect
	}
	fmt.Fprintf(stderr, "curl: (56) %v\n", err)
	return exitFailure
}
