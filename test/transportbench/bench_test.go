package transportbench

import (
	"bytes"
	"context"
	"encoding/json"
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

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/wrapperspb"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission"
	"github.com/podadmission/podadmission/test/transportbench/benchpod"
	"github.com/podadmission/podadmission/test/transportbench/echo"
)

// binDir holds the plugins, built once for every benchmark.
var binDir string

func TestMain(m *testing.M) {
	// The manager logs connections; keep the benchmark output a table.
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	_ = klogFlags.Set("logtostderr", "false")
	_ = klogFlags.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	flag.Parse()
	if benchmarking() {
		var err error
		if binDir, err = buildPlugins(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(filepath.Dir(binDir))
	}
	os.Exit(code)
}

// benchmarking says whether -test.bench selects a benchmark.
func benchmarking() bool {
	f := flag.Lookup("test.bench")
	return f != nil && f.Value.String() != ""
}

// buildPlugins builds the plugins as the release builds its plugins (static,
// stripped) into a trusted bin dir, and returns it.
func buildPlugins() (string, error) {
	root, err := os.MkdirTemp("", "podadm-bench")
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "bin")
	for _, d := range []string{root, dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", err
		}
		if err := os.Chmod(d, 0o755); err != nil {
			return "", err
		}
	}
	for _, name := range []string{"minimal", "sdkexec", "sdkgrpc", "echo"} {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(dir, name), "./plugins/"+name)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build ./plugins/%s: %v\n%s", name, err, out)
		}
	}
	return dir, nil
}

// record times each call of a benchmark and reports p50-µs, p99-µs and
// max-µs besides Go's mean (ns/op).
type record struct {
	b         *testing.B
	latencies []time.Duration
}

func newRecord(b *testing.B) *record {
	b.ReportAllocs()
	return &record{b: b, latencies: make([]time.Duration, 0, b.N)}
}

func (r *record) add(d time.Duration) { r.latencies = append(r.latencies, d) }

func (r *record) report() {
	slices.Sort(r.latencies)
	percentile := func(p float64) float64 {
		return float64(r.latencies[int(p*float64(len(r.latencies)-1))].Nanoseconds()) / 1e3
	}
	r.b.ReportMetric(percentile(0.50), "p50-µs")
	r.b.ReportMetric(percentile(0.99), "p99-µs")
	r.b.ReportMetric(percentile(1), "max-µs")
}

// benchManager admits a new pod b.N times through a Manager whose one
// plugin the configuration plugin describes (the kubelet's path:
// SoftAdmit, the chain, the transport, the plugin and back).
func benchManager(b *testing.B, plugin string) {
	configDir := filepath.Join(filepath.Dir(binDir), b.Name())
	if err := os.Mkdir(configDir, 0o755); err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(configDir)
	config := "apiVersion: podadmission.kubelet.config.k8s.io/v1alpha1\nkind: PodAdmissionConfiguration\nplugins:\n" + plugin
	if err := os.WriteFile(filepath.Join(configDir, "10-bench.yaml"), []byte(config), 0o644); err != nil {
		b.Fatal(err)
	}
	m, err := podadmission.NewManager(podadmission.Options{
		ConfigPath: configDir, BinDir: binDir, NodeName: "node-a",
		GetNode: func() (*corev1.Node, error) { return benchpod.BenchNode(), nil },
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	m.Start(ctx)
	defer m.Stop()

	pod := benchpod.BenchPod()
	admit := func(uid types.UID) {
		pod.UID = uid
		result, _ := m.SoftAdmit(ctx, &lifecycle.PodAdmitAttributes{Pod: pod})
		if !result.Admit {
			b.Fatalf("not admitted: %s: %s", result.Reason, result.Message)
		}
	}
	// A GRPC plugin connects in the background.
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		pod.UID = types.UID(fmt.Sprintf("warm-up-%d", i))
		if result, _ := m.SoftAdmit(ctx, &lifecycle.PodAdmitAttributes{Pod: pod}); result.Admit {
			break
		} else if time.Now().After(deadline) {
			b.Fatalf("the plugin never admitted the pod: %s", result.Message)
		}
		time.Sleep(10 * time.Millisecond)
	}
	uids := make([]types.UID, b.N)
	for i := range uids {
		uids[i] = types.UID(fmt.Sprintf("pod-%d", i))
	}

	r := newRecord(b)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		admit(uids[i])
		r.add(time.Since(start))
	}
	b.StopTimer()
	r.report()
}

