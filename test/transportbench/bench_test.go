package transportbench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission"
	execplugin "github.com/podadmission/podadmission/pkg/kubelet/podadmission/exec"
	grpcplugin "github.com/podadmission/podadmission/pkg/kubelet/podadmission/grpc"
	"github.com/podadmission/podadmission/pkg/plugin"
	"github.com/podadmission/podadmission/test/testplugin/build"
)

func TestMain(m *testing.M) {
	// The transports log connections; keep the benchmark output a table.
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	_ = klogFlags.Set("logtostderr", "false")
	_ = klogFlags.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	code := m.Run()
	build.Cleanup()
	os.Exit(code)
}

// benchRequest is a request for a typical workload pod: two containers with
// resources, probes, env and volumes (about 3 KB of JSON).
func benchRequest(i int) *podadmissionv1alpha1.PodAdmissionRequest {
	container := func(name, image string) corev1.Container {
		return corev1.Container{
			Name:  name,
			Image: image,
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Env:   []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
			VolumeMounts:   []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 5},
		}
	}
	return &podadmissionv1alpha1.PodAdmissionRequest{
		UID: types.UID(fmt.Sprintf("call-%d", i)),
		Pod: &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: "team-a", Name: "web-7d9f8c6b5-x2x4z", UID: "1f0c2a9e-3b1d-4a8e-9c55-0d7c3c1e2b7a",
				Labels:          map[string]string{"app": "web", "pod-template-hash": "7d9f8c6b5", "team": "a"},
				Annotations:     map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-11-29T10:00:00Z"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9f8c6b5", UID: "5b2e", Controller: ptr.To(true)}},
			},
			Spec: corev1.PodSpec{
				Containers:         []corev1.Container{container("web", "registry.example/web:1.4.2"), container("sidecar", "registry.example/proxy:2.0.1")},
				Volumes:            []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}}}},
				ServiceAccountName: "web",
				NodeName:           "node-a",
				Tolerations:        []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
			},
		},
		Node: podadmissionv1alpha1.NodeInfo{
			Name:     "node-a",
			Labels:   map[string]string{"kubernetes.io/hostname": "node-a", "topology.kubernetes.io/zone": "eu-1a"},
			NodeInfo: corev1.NodeSystemInfo{KernelVersion: "6.1.0-28-amd64", OSImage: "Debian GNU/Linux 12 (bookworm)", ContainerRuntimeVersion: "containerd://2.1.0", KubeletVersion: "v1.37.2", OperatingSystem: "linux", Architecture: "amd64"},
		},
		Attempt: 1,
	}
}

// benchAdmit calls admit b.N times and reports latency percentiles.
func benchAdmit(b *testing.B, admit func(ctx context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error)) {
	ctx := context.Background()
	reqs := make([]*podadmissionv1alpha1.PodAdmissionRequest, 64)
	for i := range reqs {
		reqs[i] = benchRequest(i)
	}
	latencies := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		resp, err := admit(ctx, reqs[i%len(reqs)])
		latencies = append(latencies, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		if !resp.Allowed {
			b.Fatalf("not allowed: %+v", resp)
		}
	}
	b.StopTimer()
	slices.Sort(latencies)
	percentile := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(percentile(0.50), "p50-µs")
	b.ReportMetric(percentile(0.99), "p99-µs")
	b.ReportMetric(percentile(1), "max-µs")
}

// BenchmarkAdmitInProcess is the baseline: the same codec and SDK handling
// as an Exec plugin, without a process or a socket.
func BenchmarkAdmitInProcess(b *testing.B) {
	allow := func(context.Context, *plugin.Request) (*plugin.Response, error) { return plugin.Allow(), nil }
	var out bytes.Buffer
	benchAdmit(b, func(ctx context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
		r := *req
		r.APIVersion = podadmissionv1alpha1.SchemeGroupVersion.String()
		in, err := podadmissionv1alpha1.EncodeRequest(&r)
		if err != nil {
			return nil, err
		}
		out.Reset()
		if err := plugin.HandleExec(ctx, allow, bytes.NewReader(in), &out); err != nil {
			return nil, err
		}
		return podadmissionv1alpha1.DecodeResponse(out.Bytes(), &r)
	})
}

// BenchmarkAdmitExec runs the test plugin, built with the SDK.
func BenchmarkAdmitExec(b *testing.B) {
	binDir := b.TempDir()
	if err := os.Chmod(binDir, 0o755); err != nil {
		b.Fatal(err)
	}
	if _, err := build.Install(binDir, "allow"); err != nil {
		b.Fatal(err)
	}
	benchExec(b, binDir, "allow", "--mode=allow")
}

// BenchmarkAdmitExecMinimal runs minimalplugin: the Exec transport and a
// Go process, without the cost of the SDK's packages.
func BenchmarkAdmitExecMinimal(b *testing.B) {
	binDir := b.TempDir()
	if err := os.Chmod(binDir, 0o755); err != nil {
		b.Fatal(err)
	}
	out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, "minimal"), "./minimalplugin").CombinedOutput()
	if err != nil {
		b.Fatalf("go build ./minimalplugin: %v\n%s", err, out)
	}
	benchExec(b, binDir, "minimal")
}

func benchExec(b *testing.B, binDir, name string, args ...string) {
	p, err := execplugin.New(&configv1alpha1.PluginConfig{
		Name: name, Type: configv1alpha1.ExecPluginType, Args: args,
		Timeout: &metav1.Duration{Duration: 5 * time.Second},
	}, binDir)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	benchAdmit(b, p.Admit)
}

func BenchmarkAdmitGRPC(b *testing.B) {
	bin, err := build.Binary()
	if err != nil {
		b.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "podadm-bench")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	socket := filepath.Join(dir, "allow.sock")
	daemon := exec.Command(bin, "--serve="+socket, "--mode=allow")
	if err := daemon.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = daemon.Process.Kill()
		_ = daemon.Wait()
	}()
	waitServing(b, socket)

	p, err := grpcplugin.New(&configv1alpha1.PluginConfig{
		Name: "allow", Type: configv1alpha1.GRPCPluginType, Endpoint: "unix://" + socket,
		Timeout: &metav1.Duration{Duration: 5 * time.Second},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	go drain(p.Reevaluations())
	benchAdmit(b, p.Admit)
}

func waitServing(b *testing.B, socket string) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if conn, err := net.Dial("unix", socket); err == nil {
			conn.Close()
			return
		}
	}
	b.Fatalf("the test plugin does not serve on %s", socket)
}

func drain(ch <-chan podadmission.Reevaluation) {
	for range ch {
	}
}
