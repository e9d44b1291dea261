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
	packages := map[string]string{
		"pod-security-plugin":      "../../cmd/pod-security-plugin",
		"pod-security-plugin-grpc": "../../cmd/pod-security-plugin-grpc",
	}
	for _, name := range []string{"minimal", "sdkexec", "apilinked", "corepod", "sdkgrpc", "echo"} {
		packages[name] = "./plugins/" + name
	}
	for name, pkg := range packages {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(dir, name), pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	return dir, nil
}

// path is one way of admitting the benchmark's pod, timed call by call.
type path struct {
	name string
	call func(b *testing.B, i int)
	// latencies of its calls, in order.
	latencies []time.Duration
}

// benchPaths times the calls of paths side by side: b.N rounds of one call
// of each, in an order that rotates from round to round, so that every path
// sees the same machine (these machines are shared and their load drifts).
// For each path it reports <name>-p50-µs, -p99-µs, -max-µs and -mean-µs,
// and <name>-allocs, the allocations of one call in this process (the
// kubelet's side), counted over 50 more calls.
func benchPaths(b *testing.B, paths ...*path) {
	for _, p := range paths {
		p.latencies = make([]time.Duration, 0, b.N)
	}
	b.ResetTimer()
	for i := range b.N {
		for j := range paths {
			p := paths[(i+j)%len(paths)]
			start := time.Now()
			p.call(b, i)
			p.latencies = append(p.latencies, time.Since(start))
		}
	}
	b.StopTimer()
	for _, p := range paths {
		n := 0
		allocs := testing.AllocsPerRun(50, func() {
			p.call(b, b.N+n)
			n++
		})
		var total time.Duration
		for _, d := range p.latencies {
			total += d
		}
		slices.Sort(p.latencies)
		percentile := func(q float64) float64 {
			return float64(p.latencies[int(q*float64(len(p.latencies)-1))].Nanoseconds()) / 1e3
		}
		b.ReportMetric(percentile(0.50), p.name+"-p50-µs")
		b.ReportMetric(percentile(0.99), p.name+"-p99-µs")
		b.ReportMetric(percentile(1), p.name+"-max-µs")
		b.ReportMetric(float64(total.Nanoseconds())/float64(len(p.latencies))/1e3, p.name+"-mean-µs")
		b.ReportMetric(allocs, p.name+"-allocs")
	}
}

// managerPath admits a new pod at every call through a Manager whose one
// plugin the configuration plugin describes: the kubelet's path, SoftAdmit,
// the chain, the transport, the plugin and back.
func managerPath(b *testing.B, name, plugin string) *path {
	configDir := filepath.Join(filepath.Dir(binDir), name)
	if err := os.Mkdir(configDir, 0o755); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(configDir) })
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
	b.Cleanup(m.Stop)

	pod := benchpod.BenchPod()
	admit := func(uid string) lifecycle.PodAdmitResult {
		pod.UID = types.UID(uid)
		result, _ := m.SoftAdmit(ctx, &lifecycle.PodAdmitAttributes{Pod: pod})
		return result
	}
	// A GRPC plugin connects in the background.
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		result := admit(fmt.Sprintf("warm-up-%d", i))
		if result.Admit {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s never admitted the pod: %s", name, result.Message)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Admission is sticky: every call is a pod the Manager has not seen.
	uids := make([]string, b.N+100)
	for i := range uids {
		uids[i] = fmt.Sprintf("pod-%d", i)
	}
	return &path{name: name, call: func(b *testing.B, i int) {
		if result := admit(uids[i]); !result.Admit {
			b.Fatalf("%s: not admitted: %s: %s", name, result.Reason, result.Message)
		}
	}}
}

// bareExecPath is the Exec reference: fork+exec of the minimal stdlib-only
// static binary with the request's JSON on stdin, its answer read from
// stdout and decoded. No trust check, no containment, no manager.
func bareExecPath(b *testing.B) *path {
	request := benchRequestJSON(b)
	binary := filepath.Join(binDir, "minimal")
	return &path{name: "BareExec", call: func(b *testing.B, _ int) {
		var out bytes.Buffer
		cmd := exec.Command(binary)
		cmd.Stdin = bytes.NewReader(request)
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		var resp struct{ Allowed bool }
		if err := json.Unmarshal(out.Bytes(), &resp); err != nil || !resp.Allowed {
			b.Fatalf("answer %q: %v", out.Bytes(), err)
		}
	}}
}

