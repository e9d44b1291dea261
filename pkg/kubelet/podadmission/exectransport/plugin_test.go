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
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/exectransport"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
	"github.com/podadmission/podadmission/test/testplugin/build"
)

var _ transport.Plugin = (*exectransport.Plugin)(nil)

func request(uid types.UID) *podadmissionv1alpha1.PodAdmissionRequest {
	return &podadmissionv1alpha1.PodAdmissionRequest{
		TypeMeta: podadmissionv1alpha1.RequestTypeMeta(),
		UID:      uid,
		Pod: &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web", UID: "pod-uid-1"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		},
		Node:    podadmissionv1alpha1.NodeInfo{Name: "node-a"},
		Static:  true,
		Attempt: 2,
	}
}

// binDir returns a fresh plugin bin dir, mode 0755 like a real one.
func binDir(t *testing.T) string {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	return dir
}

// newTestPlugin installs the test plugin as binDir/name and returns an Exec
// plugin that runs it with args.
func newTestPlugin(t *testing.T, name string, args ...string) (*exectransport.Plugin, string) {
	dir := binDir(t)
	_, err := build.Install(dir, name)
	require.NoError(t, err)
	return newPlugin(t, dir, name, args...), dir
}

func newPlugin(t *testing.T, dir, name string, args ...string) *exectransport.Plugin {
	p, err := exectransport.New(&configv1alpha1.PluginConfig{
		Name: name,
		Type: configv1alpha1.ExecPluginType,
		Args: args,
	}, dir)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	return p
}

// writeScript installs an executable script as dir/name. The transport runs
// it like any executable; the kernel, not the transport, reads the #!.
func writeScript(t *testing.T, dir, name, script string) {
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script), 0o755))
}

func TestAllow(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "calls.log")
	p, _ := newTestPlugin(t, "allow-all", "--mode=allow", "--log-file="+logFile)

	resp, err := p.Admit(context.Background(), request("call-1"))
	require.NoError(t, err)
	assert.Equal(t, &podadmissionv1alpha1.PodAdmissionResponse{
		TypeMeta: metav1.TypeMeta{APIVersion: "podadmission.kubelet.k8s.io/v1alpha1", Kind: "PodAdmissionResponse"},
		UID:      "call-1",
		Allowed:  true,
	}, resp)

	calls, err := os.ReadFile(logFile)
	require.NoError(t, err)
	assert.Equal(t, "team-a/web uid=pod-uid-1 attempt=2 static=true\n", string(calls), "the plugin sees the request's pod, attempt and source")
}

func TestDenyWithArgs(t *testing.T) {
	p, _ := newTestPlugin(t, "deny-all", "--mode=deny", "--reason=ImageNotSigned", "--message=image nginx is not signed", "--retry-after=30s")

	resp, err := p.Admit(context.Background(), request("call-1"))
	require.NoError(t, err)
	assert.False(t, resp.Allowed)
	assert.Equal(t, "ImageNotSigned", resp.Reason)
	assert.Equal(t, "image nginx is not signed", resp.Message)
	assert.Equal(t, ptr.To[int32](30), resp.RetryAfterSeconds)
}

func TestMinimalEnvironmentArgsAndNoShell(t *testing.T) {
	dir := binDir(t)
	self, err := os.Executable()
	require.NoError(t, err)
	data, err := os.ReadFile(self)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, envDumperName), data, 0o755))
	t.Setenv("KUBELET_SECRET", "must-not-leak")

	p, err := exectransport.New(&configv1alpha1.PluginConfig{
		Name: envDumperName,
		Type: configv1alpha1.ExecPluginType,
		Args: []string{"--flag=a b", "$HOME", "*"},
		Env:  []configv1alpha1.ExecEnvVar{{Name: "ZONE", Value: "eu-1"}, {Name: "EMPTY", Value: ""}},
	}, dir)
	require.NoError(t, err)

	_, err = p.Admit(context.Background(), request("call-1"))
	requireFailure(t, err, `exited with code 7`, `"args=--flag=a b,$HOME,* env=PATH=/usr/sbin:/usr/bin:/sbin:/bin,ZONE=eu-1,EMPTY= own-fd=closed"`)
}

