package exec_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/exec"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust/trusttest"
	"github.com/podadmission/podadmission/test/testplugin/build"
)

// stderrOf returns what a failed call kept of its plugin's stderr, for the
// kubelet's log.
func stderrOf(t *testing.T, err error) string {
	t.Helper()
	var carrier interface{ Stderr() string }
	require.True(t, errors.As(err, &carrier), "%v carries no stderr", err)
	return carrier.Stderr()
}

// requireFailure asserts the error of a failed call and the stderr it
// carries for the log, which the error's message must not contain.
func requireFailure(t *testing.T, err error, wantErr, wantStderr string) {
	t.Helper()
	require.EqualError(t, err, wantErr)
	assert.Equal(t, wantStderr, stderrOf(t, err))
}

// An allowing answer, after the script has run what it leaks: a line that
// prints the PodAdmissionResponse for the request on stdin.
const answerAllowed = `uid=$(grep -o '"uid":"[^"]*"' | head -n 1 | cut -d'"' -f4)
printf '{"apiVersion":"podadmission.kubelet.k8s.io/v1alpha1","kind":"PodAdmissionResponse","uid":"%s","allowed":true}' "$uid"
`

// leaked writes its own pid, as the host sees it, to $PIDFILE and sleeps.
const leaked = `sh -c 'read -r pid rest < /proc/self/stat; echo $pid > "$PIDFILE"; exec sleep 300'`

// waitForPidFile is the script line that waits until the leaked process
// has written its pid, so it is running when the plugin answers.
const waitForPidFile = `while [ ! -s "$PIDFILE" ]; do sleep 0.01; done
`

// leakyPlugin installs a plugin that starts a process with how (a shell
// command around leaked) and then answers "allowed".
func leakyPlugin(t *testing.T, how string) (*exec.Plugin, string) {
	t.Helper()
	dir := binDir(t)
	pidFile := filepath.Join(t.TempDir(), "leaked.pid")
	writeScript(t, dir, "p", how+"\n"+waitForPidFile+answerAllowed)
	p, err := exec.New(&configv1alpha1.PluginConfig{
		Name: "p",
		Type: configv1alpha1.ExecPluginType,
		Env:  []configv1alpha1.ExecEnvVar{{Name: "PIDFILE", Value: pidFile}},
	}, dir)
	require.NoError(t, err)
	return p, pidFile
}

func readPid(t *testing.T, pidFile string) int {
	t.Helper()
	data, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	return pid
}

// Case 4 of issue 12: children that leave the process group survived the
// call, and a plugin that started one and answered "allowed" admitted the
// pod.
var escapes = map[string]string{
	"setsid":      `setsid ` + leaked + ` </dev/null >/dev/null 2>&1 &`,
	"double fork": `(setsid ` + leaked + ` </dev/null >/dev/null 2>&1 &)`,
	"daemonize": `setsid sh -c 'cd / && exec </dev/null >/dev/null 2>&1; ` +
		`sh -c "read -r pid rest < /proc/self/stat; echo \$pid > \"\$PIDFILE\"; exec sleep 300" &' &`,
	"holding stdout": `setsid ` + leaked + ` &`,
}

func TestEscapedChildFailsTheCallAndIsKilled(t *testing.T) {
	if exec.CgroupParent() == "" {
		t.Fatal("this host cannot create cgroups for plugin calls; the counting of escaped children is tested with cgroup v2")
	}
	for name, how := range escapes {
		t.Run(name, func(t *testing.T) {
			p, pidFile := leakyPlugin(t, how)
			resp, err := p.Admit(context.Background(), request("call-1"))
			assert.Nil(t, resp, "an answer from a plugin that leaves processes behind does not count")
			require.Error(t, err)
			assert.Regexp(t, `^pod admission plugin "p": left \d+ process(es)? running after it exited; killed$`, err.Error())
			assertDead(t, readPid(t, pidFile))
			assertNoZombieChildren(t)
		})
	}
}

func TestEscapedChildIsKilledInAPIDNamespace(t *testing.T) {
	exec.ForcePIDNamespace(t)
	for name, how := range escapes {
		t.Run(name, func(t *testing.T) {
			p, pidFile := leakyPlugin(t, how)
			resp, err := p.Admit(context.Background(), request("call-1"))
			require.NoError(t, err, "without cgroups escaped processes cannot be counted, only killed")
			assert.True(t, resp.Allowed)
			assertDead(t, readPid(t, pidFile))
		})
	}
}

