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
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// PodAdmissionFeatureGate is the kubelet feature gate of the patch series.
const PodAdmissionFeatureGate = "PodAdmissionPlugin"

// KubeletOptions is what a test may change between kubelet starts.
type KubeletOptions struct {
	// PodAdmission turns the PodAdmissionPlugin feature gate on.
	PodAdmission bool
	// PluginFlags passes --pod-admission-plugin-config and
	// --pod-admission-plugin-bin-dir (the plugin directories of the run);
	// with PodAdmission false this is the "config present, gate off" case.
	PluginFlags bool
	// ExtraArgs are appended to the kubelet's command line.
	ExtraArgs []string
}

// Equal says whether o and other start the same kubelet.
func (o KubeletOptions) Equal(other KubeletOptions) bool {
	return o.PodAdmission == other.PodAdmission && o.PluginFlags == other.PluginFlags && slices.Equal(o.ExtraArgs, other.ExtraArgs)
}

// Kubelet is the drop-in kubelet under test, run as its own process.
type Kubelet struct {
	Binary     string
	ConfigPath string
	// RootDir is --root-dir; the kubelet bind-mounts it onto itself.
	RootDir string
	// StaticPodDir is the kubelet's staticPodPath.
	StaticPodDir string
	// PluginConfigDir and PluginBinDir are the pod admission plugin
	// directories; root-owned and not group/world writable, as the
	// kubelet demands of its trust root.
	PluginConfigDir string
	PluginBinDir    string
	HealthzURL      string
	// ServerURL is the kubelet's HTTPS server (/metrics, /pods).
	ServerURL string
	NodeName  string

	layout     Layout
	kubeconfig string
	options    KubeletOptions
	process    *Process
	starts     int
}

func newKubelet(layout Layout, binary, nodeName, kubeconfig, caPath, criEndpoint string, rt Runtime) (*Kubelet, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	k := &Kubelet{
		Binary:          binary,
		ConfigPath:      layout.StatePath("kubelet-config.yaml"),
		RootDir:         layout.StatePath("kubelet"),
		StaticPodDir:    layout.StatePath("static-pods"),
		PluginConfigDir: layout.StatePath("pod-admission", "config"),
		PluginBinDir:    layout.StatePath("pod-admission", "bin"),
		HealthzURL:      "http://127.0.0.1:" + strconv.Itoa(ports[1]) + "/healthz",
		ServerURL:       "https://127.0.0.1:" + strconv.Itoa(ports[0]),
		NodeName:        nodeName,
		layout:          layout,
		kubeconfig:      kubeconfig,
	}
	for _, dir := range []string{k.RootDir, k.StaticPodDir, k.PluginConfigDir, k.PluginBinDir, k.workDir(), layout.StatePath("pod-logs")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		// MkdirAll honours the umask; the trust checks want exactly 0755.
		if err := os.Chmod(dir, 0o755); err != nil {
			return nil, err
		}
	}

	cfg := kubeletConfiguration(layout, caPath, criEndpoint, k.StaticPodDir, int32(ports[0]), int32(ports[1]))
	rt.configureKubelet(cfg)
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(k.ConfigPath, data, 0o644); err != nil {
		return nil, err
	}
	return k, os.WriteFile(layout.ArtifactPath("kubelet-config.yaml"), data, 0o644)
}