func TestConfiguredEnvOverridesPath(t *testing.T) {
	dir := binDir(t)
	writeScript(t, dir, "path-printer", `echo "PATH=$PATH" >&2; exit 1`)
	p, err := exectransport.New(&configv1alpha1.PluginConfig{
		Name: "path-printer",
		Type: configv1alpha1.ExecPluginType,
		Env:  []configv1alpha1.ExecEnvVar{{Name: "PATH", Value: "/opt/plugin/bin:/usr/bin:/bin"}},
	}, dir)
	require.NoError(t, err)

	_, err = p.Admit(context.Background(), request("call-1"))
	requireFailure(t, err, `exited with code 1`, `"PATH=/opt/plugin/bin:/usr/bin:/bin"`)
}

func TestMissingExecutableBlocksUntilInstalled(t *testing.T) {
	dir := binDir(t)
	p := newPlugin(t, dir, "late")

	_, err := p.Admit(context.Background(), request("call-1"))
	require.EqualError(t, err, fmt.Sprintf(`executable %s/late does not exist`, dir))

	_, err = build.Install(dir, "late")
	require.NoError(t, err)
	resp, err := p.Admit(context.Background(), request("call-2"))
	require.NoError(t, err, "a binary installed after the plugin was configured is used at the next call")
	assert.True(t, resp.Allowed)
}

func TestUntrustedExecutable(t *testing.T) {
	for name, tc := range map[string]struct {
		setup   func(t *testing.T, dir, path string)
		wantErr string
	}{
		"not owned by root": {
			setup:   func(t *testing.T, _, path string) { require.NoError(t, os.Chown(path, 1000, 1000)) },
			wantErr: `untrusted executable: %[2]s: owned by uid 1000, must be owned by root`,
		},
		"group writable": {
			setup:   func(t *testing.T, _, path string) { require.NoError(t, os.Chmod(path, 0o775)) },
			wantErr: `untrusted executable: %[2]s: mode 0775 is group or world writable`,
		},
		"world writable": {
			setup:   func(t *testing.T, _, path string) { require.NoError(t, os.Chmod(path, 0o757)) },
			wantErr: `untrusted executable: %[2]s: mode 0757 is group or world writable`,
		},
		"not executable": {
			setup:   func(t *testing.T, _, path string) { require.NoError(t, os.Chmod(path, 0o644)) },
			wantErr: `executable %[2]s is not executable (mode 0644)`,
		},
		"a directory": {
			setup: func(t *testing.T, _, path string) {
				require.NoError(t, os.Remove(path))
				require.NoError(t, os.Mkdir(path, 0o755))
			},
			wantErr: `untrusted executable: %[2]s: not a regular file (d---------)`,
		},
		"bin dir writable by others": {
			setup:   func(t *testing.T, dir, _ string) { require.NoError(t, os.Chmod(dir, 0o777)) },
			wantErr: `untrusted plugin bin dir: %[1]s: mode 0777 is group or world writable`,
		},
		"bin dir not owned by root": {
			setup:   func(t *testing.T, dir, _ string) { require.NoError(t, os.Chown(dir, 1000, 1000)) },
			wantErr: `untrusted plugin bin dir: %[1]s: owned by uid 1000, must be owned by root`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			p, dir := newTestPlugin(t, "p")
			path := filepath.Join(dir, "p")
			tc.setup(t, dir, path)

			_, err := p.Admit(context.Background(), request("call-1"))
			require.EqualError(t, err, fmt.Sprintf(tc.wantErr, dir, path))
		})
	}
}

func TestPluginFailures(t *testing.T) {
	for name, tc := range map[string]struct {
		args       []string
		wantErr    string
		wantStderr string
	}{
		"crash": {
			args:       []string{"--mode=crash"},
			wantErr:    `exited with code 3`,
			wantStderr: `"testplugin: crashing as asked"`,
		},
		"garbage": {
			args:    []string{"--mode=garbage"},
			wantErr: `invalid response: not JSON: invalid character 'h' in literal true (expecting 'r')`,
		},
		"huge": {
			args:    []string{"--mode=huge"},
			wantErr: `response larger than 1 MiB; its processes were killed`,
		},
		"wrong apiVersion": {
			args:    []string{"--mode=wrong-api-version"},
			wantErr: `invalid response: apiVersion "podadmission.kubelet.k8s.io/v1" does not match the request's "podadmission.kubelet.k8s.io/v1alpha1"`,
		},
		"handler error": {
			args:       []string{"--decision-file=/nonexistent/decision"},
			wantErr:    `exited with code 1`,
			wantStderr: `"cannot read the decision file: open /nonexistent/decision: no such file or directory"`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			p, _ := newTestPlugin(t, "p", tc.args...)
			resp, err := p.Admit(context.Background(), request("call-1"))
			if tc.wantStderr != "" {
				requireFailure(t, err, tc.wantErr, tc.wantStderr)
			}
			require.EqualError(t, err, tc.wantErr)
			assert.Nil(t, resp)
		})
	}
}

