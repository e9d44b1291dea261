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
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parseOptions(t *testing.T, args ...string) *options {
	t.Helper()
	o := newOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.addFlags(fs)
	require.NoError(t, fs.Parse(args))
	return o
}

func TestDefaults(t *testing.T) {
	o := parseOptions(t)
	require.NoError(t, o.validate())
	assert.Equal(t, "/run/podadmission/netpol-gate.sock", o.socketPath())
	assert.True(t, o.exemptHostNetwork)
	assert.Equal(t, 5*time.Second, o.settleTime)
	selector, err := o.namespaceSelector()
	require.NoError(t, err)
	assert.Nil(t, selector)
}

func TestOptionErrorsNameTheFlag(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"relative socket":  {[]string{"--socket=gate.sock"}, `--socket "gate.sock": must be a unix socket: an absolute path or a unix:// URL`},
		"unclean socket":   {[]string{"--socket=/run//gate.sock"}, `--socket "/run//gate.sock": socket path must be clean (no //, ., .. or trailing /), like "/run/gate.sock"`},
		"relative ack dir": {[]string{"--ack-dir=acks"}, `--ack-dir "acks": must be an absolute path`},
		"no settle time":   {[]string{"--settle-time=0s"}, `--settle-time 0s: must be greater than 0 without --ack-dir`},
		"negative resync":  {[]string{"--resync-period=-1s"}, `--resync-period -1s: must not be negative`},
		"bad selector":     {[]string{"--exempt-namespace-selector=a in b"}, `--exempt-namespace-selector "a in b": `},
		"negative writer":  {[]string{"--ack-writer-uid=-1"}, `--ack-writer-uid -1: must be a uid, from 0 to 4294967294`},
		"writer too large": {[]string{"--ack-writer-uid=4294967295"}, `--ack-writer-uid 4294967295: must be a uid, from 0 to 4294967294`},
		"several": {[]string{"--socket=x", "--settle-time=0s"},
			`--socket "x": must be a unix socket: an absolute path or a unix:// URL; --settle-time 0s: must be greater than 0 without --ack-dir`},
	} {
		t.Run(name, func(t *testing.T) {
			err := parseOptions(t, tc.args...).validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	assert.NoError(t, parseOptions(t, "--ack-dir=/run/acks", "--settle-time=0s", "--socket=unix:///run/g.sock").validate(),
		"the settle time does not matter with an acknowledgement directory")
}