// BenchmarkAdmitBareExec is the Exec reference: fork+exec of the minimal
// stdlib-only static binary with the request's JSON on stdin, its answer
// read from stdout and decoded. No trust check, no containment, no manager.
func BenchmarkAdmitBareExec(b *testing.B) {
	request := benchRequestJSON(b)
	path := filepath.Join(binDir, "minimal")
	r := newRecord(b)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		var out bytes.Buffer
		cmd := exec.Command(path)
		cmd.Stdin = bytes.NewReader(request)
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		var resp struct{ Allowed bool }
		if err := json.Unmarshal(out.Bytes(), &resp); err != nil || !resp.Allowed {
			b.Fatalf("answer %q: %v", out.Bytes(), err)
		}
		r.add(time.Since(start))
	}
	b.StopTimer()
	r.report()
}

// BenchmarkAdmitExecSDK admits through the manager and its Exec transport,
// the plugin a process of sdkexec, written with the SDK.
func BenchmarkAdmitExecSDK(b *testing.B) {
	benchManager(b, "- name: sdkexec\n  type: Exec\n")
}

// BenchmarkAdmitExecStdlib is BenchmarkAdmitExecSDK with the minimal
// plugin: what the manager and the Exec transport add to a bare exec.
func BenchmarkAdmitExecStdlib(b *testing.B) {
	benchManager(b, "- name: minimal\n  type: Exec\n")
}

// BenchmarkAdmitBareGRPC is the GRPC reference: a unary call that sends the
// request's JSON to an echo server (another process) on a unix socket and
// gets it back.
func BenchmarkAdmitBareGRPC(b *testing.B) {
	socket := startDaemon(b, "echo")
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	request := &wrapperspb.BytesValue{Value: benchRequestJSON(b)}
	ctx := b.Context()
	call := func() {
		callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		out := &wrapperspb.BytesValue{}
		if err := conn.Invoke(callCtx, echo.Method, request, out); err != nil {
			b.Fatal(err)
		}
		if len(out.Value) != len(request.Value) {
			b.Fatalf("echoed %d bytes of %d", len(out.Value), len(request.Value))
		}
	}
	call() // connect
	r := newRecord(b)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		call()
		r.add(time.Since(start))
	}
	b.StopTimer()
	r.report()
}

// BenchmarkAdmitGRPCSDK admits through the manager and its GRPC transport,
// the plugin a daemon of sdkgrpc (another process), written with the SDK.
func BenchmarkAdmitGRPCSDK(b *testing.B) {
	socket := startDaemon(b, "sdkgrpc")
	benchManager(b, "- name: sdkgrpc\n  type: GRPC\n  endpoint: unix://"+socket+"\n")
}

// startDaemon runs the daemon binDir/name on a new socket until the
// benchmark ends and returns the socket.
func startDaemon(b *testing.B, name string) string {
	dir, err := os.MkdirTemp(filepath.Dir(binDir), "run")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	socket := filepath.Join(dir, name+".sock")
	daemon := exec.Command(filepath.Join(binDir, name), socket)
	daemon.Stderr = os.Stderr
	if err := daemon.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = daemon.Process.Kill()
		_ = daemon.Wait()
		os.RemoveAll(dir)
	})
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if conn, err := net.Dial("unix", socket); err == nil {
			conn.Close()
			return socket
		}
	}
	b.Fatalf("%s does not serve on %s", name, socket)
	return ""
}

// benchRequestJSON is the request the kubelet sends an Exec plugin for the
// benchmark's pod.
func benchRequestJSON(b *testing.B) []byte {
	node := benchpod.BenchNode()
	data, err := podadmissionv1alpha1.EncodeRequest(&podadmissionv1alpha1.PodAdmissionRequest{
		TypeMeta: podadmissionv1alpha1.RequestTypeMeta(),
		UID:      "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
		Pod:      benchpod.BenchPod(),
		Node:     podadmissionv1alpha1.NodeInfo{Name: node.Name, Labels: node.Labels, NodeInfo: node.Status.NodeInfo},
		Attempt:  1,
	})
	if err != nil {
		b.Fatal(err)
	}
	return data
}
