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
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/podadmission/podadmission/pkg/apis/config/validation"
)

// defaultSocket is where the example configuration expects the gate.
const defaultSocket = "/run/podadmission/netpol-gate.sock"

type options struct {
	kubeconfig              string
	socket                  string
	ackDir                  string
	ackWriterUID            int64
	settleTime              time.Duration
	exemptHostNetwork       bool
	exemptNamespaceSelector string
	resyncPeriod            time.Duration
}

func newOptions() *options {
	return &options{
		socket:            defaultSocket,
		settleTime:        5 * time.Second,
		exemptHostNetwork: true,
	}
}

func (o *options) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.kubeconfig, "kubeconfig", o.kubeconfig, "kubeconfig of the gate's own identity, allowed to list and watch NetworkPolicies and Namespaces (empty: in-cluster configuration)")
	fs.StringVar(&o.socket, "socket", o.socket, "unix socket to serve the kubelet on (the plugin's endpoint in the PodAdmissionConfiguration)")
	fs.StringVar(&o.ackDir, "ack-dir", o.ackDir, "directory where the node's network policy agent acknowledges each programmed NetworkPolicy with a file named <uid>.<generation>; empty: use --settle-time. It must be owned by root or --ack-writer-uid and writable by no one else, every directory above it root's; while it is not, every pod a policy selects is held")
	fs.Int64Var(&o.ackWriterUID, "ack-writer-uid", o.ackWriterUID, "uid the network policy agent that writes --ack-dir runs as, which may own the directory (0: root); a missing directory is created owned by it")
	fs.DurationVar(&o.settleTime, "settle-time", o.settleTime, "without --ack-dir: how long a NetworkPolicy (at its generation) must have been known before the pods it selects may start")
	fs.BoolVar(&o.exemptHostNetwork, "exempt-host-network", o.exemptHostNetwork, "admit host-network pods at once (NetworkPolicies do not apply to them)")
	fs.StringVar(&o.exemptNamespaceSelector, "exempt-namespace-selector", o.exemptNamespaceSelector, "label selector of namespaces whose pods are admitted at once, e.g. 'kubernetes.io/metadata.name in (kube-system)'")
	fs.DurationVar(&o.resyncPeriod, "resync-period", o.resyncPeriod, "informer resync period (0: none; the watches keep the caches current)")
}

// validate checks the flags; every error names its flag.
func (o *options) validate() error {
	var errs []string
	if _, err := validation.SocketPath(o.socket); err != nil {
		errs = append(errs, fmt.Sprintf("--socket %q: %v", o.socket, err))
	}
	if o.ackDir != "" && !filepath.IsAbs(o.ackDir) {
		errs = append(errs, fmt.Sprintf("--ack-dir %q: must be an absolute path", o.ackDir))
	}
	if o.ackWriterUID < 0 || o.ackWriterUID > math.MaxUint32-1 {
		errs = append(errs, fmt.Sprintf("--ack-writer-uid %d: must be a uid, from 0 to %d", o.ackWriterUID, uint32(math.MaxUint32-1)))
	}
	if o.ackDir == "" && o.settleTime <= 0 {
		errs = append(errs, fmt.Sprintf("--settle-time %s: must be greater than 0 without --ack-dir", o.settleTime))
	}
	if o.resyncPeriod < 0 {
		errs = append(errs, fmt.Sprintf("--resync-period %s: must not be negative", o.resyncPeriod))
	}
	if _, err := o.namespaceSelector(); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// namespaceSelector parses --exempt-namespace-selector; nil when unset.
func (o *options) namespaceSelector() (labels.Selector, error) {
	if o.exemptNamespaceSelector == "" {
		return nil, nil
	}
	selector, err := labels.Parse(o.exemptNamespaceSelector)
	if err != nil {
		return nil, fmt.Errorf("--exempt-namespace-selector %q: %v", o.exemptNamespaceSelector, err)
	}
	return selector, nil
}

// socketPath is --socket's path; validate refused a --socket it cannot parse.
func (o *options) socketPath() string {
	path, _ := validation.SocketPath(o.socket)
	return path
}