func TestScriptFailures(t *testing.T) {
	for name, tc := range map[string]struct {
		script     string
		wantErr    string
		wantStderr string
	}{
		"empty output": {
			script:  "exit 0\n",
			wantErr: `invalid response: empty, want a PodAdmissionResponse JSON object`,
		},
		"exit code without stderr": {
			script:  "exit 42\n",
			wantErr: `exited with code 42`,
		},
		"killed by a signal": {
			script:     "echo about to crash >&2; kill -SEGV $$\n",
			wantErr:    `killed by signal SIGSEGV`,
			wantStderr: `"about to crash"`,
		},
		"stderr keeps its end": {
			script:     "i=0; while [ $i -lt 1000 ]; do echo 'line of noise' >&2; i=$((i+1)); done; echo 'the real error' >&2; exit 1\n",
			wantErr:    `exited with code 1`,
			wantStderr: stderrTail(strings.Repeat("line of noise\n", 1000)+"the real error\n", 4096),
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := binDir(t)
			writeScript(t, dir, "p", tc.script)
			p := newPlugin(t, dir, "p")
			_, err := p.Admit(context.Background(), request("call-1"))
			require.EqualError(t, err, tc.wantErr)
			if tc.wantStderr != "" {
				requireFailure(t, err, tc.wantErr, tc.wantStderr)
			}
		})
	}
}

// stderrTail is how the log quotes the last max bytes of stderr.
func stderrTail(stderr string, max int) string {
	return strconv.Quote("..." + strings.TrimRight(stderr[len(stderr)-max:], "\n"))
}

func TestNotAnExecutableFormat(t *testing.T) {
	dir := binDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p"), []byte("not a program\n"), 0o755))
	p := newPlugin(t, dir, "p")
	_, err := p.Admit(context.Background(), request("call-1"))
	require.EqualError(t, err, fmt.Sprintf(`cannot start %s/p: exec format error`, dir))
}

func TestNewRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		cfg     configv1alpha1.PluginConfig
		binDir  string
		wantErr string
	}{
		"GRPC plugin": {
			cfg:     configv1alpha1.PluginConfig{Name: "p", Type: configv1alpha1.GRPCPluginType},
			binDir:  "/opt/bin",
			wantErr: `type is "GRPC", not "Exec"`,
		},
		"name with a slash": {
			cfg:     configv1alpha1.PluginConfig{Name: "../sbin/p", Type: configv1alpha1.ExecPluginType},
			binDir:  "/opt/bin",
			wantErr: `the name must be a file name in the plugin bin dir`,
		},
		"dot dot": {
			cfg:     configv1alpha1.PluginConfig{Name: "..", Type: configv1alpha1.ExecPluginType},
			binDir:  "/opt/bin",
			wantErr: `the name must be a file name in the plugin bin dir`,
		},
		"relative bin dir": {
			cfg:     configv1alpha1.PluginConfig{Name: "p", Type: configv1alpha1.ExecPluginType},
			binDir:  "bin",
			wantErr: `plugin bin dir "bin" is not an absolute path`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := exectransport.New(&tc.cfg, tc.binDir)
			require.EqualError(t, err, tc.wantErr)
			assert.Nil(t, p)
		})
	}
}

func TestConcurrentCalls(t *testing.T) {
	p, _ := newTestPlugin(t, "p", "--mode=deny", "--reason=No")
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			uid := types.UID(fmt.Sprintf("call-%d", i))
			resp, err := p.Admit(context.Background(), request(uid))
			if assert.NoError(t, err) {
				assert.Equal(t, uid, resp.UID)
				assert.Equal(t, "No", resp.Reason)
			}
		})
	}
	wg.Wait()
	assertNoZombieChildren(t)
}

