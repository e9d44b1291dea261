//go:build e2e_node

package framework

import (
	"bytes"
	"text/template"
)

// containerdSettings fill the containerd configuration template.
type containerdSettings struct {
	Root, State, Socket string
	RuncRoot            string
	CNIBinDir           string
	CNIConfDir          string
	SandboxImage        string
}

// containerdConfigTemplate keeps containerd off every default host path
// (/var/lib/containerd, /run/containerd, /etc/cni, /opt/cni), so that it can
// run next to anything else and be removed without trace.
var containerdConfigTemplate = template.Must(template.New("containerd").Parse(`version = 2
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
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "{{.RuncRoot}}"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = ""
`))

func renderContainerdConfig(s containerdSettings) ([]byte, error) {
	var buf bytes.Buffer
	err := containerdConfigTemplate.Execute(&buf, s)
	return buf.Bytes(), err
}
