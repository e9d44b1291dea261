//go:build e2e_node

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

package framework

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/klog/v2"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/podadmission/podadmission/test/e2e_node/containerdconfig"
)

// Local image references: nothing can be pulled on these machines, so both
// images are built from static binaries and imported before the kubelet
// starts. The pause image is containerd's sandbox image.
const (
	pauseImageRef    = "e2e.podadmission.local/pause:1"
	workloadImageRef = "e2e.podadmission.local/workload:1"
)

// cniBinDir is where Debian's containernetworking-plugins installs them.
const cniBinDir = "/usr/lib/cni"

// NRI defaults of the containerd 2.x mode; NRIOptions change them.
const (
	nriRegistrationTimeout = 5 * time.Second
	nriRequestTimeout      = 2 * time.Second
)

// NRIOptions configure containerd 2.x's NRI for a run (the NRI
// comparison); the suite runs NRI as containerd's defaults do, on the
// run's own socket, without a validator.
type NRIOptions struct {
	// RequestTimeout is NRI's plugin_request_timeout (default 2 s).
	RequestTimeout time.Duration
	// RequiredPlugins turns the default validator on and makes these
	// plugins required for every container.
	RequiredPlugins []string
	// TolerateMissingAnnotation is the annotation with which a pod's
	// author waives RequiredPlugins ("true").
	TolerateMissingAnnotation string
}

// containerdBinaries are the executables of a containerd mode.
type containerdBinaries struct {
	Containerd, Shim, Ctr, Runc string
}

// containerdRuntime is containerd with runc and the bridge CNI plugin, run
// with its own root, state and socket: containerd 2.x built by make
// containerd (ContainerdMode), or Debian's containerd 1.6 and runc 1.1
// (Containerd16Mode).
type containerdRuntime struct {
	mode          string
	layout        Layout
	bins          Binaries
	runtime       containerdBinaries
	configVersion int
	nri           *NRIOptions
	socket        string
	process       *Process
	recorder      *criRecorder
}

func newContainerdRuntime(mode string, layout Layout, bins Binaries, nri *NRIOptions) (*containerdRuntime, error) {
	r := &containerdRuntime{mode: mode, layout: layout, bins: bins, nri: nri}
	switch mode {
	case ContainerdMode:
		if bins.ContainerdDir == "" {
			return nil, fmt.Errorf("the %s runtime mode needs containerd 2.x: build it with make containerd and pass -e2e.containerd-bin-dir=$(build/containerd.sh dir)", mode)
		}
		dir := bins.ContainerdDir
		r.runtime = containerdBinaries{
			Containerd: filepath.Join(dir, "containerd"),
			Shim:       filepath.Join(dir, "containerd-shim-runc-v2"),
			Ctr:        filepath.Join(dir, "ctr"),
			Runc:       filepath.Join(dir, "runc"),
		}
		r.configVersion = containerdconfig.Version3
		if err := bins.check(r.runtime.Containerd, r.runtime.Shim, r.runtime.Ctr, r.runtime.Runc); err != nil {
			return nil, fmt.Errorf("%w (containerd 2.x: make containerd)", err)
		}
	case Containerd16Mode:
		if nri != nil {
			return nil, fmt.Errorf("the %s runtime mode has no NRI validation: use %s", mode, ContainerdMode)
		}
		if missing := missingDebianTools(); len(missing) > 0 {
			return nil, fmt.Errorf("the %s mode needs %v: run test/e2e_node/install-host-deps.sh %s (apt-get install containerd runc containernetworking-plugins iproute2), or use E2E_RUNTIME=%s", mode, missing, mode, ContainerdMode)
		}
		r.runtime = containerdBinaries{Containerd: mustLookPath("containerd"), Ctr: mustLookPath("ctr")}
		r.configVersion = containerdconfig.Version2
	}
	if missing := missingCNITools(); len(missing) > 0 {
		return nil, fmt.Errorf("the %s mode needs %v: run test/e2e_node/install-host-deps.sh (apt-get install containernetworking-plugins iproute2)", mode, missing)
	}
	return r, nil
}