func TestTimeoutKillsProcessGroup(t *testing.T) {
	p, _ := newTestPlugin(t, "p", "--mode=fork-sleep")

	// Long enough for the plugin to start its child and say so on a loaded
	// machine (at 500 ms it was sometimes killed before it wrote), far
	// shorter than the child's sleep.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := p.Admit(ctx, request("call-1"))
	elapsed := time.Since(start)
	require.EqualError(t, err, `stopped (context deadline exceeded); its processes were killed`)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "the chain tells a stopped call by its error")
	m := regexp.MustCompile(`^"testplugin: pid (\d+) forked child pid (\d+)"$`).FindStringSubmatch(stderrOf(t, err))
	require.NotNil(t, m, "stderr: %s", stderrOf(t, err))
	assert.Less(t, elapsed, 10*time.Second, "the call must end at its deadline, not when the sleeping child would exit (in an hour)")

	leader, _ := strconv.Atoi(m[1])
	child, _ := strconv.Atoi(m[2])
	assertGone(t, leader)
	assertDead(t, child)
	assertNoZombieChildren(t)
}

func TestCallerDeadlineAndCancel(t *testing.T) {
	p, _ := newTestPlugin(t, "p", "--mode=sleep")

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err := p.Admit(ctx, request("call-1"))
	require.EqualError(t, err, `stopped (context canceled); its processes were killed`)
	assert.ErrorIs(t, err, context.Canceled)
	assertNoZombieChildren(t)
}

func TestChildLeftBehindIsKilled(t *testing.T) {
	p, pidFile := scriptPlugin(t, leaked+" &\n"+waitForPidFile+"exit 5\n")

	start := time.Now()
	_, err := p.Admit(context.Background(), request("call-1"))
	require.Error(t, err)
	assert.Less(t, time.Since(start), 3*time.Second, "a child holding stdout must not hold up the call")
	require.EqualError(t, err, `exited with code 5 and left 1 process running; killed`)
	assertDead(t, readPid(t, pidFile))
}

// assertGone asserts that pid, a process this test started, was reaped.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	assert.True(t, os.IsNotExist(err), "process %d still exists", pid)
}

// assertDead asserts that pid is dead: gone, or a zombie waiting for init
// (it is not this process's child) to reap it.
func assertDead(t *testing.T, pid int) {
	t.Helper()
	assert.Eventually(t, func() bool {
		state, ok := procState(pid)
		return !ok || state == "Z"
	}, 5*time.Second, 10*time.Millisecond, "process %d is still running", pid)
}

// assertNoZombieChildren asserts that every plugin process was reaped.
func assertNoZombieChildren(t *testing.T) {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 && fields[0] == "Z" && fields[1] == strconv.Itoa(os.Getpid()) {
			t.Errorf("zombie child %d left behind", pid)
		}
	}
}

// procState returns the state letter of pid from /proc/<pid>/stat.
func procState(pid int) (string, bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return fields[0], true
}

// An exec the kernel refuses with EACCES though the file passed its checks
// (here: a noexec mount, which the checks do not look at) says which
// process it was and what the checked descriptor was, which tells a
// refused file from a descriptor that is no longer the checked file.
func TestAStartRefusedSaysWhatWasExecuted(t *testing.T) {
	dir := binDir(t)
	require.NoError(t, unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOEXEC, "mode=0755"))
	t.Cleanup(func() { assert.NoError(t, unix.Unmount(dir, unix.MNT_DETACH)) })
	_, err := build.Install(dir, "p")
	require.NoError(t, err)
	p := newPlugin(t, dir, "p")
	_, err = p.Admit(context.Background(), request("call-1"))
	require.Error(t, err)
	assert.ErrorIs(t, err, unix.EACCES)
	assert.Regexp(t, `^cannot start `+regexp.QuoteMeta(dir)+`/p: permission denied \(executing the call's init; its descriptor [0-9]+ is a regular file, mode 0755, `+regexp.QuoteMeta(dir)+`/p\)$`, err.Error())
}
