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

package exectransport_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/exectransport"
)

// BenchmarkAdmitCPU reports the CPU one call costs the calling process
// (the kubelet), apart from the plugin's own: "self-µs/op" is this
// process's user and system time per call, "plugin-µs/op" its reaped
// children's. It runs the same plugin with every part of a call's
// containment, without each part, and as a bare fork and exec, so the
// cost of each part is the difference of two rows measured together.
//
//	go test -run '^$' -bench BenchmarkAdmitCPU -benchtime 300x ./pkg/kubelet/podadmission/exectransport/
func BenchmarkAdmitCPU(b *testing.B) {
	dir := b.TempDir()
	plugin, err := installAllowPlugin(dir)
	require.NoError(b, err)
	req := request("cpu-1")
	stdin, err := podadmissionv1alpha1.EncodeRequest(req)
	require.NoError(b, err)

	admit := func(b *testing.B) {
		p, err := exectransport.New(&configv1alpha1.PluginConfig{Name: "allow", Type: configv1alpha1.ExecPluginType}, dir)
		require.NoError(b, err)
		b.ResetTimer()
		cpuPerCall(b, func() {
			resp, err := p.Admit(context.Background(), req)
			require.NoError(b, err)
			require.True(b, resp.Allowed)
		})
	}
	b.Run("contained", admit)
	b.Run("no-sentinel", func(b *testing.B) {
		exectransport.ForceNoSentinel(b)
		admit(b)
	})
	b.Run("no-cgroup", func(b *testing.B) {
		exectransport.ForceNoCgroup(b)
		admit(b)
	})
	b.Run("bare-exec", func(b *testing.B) {
		cpuPerCall(b, func() {
			cmd := exec.Command(plugin)
			cmd.Stdin = bytes.NewReader(stdin)
			var out bytes.Buffer
			cmd.Stdout = &out
			require.NoError(b, cmd.Run())
		})
	})
}

// cpuPerCall runs call b.N times and reports the CPU it cost this process
// and its children per call.
func cpuPerCall(b *testing.B, call func()) {
	b.Helper()
	before := rusage(b)
	for b.Loop() {
		call()
	}
	after := rusage(b)
	n := float64(b.N)
	b.ReportMetric(float64(after.self-before.self)/n/float64(time.Microsecond), "self-µs/op")
	b.ReportMetric(float64(after.children-before.children)/n/float64(time.Microsecond), "plugin-µs/op")
}

type cpuTimes struct{ self, children time.Duration }

func rusage(b *testing.B) cpuTimes {
	b.Helper()
	var self, children syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &self))
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children))
	total := func(r *syscall.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return cpuTimes{self: total(&self), children: total(&children)}
}

// installAllowPlugin installs, as dir/allow, the transport benchmark's
// static stdlib-only plugin that admits every pod: the cheapest process a
// plugin can be, so that the rows differ by what the transport does.
func installAllowPlugin(dir string) (string, error) {
	path := filepath.Join(dir, "allow")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", path,
		"github.com/podadmission/podadmission/test/transportbench/plugins/minimal")
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", &buildError{err: err, out: out}
	}
	return path, nil
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return e.err.Error() + ": " + string(e.out) }