func (r *containerdRuntime) Mode() string { return r.mode }

func (r *containerdRuntime) WorkloadImage() string { return workloadImageRef }

// NRISocket is containerd 2.x's NRI socket, where external NRI plugins
// register; empty for containerd 1.6.
func (r *containerdRuntime) NRISocket() string {
	if r.configVersion == containerdconfig.Version2 {
		return ""
	}
	return r.layout.SocketPath("nri.sock")
}

func (r *containerdRuntime) configureKubelet(cfg *kubeletconfigv1beta1.KubeletConfiguration) {
	// containerd 2.x answers the CRI RuntimeConfig call with runc's
	// driver (SystemdCgroup = false: no systemd runs on these machines),
	// and the kubelet takes it from there; containerd 1.6 does not, and
	// the kubelet falls back to this value. The two agree either way.
	cfg.CgroupDriver = "cgroupfs"
}

// missingDebianTools names what apt must install for the containerd 1.6
// mode.
func missingDebianTools() []string {
	var missing []string
	for _, tool := range []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	return missing
}

// missingCNITools names what both containerd modes need from Debian.
func missingCNITools() []string {
	var missing []string
	if _, err := exec.LookPath("ip"); err != nil {
		missing = append(missing, "ip")
	}
	for _, plugin := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join(cniBinDir, plugin)); err != nil {
			missing = append(missing, filepath.Join(cniBinDir, plugin))
		}
	}
	return missing
}

func (r *containerdRuntime) settings() containerdconfig.Settings {
	dir := r.layout.StatePath("containerd")
	s := containerdconfig.Settings{
		Root:         filepath.Join(dir, "root"),
		State:        filepath.Join(dir, "state"),
		Socket:       r.socket,
		ShimPath:     r.runtime.Shim,
		RuncPath:     r.runtime.Runc,
		RuncRoot:     filepath.Join(dir, "runc"),
		CNIBinDir:    cniBinDir,
		CNIConfDir:   r.layout.StatePath("cni", "net.d"),
		CDISpecDir:   filepath.Join(dir, "cdi"),
		SandboxImage: pauseImageRef,
		NRI: containerdconfig.NRISettings{
			Socket:              r.NRISocket(),
			PluginDir:           filepath.Join(dir, "nri", "plugins"),
			PluginConfigDir:     filepath.Join(dir, "nri", "conf.d"),
			RegistrationTimeout: nriRegistrationTimeout,
			RequestTimeout:      nriRequestTimeout,
		},
	}
	if r.nri != nil {
		if r.nri.RequestTimeout > 0 {
			s.NRI.RequestTimeout = r.nri.RequestTimeout
		}
		s.NRI.DefaultValidator = true
		s.NRI.RequiredPlugins = r.nri.RequiredPlugins
		s.NRI.TolerateMissingAnnotation = r.nri.TolerateMissingAnnotation
	}
	return s
}