func TestCallCgroupsAreRemoved(t *testing.T) {
	parent := exec.CgroupParent()
	if parent == "" {
		t.Fatal("this host cannot create cgroups for plugin calls")
	}
	p, _ := leakyPlugin(t, escapes["setsid"])
	for range 3 {
		_, err := p.Admit(context.Background(), request("call-1"))
		require.Error(t, err)
	}
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	prefix := fmt.Sprintf("pod-admission-%d-", os.Getpid())
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) && strings.HasSuffix(e.Name(), "-p") {
			t.Errorf("the cgroup of a finished call is left: %s", filepath.Join(parent, e.Name()))
		}
	}
}

// Case 7 of issue 12: stderr went into the error, and from there into the
// pod's status.message.
func TestStderrIsNeverInTheError(t *testing.T) {
	dir := binDir(t)
	writeScript(t, dir, "p", "echo password=hunter2 >&2\nexit 1\n")
	p := newPlugin(t, dir, "p")
	_, err := p.Admit(context.Background(), request("call-1"))
	requireFailure(t, err, `pod admission plugin "p": exited with code 1`, `"password=hunter2"`)
	assert.NotContains(t, err.Error(), "hunter2")
}

// Case 1 of issue 12: a symlink from the bin dir to a program in a
// directory another user can write let that user choose what the kubelet
// runs as root.
func TestSymlinkedExecutableInAnotherUsersDirectoryIsNeverRun(t *testing.T) {
	root := trusttest.Dir(t)
	bin := filepath.Join(root, "bin")
	vendor := filepath.Join(root, "opt", "vendor")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.MkdirAll(vendor, 0o755))
	_, err := build.Install(vendor, "p")
	require.NoError(t, err)
	require.NoError(t, os.Symlink(filepath.Join(vendor, "p"), filepath.Join(bin, "p")))
	p := newPlugin(t, bin, "p", "--mode=allow")
	resp, err := p.Admit(context.Background(), request("call-1"))
	require.NoError(t, err, "a symlink along trusted directories is fine")
	require.True(t, resp.Allowed)

	// The vendor directory belongs to nobody, who puts a program of their
	// own in place of the plugin.
	require.NoError(t, trusttest.ChownToNobody(vendor))
	marker := filepath.Join(root, "ran-as-root")
	swap := trusttest.AsNobody(osexec.Command("/bin/sh", "-c",
		`rm -f "$1" && printf '#!/bin/sh\ntouch %s\n' "$2" > "$1" && chmod 0755 "$1"`, "sh", filepath.Join(vendor, "p"), marker))
	out, err := swap.CombinedOutput()
	require.NoError(t, err, "nobody swaps the target: %s", out)

	_, err = p.Admit(context.Background(), request("call-2"))
	require.EqualError(t, err, fmt.Sprintf(`pod admission plugin "p": untrusted executable: %s: on its path, %s: owned by uid 65534, must be owned by root`,
		filepath.Join(bin, "p"), vendor))
	assert.NoFileExists(t, marker, "the program nobody put there never ran")
}

// A kubelet that died during a call left its call's cgroup, maybe with
// processes in it: the first call of the next kubelet ends them.
func TestStaleCallCgroupsAreSweptAway(t *testing.T) {
	parent := exec.CgroupParent()
	if parent == "" {
		t.Fatal("this host cannot create cgroups for plugin calls")
	}
	// A pid that is no process: above pid_max.
	stale := filepath.Join(parent, "pod-admission-4194305-1-p")
	require.NoError(t, os.Mkdir(stale, 0o755))
	leftover := osexec.Command("sleep", "300")
	require.NoError(t, leftover.Start())
	require.NoError(t, os.WriteFile(filepath.Join(stale, "cgroup.procs"), []byte(strconv.Itoa(leftover.Process.Pid)), 0))
	live := filepath.Join(parent, fmt.Sprintf("pod-admission-%d-0-p", os.Getppid()))
	require.NoError(t, os.Mkdir(live, 0o755))
	t.Cleanup(func() { _ = os.Remove(live) })

	exec.SweepStaleCgroups(parent)
	assert.NoDirExists(t, stale)
	assert.Error(t, leftover.Wait(), "the leftover process was killed")
	assert.DirExists(t, live, "the cgroups of a live process are its own")
}
