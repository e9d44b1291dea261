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

package containerdconfig

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"text/template"
	"time"
)

// Settings fill the containerd configuration templates.
type Settings struct {
	Root, State, Socket string
	// ShimPath and RuncPath are the shim and runc containerd 2.x runs;
	// containerd 1.6 (Debian's) finds them in PATH.
	ShimPath, RuncPath string
	RuncRoot           string
	CNIBinDir          string
	CNIConfDir         string
	// CDISpecDir is the only CDI directory containerd 2.x watches (its
	// defaults are /etc/cdi and /var/run/cdi).
	CDISpecDir   string
	SandboxImage string
	// NRI configures containerd 2.x's NRI, which is on as in containerd's
	// defaults.
	NRI NRISettings
	// ExtraRuntimeHandlers are CRI runtime handler names, besides runc
	// (the default), that run runc exactly as runc does (the same shim,
	// runc and options): a RuntimeClass can name them. Upstream's node e2e
	// jobs configure containerd with one, test-handler, which the suite's
	// RuntimeClass tests name. Each must be a DNS label, as a
	// RuntimeClass's handler is, and not runc.
	ExtraRuntimeHandlers []string
}

// DefaultRuntimeHandler is the runtime handler of pods without a
// RuntimeClass, containerd's default_runtime_name.
const DefaultRuntimeHandler = "runc"

// RuntimeHandlers are the CRI runtime handlers the configuration defines:
// DefaultRuntimeHandler, then ExtraRuntimeHandlers.
func (s Settings) RuntimeHandlers() []string {
	return append([]string{DefaultRuntimeHandler}, s.ExtraRuntimeHandlers...)
}

// NRISettings are containerd 2.x's NRI plugin settings: a socket and
// directories of the run's own (the defaults are /var/run/nri/nri.sock and
// /opt/nri/plugins), the timeouts, and the default validator.
type NRISettings struct {
	Socket, PluginDir, PluginConfigDir string
	RegistrationTimeout                time.Duration
	RequestTimeout                     time.Duration
	// DefaultValidator turns on NRI's default validator: RequiredPlugins
	// must be registered for a container to be created, unless the pod
	// carries the annotation TolerateMissingAnnotation (with the value
	// "true").
	DefaultValidator          bool
	RequiredPlugins           []string
	TolerateMissingAnnotation string
}

// The configuration versions: 2 for containerd 1.6, 3 for containerd 2.x.
const (
	Version2 = 2
	Version3 = 3
)

// version2Template (containerd 1.6) keeps containerd off every default
// host path (/var/lib/containerd, /run/containerd, /etc/cni, /opt/cni).
var version2Template = template.Must(template.New("containerd1.6").Parse(`version = 2
root = "{{.Root}}"
state = "{{.State}}"
# /opt/containerd is not needed and would be created on the host; the
# snapshotters we do not use probe devices at start. (The v1 shim runtime
# must stay: containerd 1.6's tasks service, and so CRI, need it.)
disabled_plugins = [
  "io.containerd.internal.v1.opt",
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
]

[grpc]
  address = "{{.Socket}}"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{{.SandboxImage}}"
  # The VM does not let containerd lower oom_score_adj below its own.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{{.CNIBinDir}}"
    conf_dir = "{{.CNIConfDir}}"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
{{- range .RuntimeHandlers}}
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.{{.}}]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.{{.}}.options]
        SystemdCgroup = false
        Root = "{{$.RuncRoot}}"
{{- end}}
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = ""
`))