func (r *containerdRuntime) start(ctx context.Context) (string, []*Process, error) {
	r.socket = r.layout.SocketPath("containerd.sock")
	s := r.settings()
	for _, d := range []string{r.layout.StatePath("containerd"), s.CNIConfDir, s.CDISpecDir, s.NRI.PluginDir, s.NRI.PluginConfigDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", nil, err
		}
	}
	cni, err := cniConfig(r.layout.StatePath("cni", "ipam"))
	if err != nil {
		return "", nil, err
	}
	if err := os.WriteFile(filepath.Join(s.CNIConfDir, "10-podadmission-e2e.conflist"), cni, 0o644); err != nil {
		return "", nil, err
	}
	config, err := containerdconfig.Render(r.configVersion, s)
	if err != nil {
		return "", nil, err
	}
	configPath := r.layout.StatePath("containerd", "config.toml")
	if err := os.WriteFile(configPath, config, 0o644); err != nil {
		return "", nil, err
	}
	_ = os.WriteFile(r.layout.ArtifactPath("containerd-config.toml"), config, 0o644)
	_ = os.WriteFile(r.layout.ArtifactPath("cni.conflist"), cni, 0o644)

	spec := ProcessSpec{
		Name:    "containerd",
		Binary:  r.runtime.Containerd,
		Args:    []string{"--config=" + configPath, "--log-level=info"},
		LogPath: r.layout.LogPath("containerd"),
	}
	if r.configVersion != containerdconfig.Version2 {
		// Whatever else containerd starts by name (runc's helpers, CNI
		// plugins' tools) comes from its own build first.
		spec.Env = []string{"PATH=" + filepath.Dir(r.runtime.Containerd) + ":" + os.Getenv("PATH")}
	}
	p, err := StartProcess(spec)
	if err != nil {
		return "", nil, err
	}
	r.process = p
	processes := []*Process{p}
	backend := "unix://" + r.socket
	if err := waitCRIReady(ctx, p, backend); err != nil {
		return "", processes, err
	}
	r.logVersions()
	if err := r.importImages(ctx); err != nil {
		return "", processes, err
	}
	r.recorder, err = startCRIRecorder(ctx, r.layout, r.bins, backend)
	if r.recorder == nil {
		return "", processes, err
	}
	return r.recorder.Endpoint, append(processes, r.recorder.process), err
}

// logVersions writes the versions of containerd and runc into the
// artifacts, for the reports that name them.
func (r *containerdRuntime) logVersions() {
	var lines []string
	for _, cmd := range [][]string{{r.runtime.Containerd, "--version"}, {r.runcBinary(), "--version"}} {
		out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput()
		if err != nil {
			out = []byte(err.Error())
		}
		lines = append(lines, strings.TrimSpace(string(out)))
	}
	text := strings.Join(lines, "\n") + "\n"
	_ = os.WriteFile(r.layout.ArtifactPath("runtime-versions.txt"), []byte(text), 0o644)
	klog.InfoS("Container runtime versions", "mode", r.mode, "versions", lines)
}

func (r *containerdRuntime) runcBinary() string {
	if r.runtime.Runc != "" {
		return r.runtime.Runc
	}
	return mustLookPath("runc")
}

// importImages builds the pause and workload images and imports them into
// the namespace the CRI plugin uses.
func (r *containerdRuntime) importImages(ctx context.Context) error {
	start := time.Now()
	images := []imageSpec{
		{Ref: pauseImageRef, Binary: r.bins.PauseImage, Entrypoint: "pause"},
		{Ref: workloadImageRef, Binary: r.bins.WorkloadImage, Entrypoint: "workload"},
	}
	for _, img := range images {
		archive := r.layout.StatePath("containerd", filepath.Base(img.Entrypoint)+"-image.tar")
		if err := writeImageArchive(archive, img); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		out, err := exec.CommandContext(ctx, r.runtime.Ctr, "--address", r.socket, "--namespace", "k8s.io",
			"images", "import", "--snapshotter=overlayfs", archive).CombinedOutput()
		cancel()
		if err != nil {
			return fmt.Errorf("importing %s: %w: %s", img.Ref, err, out)
		}
	}
	klog.InfoS("Imported images", "images", []string{pauseImageRef, workloadImageRef}, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// stop removes every pod through the CRI first, so containerd itself
// unmounts root filesystems, removes network namespaces and cgroups and
// lets its shims exit; the host cleanup catches whatever it could not.
func (r *containerdRuntime) stop(ctx context.Context) {
	if r.recorder != nil {
		r.recorder.process.Stop(5 * time.Second)
	}
	if r.process == nil || !r.process.Running() {
		return
	}
	start := time.Now()
	client, err := DialCRI("unix://" + r.socket)
	if err == nil {
		ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		if err := client.removeAllPods(ctx); err != nil {
			klog.ErrorS(err, "Removing pods from containerd")
		}
		cancel()
		client.Close()
	}
	klog.InfoS("Removed all pods from containerd", "took", time.Since(start).Round(time.Millisecond))
	r.process.Stop(15 * time.Second)
}

func mustLookPath(tool string) string {
	p, err := exec.LookPath(tool)
	if err != nil {
		return tool
	}
	return p
}