// kubeletConfiguration is the node's configuration. Every setting that
// differs from the defaults is there because this VM or this harness
// needs it.
func kubeletConfiguration(layout Layout, caPath, criEndpoint, staticPodDir string, port, healthzPort int32) *kubeletconfigv1beta1.KubeletConfiguration {
	return &kubeletconfigv1beta1.KubeletConfiguration{
		TypeMeta: metav1.TypeMeta{APIVersion: "kubelet.config.k8s.io/v1beta1", Kind: "KubeletConfiguration"},
		Address:  "127.0.0.1",
		Port:     port,
		// 0 turns the unauthenticated read-only port off.
		ReadOnlyPort:       0,
		HealthzBindAddress: "127.0.0.1",
		HealthzPort:        ptr.To(healthzPort),
		Authentication: kubeletconfigv1beta1.KubeletAuthentication{
			X509:      kubeletconfigv1beta1.KubeletX509Authentication{ClientCAFile: caPath},
			Webhook:   kubeletconfigv1beta1.KubeletWebhookAuthentication{Enabled: ptr.To(false)},
			Anonymous: kubeletconfigv1beta1.KubeletAnonymousAuthentication{Enabled: ptr.To(false)},
		},
		// Only holders of a certificate from the run's CA get past
		// authentication; the tests read /metrics with the admin one.
		Authorization:            kubeletconfigv1beta1.KubeletAuthorization{Mode: kubeletconfigv1beta1.KubeletAuthorizationModeAlwaysAllow},
		ContainerRuntimeEndpoint: criEndpoint,
		ImageServiceEndpoint:     criEndpoint,
		StaticPodPath:            staticPodDir,
		// The static pod source also watches with inotify; this is the
		// fallback re-list.
		FileCheckFrequency: metav1.Duration{Duration: 5 * time.Second},
		PodLogsDir:         layout.StatePath("pod-logs"),
		VolumePluginDir:    layout.StatePath("volume-plugins"),
		// These VMs are cgroup v1 hosts; the kubelet refuses v1 unless told.
		FailCgroupV1: ptr.To(false),
		// As a node runs: the QoS cgroup hierarchy with a cgroup per pod,
		// and node allocatable enforced on the pods' cgroup, all below a
		// cgroupRoot of the run's own so that the machine's cgroups are
		// left as they are (the harness creates it and teardown removes
		// it). The cgroup driver is runc's (configureKubelet).
		CgroupsPerQOS:          ptr.To(true),
		CgroupRoot:             KubeletCgroupRoot,
		EnforceNodeAllocatable: []string{"pods"},
		// The benchmarks burst 110 pods beside the tests' own.
		MaxPods: 250,
		// Eviction thresholds the machine never reaches: a busy shared disk
		// must not evict test pods.
		EvictionHard: map[string]string{
			"memory.available":  "1Mi",
			"nodefs.available":  "1%",
			"imagefs.available": "1%",
		},
		ImageGCHighThresholdPercent: ptr.To[int32](100),
		ImageGCLowThresholdPercent:  ptr.To[int32](99),
		SerializeImagePulls:         ptr.To(false),
	}
}

func (k *Kubelet) workDir() string { return k.layout.StatePath("kubelet-cwd") }

// args is the kubelet command line for opts.
func (k *Kubelet) args(opts KubeletOptions) []string {
	args := []string{
		"--config=" + k.ConfigPath,
		"--kubeconfig=" + k.kubeconfig,
		"--hostname-override=" + k.NodeName,
		"--root-dir=" + k.RootDir,
		"--v=2",
	}
	if opts.PodAdmission {
		args = append(args, "--feature-gates="+PodAdmissionFeatureGate+"=true")
	}
	if opts.PluginFlags {
		args = append(args,
			"--pod-admission-plugin-config="+k.PluginConfigDir,
			"--pod-admission-plugin-bin-dir="+k.PluginBinDir,
		)
	}
	return append(args, opts.ExtraArgs...)
}

// start starts the kubelet with opts and waits for its /healthz.
func (k *Kubelet) start(ctx context.Context, opts KubeletOptions) error {
	if k.process != nil && k.process.Running() {
		return fmt.Errorf("kubelet is already running (pid %d)", k.process.Pid())
	}
	k.starts++
	p, err := StartProcess(ProcessSpec{
		Name:   "kubelet",
		Binary: k.Binary,
		Args:   k.args(opts),
		// With an empty log path from a runtime, the kubelet's container
		// log cleanup globs its working directory: give it an empty one.
		Dir:     k.workDir(),
		LogPath: k.layout.LogPath("kubelet"),
	})
	if err != nil {
		return err
	}
	k.process = p
	k.options = opts
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	return p.WaitReady(ctx, httpOK(http.DefaultClient, k.HealthzURL))
}

// stop stops the kubelet; its pods keep running in the runtime.
func (k *Kubelet) stop() {
	if k.process != nil {
		k.process.Stop(20 * time.Second)
	}
}

// Options is what the running kubelet was started with.
func (k *Kubelet) Options() KubeletOptions { return k.options }

// Process is the running kubelet process.
func (k *Kubelet) Process() *Process { return k.process }

// Starts counts the kubelet processes started so far in this run.
func (k *Kubelet) Starts() int { return k.starts }

// SupportsPodAdmission returns nil if the kubelet binary has the patch
// series' flags, and otherwise an error that says so: the plugin tests
// cannot run against a vanilla kubelet.
func (k *Kubelet) SupportsPodAdmission() error {
	out, _ := exec.Command(k.Binary, "--help").CombinedOutput()
	if !strings.Contains(string(out), "--pod-admission-plugin-config") {
		version, _ := exec.Command(k.Binary, "--version").CombinedOutput()
		return fmt.Errorf("kubelet %s (%s) has no --pod-admission-plugin-config flag: it is not built with the podadmission patch series (patches/), so the plugin tests cannot run", k.Binary, strings.TrimSpace(string(version)))
	}
	return nil
}
