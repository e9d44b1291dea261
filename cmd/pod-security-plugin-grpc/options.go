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
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/podadmission/podadmission/cmd/pod-security-plugin/app"
	"github.com/podadmission/podadmission/pkg/apis/config/validation"
)

// options are the Exec plugin's policy flags and where to serve.
type options struct {
	policy app.Options
	socket string
}

func (o *options) addFlags(fs *pflag.FlagSet) {
	o.policy.AddFlags(fs)
	fs.StringVar(&o.socket, "socket", o.socket, "unix socket to serve the kubelet on, an absolute path or a unix:// URL (the plugin's endpoint in the PodAdmissionConfiguration); required")
}

// validate checks the flags; every error names its flag.
func (o *options) validate() error {
	var errs []string
	// No default: the kubelet's configuration names the endpoint, and no
	// shipped unit or sample configuration fixes one yet.
	if o.socket == "" {
		errs = append(errs, "--socket: required: the unix socket to serve the kubelet on, such as /run/podadmission/pod-security.sock")
	} else if _, err := validation.SocketPath(o.socket); err != nil {
		errs = append(errs, fmt.Sprintf("--socket %q: %v", o.socket, err))
	}
	if err := o.policy.Validate(); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// socketPath is --socket's path; validate refused a --socket it cannot parse.
func (o *options) socketPath() string {
	path, _ := validation.SocketPath(o.socket)
	return path
}
