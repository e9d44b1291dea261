//go:build e2e_node

package framework

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"k8s.io/klog/v2"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// Local image references: nothing can be pulled on these machines, so both
// images are built from static binaries and imported before the kubelet
// starts. The pause image is containerd's sandbox_image.
const (
	pauseImageRef    = "e2e.podadmission.local/pause:1"
	workloadImageRef = "e2e.podadmission.local/workload:1"
)

// cniBinDir is where Debian's containernetworking-plugins installs them.
const cniBinDir = "/usr/lib/cni"

// containerdRuntime is Debian's containerd with runc and the bridge CNI
// plugin, run with its own root, state and socket.
type containerdRuntime struct {
	layout   Layout
	bins     Binaries
	socket   string
	process  *Process
	recorder *criRecorder
}

func (r *containerdRuntime) Mode() string { return ContainerdMode }

func (r *containerdRuntime) WorkloadImage() string { return workloadImageRef }

func (r *containerdRuntime) configureKubelet(cfg *kubeletconfigv1beta1.KubeletConfiguration) {
	// containerd 1.6 does not answer the CRI RuntimeConfig call, so the
	// kubelet takes the driver from its configuration: runc's default.
	cfg.CgroupDriver = "cgroupfs"
}

// missingHostTools names what apt must install for this mode.
func missingHostTools() []string {
	var missing []string
	for _, tool := range []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	for _, plugin := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join(cniBinDir, plugin)); err != nil {
			missing = append(missing, filepath.Join(cniBinDir, plugin))
		}
	}
	return missing
}

func (r *containerdRuntime) start(ctx context.Context) (string, []*Process, error) {
	if missing := missingHostTools(); len(missing) > 0 {
		return "", nil, fmt.Errorf("containerd mode needs %v: run test/e2e_node/install-host-deps.sh (apt-get install containerd runc containernetworking-plugins iproute2), or use E2E_RUNTIME=fake", missing)
	}
	dir := r.layout.StatePath("containerd")
	cniConfDir := r.layout.StatePath("cni", "net.d")
	for _, d := range []string{dir, cniConfDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", nil, err
		}
	}
	cni, err := cniConfig(r.layout.StatePath("cni", "ipam"))
	if err != nil {
		return "", nil, err
	}
	if err := os.WriteFile(filepath.Join(cniConfDir, "10-podadmission-e2e.conflist"), cni, 0o644); err != nil {
		return "", nil, err
	}
	r.socket = r.layout.SocketPath("containerd.sock")
	config, err := renderContainerdConfig(containerdSettings{
		Root:         filepath.Join(dir, "root"),
		State:        filepath.Join(dir, "state"),
		Socket:       r.socket,
		RuncRoot:     filepath.Join(dir, "runc"),
		CNIBinDir:    cniBinDir,
		CNIConfDir:   cniConfDir,
		SandboxImage: pauseImageRef,
	})
	if err != nil {
		return "", nil, err
	}
	configPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(configPath, config, 0o644); err != nil {
		return "", nil, err
	}
	_ = os.WriteFile(r.layout.ArtifactPath("containerd-config.toml"), config, 0o644)
	_ = os.WriteFile(r.layout.ArtifactPath("cni.conflist"), cni, 0o644)

	p, err := StartProcess(ProcessSpec{
		Name:    "containerd",
		Binary:  mustLookPath("containerd"),
		Args:    []string{"--config=" + configPath, "--log-level=info"},
		LogPath: r.layout.LogPath("containerd"),
	})
	if err != nil {
		return "", nil, err
	}
	r.process = p
	processes := []*Process{p}
	backend := "unix://" + r.socket
	if err := waitCRIReady(ctx, p, backend); err != nil {
		return "", processes, err
	}
	if err := r.importImages(ctx); err != nil {
		return "", processes, err
	}
	r.recorder, err = startCRIRecorder(ctx, r.layout, r.bins, backend)
	if r.recorder == nil {
		return "", processes, err
	}
	return r.recorder.Endpoint, append(processes, r.recorder.process), err
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
		out, err := exec.CommandContext(ctx, "ctr", "--address", r.socket, "--namespace", "k8s.io",
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