// version3Template is the same node in containerd 2.x's configuration
// version 3, where the CRI plugin is split in runtime, images and the gRPC
// service. The shim and runc are the ones built with containerd (make
// containerd), named by path: a Debian containerd 1.6 on the same machine
// has its shim in PATH. runc's options name the cgroup driver, which the
// kubelet takes from the CRI RuntimeConfig call.
var version3Template = template.Must(template.New("containerd2").Parse(`version = 3
root = "{{.Root}}"
state = "{{.State}}"
# /opt/containerd is not needed and would be created on the host; the
# snapshotters we do not use probe devices at start.
disabled_plugins = [
  "io.containerd.internal.v1.opt",
  "io.containerd.snapshotter.v1.blockfile",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.erofs",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
]

[grpc]
  address = "{{.Socket}}"

[plugins."io.containerd.cri.v1.runtime"]
  # The VM does not let containerd lower oom_score_adj below its own.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  cdi_spec_dirs = ["{{.CDISpecDir}}"]
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["{{.CNIBinDir}}"]
    conf_dir = "{{.CNIConfDir}}"
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
{{- range .RuntimeHandlers}}
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.{{.}}]
      runtime_type = "io.containerd.runc.v2"
      runtime_path = "{{$.ShimPath}}"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.{{.}}.options]
        SystemdCgroup = false
        Root = "{{$.RuncRoot}}"
        BinaryName = "{{$.RuncPath}}"
{{- end}}

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "{{.SandboxImage}}"
  [plugins."io.containerd.cri.v1.images".registry]
    config_path = ""

[plugins."io.containerd.grpc.v1.cri"]
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"

{{- with .NRI}}
[plugins."io.containerd.nri.v1.nri"]
  disable = false
  socket_path = "{{.Socket}}"
  plugin_path = "{{.PluginDir}}"
  plugin_config_path = "{{.PluginConfigDir}}"
  plugin_registration_timeout = "{{.RegistrationTimeout}}"
  plugin_request_timeout = "{{.RequestTimeout}}"
{{- if .DefaultValidator}}
  [plugins."io.containerd.nri.v1.nri".default_validator]
    enable = true
    required_plugins = [{{range $i, $p := .RequiredPlugins}}{{if $i}}, {{end}}"{{$p}}"{{end}}]
    tolerate_missing_plugins_annotation = "{{.TolerateMissingAnnotation}}"
{{- end}}
{{- end}}
`))

// Render is containerd's config.toml of configuration version (Version2
// or Version3) for s.
func Render(version int, s Settings) ([]byte, error) {
	var t *template.Template
	switch version {
	case Version2:
		t = version2Template
	case Version3:
		t = version3Template
	default:
		return nil, fmt.Errorf("containerd configuration version %d: want %d (containerd 1.6) or %d (containerd 2.x)", version, Version2, Version3)
	}
	if err := checkPaths(version, s); err != nil {
		return nil, err
	}
	if err := checkRuntimeHandlers(version, s.ExtraRuntimeHandlers); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, s); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// checkPaths refuses an empty or relative path: containerd would take its
// default, a host path shared with whatever else runs on the machine.
func checkPaths(version int, s Settings) error {
	paths := []struct{ name, value string }{
		{"Root", s.Root}, {"State", s.State}, {"Socket", s.Socket}, {"RuncRoot", s.RuncRoot},
		{"CNIBinDir", s.CNIBinDir}, {"CNIConfDir", s.CNIConfDir},
	}
	if version == Version3 {
		paths = append(paths, []struct{ name, value string }{
			{"ShimPath", s.ShimPath}, {"RuncPath", s.RuncPath}, {"CDISpecDir", s.CDISpecDir},
			{"NRI.Socket", s.NRI.Socket}, {"NRI.PluginDir", s.NRI.PluginDir}, {"NRI.PluginConfigDir", s.NRI.PluginConfigDir},
		}...)
	}
	for _, p := range paths {
		if !filepath.IsAbs(p.value) {
			return fmt.Errorf("containerd configuration version %d: %s must be an absolute path, not %q", version, p.name, p.value)
		}
	}
	if s.SandboxImage == "" {
		return fmt.Errorf("containerd configuration version %d: SandboxImage must be set", version)
	}
	return nil
}

// dnsLabel is a RFC 1123 label, what the API server accepts as a
// RuntimeClass's handler; it is also a bare TOML key, so the name goes
// into the runtime's table name as it is.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// checkRuntimeHandlers refuses a handler name no RuntimeClass can name,
// runc (the default handler, defined already) and a name given twice:
// containerd would refuse the configuration's duplicate table, or no pod
// could use the runtime.
func checkRuntimeHandlers(version int, handlers []string) error {
	seen := map[string]bool{DefaultRuntimeHandler: true}
	for _, h := range handlers {
		if len(h) > 63 || !dnsLabel.MatchString(h) {
			return fmt.Errorf("containerd configuration version %d: runtime handler %q is not a DNS label (lower-case letters, digits and '-', at most 63, starting and ending with a letter or digit), which a RuntimeClass's handler must be", version, h)
		}
		if seen[h] {
			return fmt.Errorf("containerd configuration version %d: runtime handler %q is defined twice (%s is the default handler)", version, h, DefaultRuntimeHandler)
		}
		seen[h] = true
	}
	return nil
}