// bareGRPCPath is the GRPC reference: a unary call that sends the request's
// JSON to an echo server (another process) on a unix socket and gets it
// back.
func bareGRPCPath(b *testing.B) *path {
	socket := startDaemon(b, "echo", socketArg)
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	request := &wrapperspb.BytesValue{Value: benchRequestJSON(b)}
	ctx := b.Context()
	p := &path{name: "BareGRPC", call: func(b *testing.B, _ int) {
		callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		out := &wrapperspb.BytesValue{}
		if err := conn.Invoke(callCtx, echo.Method, request, out); err != nil {
			b.Fatal(err)
		}
		if len(out.Value) != len(request.Value) {
			b.Fatalf("echoed %d bytes of %d", len(out.Value), len(request.Value))
		}
	}}
	p.call(b, 0) // connect
	return p
}

// BenchmarkAdmitExec: the plugin a process per call. ExecSDK is sdkexec,
// written with the SDK, through the manager and its Exec transport;
// ExecStdlib the minimal stdlib-only binary the same way (what the manager
// and the transport add); ExecCorePod sdkexec's policy on
// k8s.io/api/core/v1's Pod from package corepod (what a plugin that hands
// pods to Kubernetes libraries pays for them), ExecAPILinked sdkexec with
// what corepod links but does not call (the part of that price a process
// pays before it reads the pod); ExecPodSecurity the shipped
// pod-security-plugin at the baseline level; BareExec the minimal binary
// without the manager.
func BenchmarkAdmitExec(b *testing.B) {
	benchPaths(b,
		bareExecPath(b),
		managerPath(b, "ExecSDK", "- name: sdkexec\n  type: Exec\n"),
		managerPath(b, "ExecStdlib", "- name: minimal\n  type: Exec\n"),
		managerPath(b, "ExecAPILinked", "- name: apilinked\n  type: Exec\n"),
		managerPath(b, "ExecCorePod", "- name: corepod\n  type: Exec\n"),
		managerPath(b, "ExecPodSecurity", "- name: pod-security-plugin\n  type: Exec\n  args: [\"--level=baseline\"]\n"),
	)
}

// BenchmarkAdmitGRPC: the plugin a daemon on a unix socket. GRPCSDK is
// sdkgrpc, written with the SDK, through the manager and its GRPC
// transport; GRPCPodSecurity the shipped pod-security-plugin's policy as
// the daemon pod-security-plugin-grpc at the baseline level, the same way
// (ExecPodSecurity's policy without a process per call); BareGRPC the echo
// call.
func BenchmarkAdmitGRPC(b *testing.B) {
	sdkSocket := startDaemon(b, "sdkgrpc", socketArg)
	podSecuritySocket := startDaemon(b, "pod-security-plugin-grpc", func(socket string) []string {
		return []string{"--socket=" + socket, "--level=baseline"}
	})
	benchPaths(b,
		bareGRPCPath(b),
		managerPath(b, "GRPCSDK", "- name: sdkgrpc\n  type: GRPC\n  endpoint: unix://"+sdkSocket+"\n"),
		managerPath(b, "GRPCPodSecurity", "- name: pod-security-plugin-grpc\n  type: GRPC\n  endpoint: unix://"+podSecuritySocket+"\n"),
	)
}

// socketArg is the command line of the test plugins' daemons: the socket.
func socketArg(socket string) []string { return []string{socket} }

// startDaemon runs the daemon binDir/name with the arguments args gives for
// a new socket until the benchmark ends and returns the socket. Its stderr
// is shown only if the benchmark fails: go test prints a benchmark's name
// before running it, and a line logged meanwhile would split its result
// line.
func startDaemon(b *testing.B, name string, args func(socket string) []string) string {
	dir, err := os.MkdirTemp(filepath.Dir(binDir), "run")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	socket := filepath.Join(dir, name+".sock")
	daemon := exec.Command(filepath.Join(binDir, name), args(socket)...)
	var stderr bytes.Buffer
	daemon.Stderr = &stderr
	if err := daemon.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = daemon.Process.Kill()
		_ = daemon.Wait()
		if b.Failed() {
			b.Logf("%s's stderr:\n%s", name, &stderr)
		}
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
	data, err := benchpod.RequestJSON()
	if err != nil {
		b.Fatal(err)
	}
	return data
}
