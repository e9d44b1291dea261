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

// Command containerd-config writes the containerd configuration and the CNI
// network of an upstream node e2e run (test/upstream-e2e/run.sh) with the
// templates of the project's own node e2e harness
// (test/e2e_node/containerdconfig), so that both run containerd the same
// way, with a root, state and CNI network of the run's own. The socket is
// the caller's: run.sh puts it at containerd's default,
// /run/containerd/containerd.sock, where the kubelet's cAdvisor looks for
// containerd on a production node.
//
//	containerd-config -config FILE -root DIR -state DIR -socket PATH ... \
//	  [-extra-runtime-handlers NAME,...] \
//	  -cni-config FILE -cni-bridge NAME -cni-subnet CIDR ...
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/podadmission/podadmission/test/e2e_node/containerdconfig"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "containerd-config: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("containerd-config", flag.ContinueOnError)
	var s containerdconfig.Settings
	var n containerdconfig.Network
	version := fs.Int("version", containerdconfig.Version3, "configuration version: 3 (containerd 2.x) or 2 (containerd 1.6)")
	configPath := fs.String("config", "", "containerd's config.toml to write (required)")
	cniPath := fs.String("cni-config", "", "the CNI conflist to write, in -cni-conf-dir (required)")
	fs.StringVar(&s.Root, "root", "", "containerd's root directory")
	fs.StringVar(&s.State, "state", "", "containerd's state directory")
	fs.StringVar(&s.Socket, "socket", "", "containerd's gRPC socket")
	fs.StringVar(&s.ShimPath, "shim", "", "containerd-shim-runc-v2 (version 3)")
	fs.StringVar(&s.RuncPath, "runc", "", "runc (version 3)")
	fs.StringVar(&s.RuncRoot, "runc-root", "", "runc's state directory")
	fs.StringVar(&s.CNIBinDir, "cni-bin-dir", "/usr/lib/cni", "the CNI plugins (Debian's containernetworking-plugins)")
	fs.StringVar(&s.CNIConfDir, "cni-conf-dir", "", "the CNI configuration directory")
	fs.StringVar(&s.CDISpecDir, "cdi-spec-dir", "", "the CDI spec directory (version 3)")
	fs.StringVar(&s.SandboxImage, "sandbox-image", "", "the pause image reference")
	fs.StringVar(&s.NRI.Socket, "nri-socket", "", "NRI's socket (version 3)")
	fs.StringVar(&s.NRI.PluginDir, "nri-plugin-dir", "", "NRI's plugin directory (version 3)")
	fs.StringVar(&s.NRI.PluginConfigDir, "nri-plugin-config-dir", "", "NRI's plugin configuration directory (version 3)")
	fs.DurationVar(&s.NRI.RegistrationTimeout, "nri-registration-timeout", 5*time.Second, "NRI's plugin registration timeout")
	fs.DurationVar(&s.NRI.RequestTimeout, "nri-request-timeout", 2*time.Second, "NRI's plugin request timeout")
	fs.Func("extra-runtime-handlers", "comma-separated CRI runtime handler names, besides runc, that run runc with runc's options (upstream's node e2e jobs define test-handler)", func(v string) error {
		s.ExtraRuntimeHandlers = nil
		if v != "" {
			s.ExtraRuntimeHandlers = strings.Split(v, ",")
		}
		return nil
	})
	fs.StringVar(&n.Name, "cni-name", "", "the CNI network's name")
	fs.StringVar(&n.Bridge, "cni-bridge", "", "the bridge's name")
	fs.StringVar(&n.Subnet, "cni-subnet", "", "the pods' subnet")
	fs.StringVar(&n.IPAMDataDir, "cni-ipam-dir", "", "host-local's data directory")
	fs.BoolVar(&n.Gateway, "cni-gateway", false, "make the host the pods' gateway")
	fs.BoolVar(&n.Hairpin, "cni-hairpin", false, "hairpin mode on the bridge")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *configPath == "" || *cniPath == "" {
		return errors.New("-config and -cni-config are required")
	}
	if filepath.Dir(*cniPath) != filepath.Clean(s.CNIConfDir) {
		return fmt.Errorf("-cni-config %s is not in -cni-conf-dir %s: containerd would not read it", *cniPath, s.CNIConfDir)
	}
	config, err := containerdconfig.Render(*version, s)
	if err != nil {
		return err
	}
	cni, err := containerdconfig.CNI(n)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*configPath, config, 0o644); err != nil {
		return err
	}
	return os.WriteFile(*cniPath, cni, 0o644)
}
