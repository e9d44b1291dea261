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
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/exectransport"
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
func leakyPlugin(t *testing.T, how string) (*exectransport.Plugin, string) {
	t.Helper()
	return scriptPlugin(t, how+"\n"+waitForPidFile+answerAllowed)
}

// scriptPlugin installs script as a plugin that gets $PIDFILE, a file to
// write the pid of what it starts to, and $CGMOUNT.
func scriptPlugin(t *testing.T, script string) (*exectransport.Plugin, string) {
	t.Helper()
	dir := binDir(t)
	pidFile := filepath.Join(t.TempDir(), "leaked.pid")
	writeScript(t, dir, "p", script)
	p, err := exectransport.New(&configv1alpha1.PluginConfig{
		Name: "p",
		Type: configv1alpha1.ExecPluginType,
		Env:  []configv1alpha1.ExecEnvVar{{Name: "PIDFILE", Value: pidFile}, {Name: "CGMOUNT", Value: exectransport.CgroupMount()}},
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

// countModes are the ways a call counts what its plugin left: among the
// descendants of its namespace's init, wherever they moved; in its cgroup
// and below it, as on a kernel whose /proc lists no children; and in its
// namespace on a host where no cgroup can be made for the calls (cgroup
// v1, a tool run outside the kubelet's cgroup).
var countModes = map[string]func(testing.TB){
	"namespace":            func(testing.TB) {},
	"cgroup":               exectransport.ForceCgroupCount,
	"namespace, no cgroup": exectransport.ForceNoCgroup,
}

// requireLeftBehind asserts the error of a call whose plugin answered
// "allowed" after it started how, which left processes behind.
func requireLeftBehind(t *testing.T, resp *podadmissionv1alpha1.PodAdmissionResponse, err error, how string) {
	t.Helper()
	assert.Nil(t, resp, "an answer from a plugin that leaves processes behind does not count")
	require.Error(t, err)
	want := []string{"left 1 process running after it exited; killed"}
	if how == escapes["daemonize"] {
		// The first child may not have exited yet when the plugin
		// answers.
		want = append(want, "left 2 processes running after it exited; killed")
	}
	assert.Contains(t, want, err.Error())
}

func TestEscapedChildFailsTheCallAndIsKilled(t *testing.T) {
	if exectransport.CgroupParent() == "" {
		t.Fatal("this host cannot create cgroups for plugin calls; the counting of escaped children in a cgroup is tested with cgroup v2")
	}
	for mode, force := range countModes {
		t.Run(mode, func(t *testing.T) {
			force(t)
			for name, how := range escapes {
				t.Run(name, func(t *testing.T) {
					p, pidFile := leakyPlugin(t, how)
					resp, err := p.Admit(testContext(t), request("call-1"))
					requireLeftBehind(t, resp, err, how)
					assertDead(t, readPid(t, pidFile))
					assertNoZombieChildren(t)
				})
			}
		})
	}
}

// Where ptrace is refused (the plugin is then the init of its namespace),
// every escape is killed when the plugin exits, but cannot be counted.
func TestEscapedChildIsKilledWithoutASentinel(t *testing.T) {
	exectransport.ForceNoSentinel(t)
	for name, how := range allEscapes() {
		t.Run(name, func(t *testing.T) {
			p, pidFile := leakyPlugin(t, how)
			resp, err := p.Admit(testContext(t), request("call-1"))
			require.NoError(t, err, "escaped processes cannot be counted here, only killed")
			assert.True(t, resp.Allowed)
			assertDead(t, readPid(t, pidFile))
			assertNoZombieChildren(t)
		})
	}
}

// testContext bounds a call that should end on its own, so that a broken
// test script fails the test rather than hanging it.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// allEscapes are the escapes from the process group and from the call's
// cgroup.
func allEscapes() map[string]string {
	all := map[string]string{}
	for name, how := range escapes {
		all[name] = how
	}
	for name, how := range cgroupEscapes {
		all[name] = how
	}
	return all
}

// ownCgroup is the script line that sets $own to the call's cgroup
// directory; $CGMOUNT is where cgroup2 is mounted.
const ownCgroup = `own="$CGMOUNT$(sed -n 's/^0:://p' /proc/self/cgroup)"
`

// cgroupEscapes start a process (as leaked does: it writes its pid to
// $PIDFILE and sleeps) that moves itself out of the call's cgroup, or
// into a cgroup below it, before it writes its pid.
//
// Writing 0 to cgroup.procs moves the writer; a pid would be read in the
// writer's PID namespace. A move that fails writes "failed" to $PIDFILE.
var cgroupEscapes = map[string]string{
	// Case 7 of issue 18: it survived the call, which admitted the pod.
	"to the parent cgroup": ownCgroup + `(read -r pid rest < /proc/self/stat
{ echo 0 > "$(dirname "$own")/cgroup.procs" && echo "$pid" > "$PIDFILE"; } || echo failed > "$PIDFILE"
exec sleep 300) </dev/null >/dev/null 2>&1 &`,
	// Case 7 of issue 18: it was not counted, and the call's cgroup was
	// left behind (EBUSY).
	"to a cgroup below": ownCgroup + `(read -r pid rest < /proc/self/stat
{ mkdir "$own/hide" && echo 0 > "$own/hide/cgroup.procs" && echo "$pid" > "$PIDFILE"; } || echo failed > "$PIDFILE"
exec sleep 300) </dev/null >/dev/null 2>&1 &`,
}

// A child that moved itself out of the call's cgroup cannot leave the
// call's PID namespace: it is counted there, fails the call, and the end
// of the namespace kills it.
func TestChildThatLeavesTheCallsCgroupIsCountedAndKilled(t *testing.T) {
	if exectransport.CgroupParent() == "" {
		t.Fatal("this host cannot create cgroups for plugin calls")
	}
	p, pidFile := leakyPlugin(t, cgroupEscapes["to the parent cgroup"])
	resp, err := p.Admit(testContext(t), request("call-1"))
	assert.Nil(t, resp)
	require.EqualError(t, err, "left 1 process running after it exited; killed")
	assertDead(t, readPid(t, pidFile))
	assertNoCallCgroupsLeft(t)
}

// Where /proc lists no children, what left the call's cgroup is not
// counted, but it is killed all the same.
func TestChildThatLeavesTheCallsCgroupIsKilledWhenCountedByCgroup(t *testing.T) {
	if exectransport.CgroupParent() == "" {
		t.Fatal("this host cannot create cgroups for plugin calls")
	}
	exectransport.ForceCgroupCount(t)
	p, pidFile := leakyPlugin(t, cgroupEscapes["to the parent cgroup"])
	resp, err := p.Admit(testContext(t), request("call-1"))
	require.NoError(t, err)
	assert.True(t, resp.Allowed)
	assertDead(t, readPid(t, pidFile))
	assertNoCallCgroupsLeft(t)
}

func TestChildThatHidesInACgroupBelowIsCountedAndKilled(t *testing.T) {
	if exectransport.CgroupParent() == "" {
		t.Fatal("this host cannot create cgroups for plugin calls")
	}
	for _, mode := range []string{"namespace", "cgroup"} {
		t.Run(mode, func(t *testing.T) {
			countModes[mode](t)
			p, pidFile := leakyPlugin(t, cgroupEscapes["to a cgroup below"])
			resp, err := p.Admit(testContext(t), request("call-1"))
			assert.Nil(t, resp)
			require.EqualError(t, err, "left 1 process running after it exited; killed")
			assertDead(t, readPid(t, pidFile))
			assertNoCallCgroupsLeft(t)
		})
	}
}

// assertNoCallCgroupsLeft asserts that every cgroup of this test process's
// calls was removed.
func assertNoCallCgroupsLeft(t *testing.T) {
	t.Helper()
	entries, err := os.ReadDir(exectransport.CgroupParent())
	require.NoError(t, err)
	prefix := fmt.Sprintf("pod-admission-%d-", os.Getpid())
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			t.Errorf("the cgroup of a finished call is left: %s", filepath.Join(exectransport.CgroupParent(), e.Name()))
		}
	}
}

func TestCallCgroupsAreRemoved(t *testing.T) {
	if exectransport.CgroupParent() == "" {
		t.Fatal("this host cannot create cgroups for plugin calls")
	}
	for _, how := range []string{escapes["setsid"], cgroupEscapes["to a cgroup below"]} {
		p, _ := leakyPlugin(t, how)
		for range 3 {
			_, err := p.Admit(context.Background(), request("call-1"))
			require.Error(t, err)
		}
	}
	assertNoCallCgroupsLeft(t)
}

// Case 7 of issue 12: stderr went into the error, and from there into the
// pod's status.message.
func TestStderrIsNeverInTheError(t *testing.T) {
	dir := binDir(t)
	writeScript(t, dir, "p", "echo password=hunter2 >&2\nexit 1\n")
	p := newPlugin(t, dir, "p")
	_, err := p.Admit(context.Background(), request("call-1"))
	requireFailure(t, err, `exited with code 1`, `"password=hunter2"`)
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
	require.EqualError(t, err, fmt.Sprintf(`untrusted executable: %s: on its path, %s: owned by uid 65534, must be owned by root`,
		filepath.Join(bin, "p"), vendor))
	assert.NoFileExists(t, marker, "the program nobody put there never ran")
}

// A kubelet that died during a call left its call's cgroup, maybe with
// processes in it: the first call of the next kubelet ends them.
func TestStaleCallCgroupsAreSweptAway(t *testing.T) {
	parent := exectransport.CgroupParent()
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

	exectransport.SweepStaleCgroups(parent)
	assert.NoDirExists(t, stale)
	assert.Error(t, leftover.Wait(), "the leftover process was killed")
	assert.DirExists(t, live, "the cgroups of a live process are its own")
}

// A call's plugin runs in a PID namespace of its own, whose init, the
// sentinel, is stopped in the call's cgroup and never runs.
func TestCallRunsInItsOwnPIDNamespaceUnderAStoppedInit(t *testing.T) {
	parent := exectransport.CgroupParent()
	if parent == "" {
		t.Fatal("this host cannot create cgroups for plugin calls")
	}
	p, pidFile := scriptPlugin(t, `read -r pid rest < /proc/self/stat; echo "$pid" > "$PIDFILE"; exec sleep 300`)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.Admit(ctx, request("call-1"))
		done <- err
	}()
	require.Eventually(t, func() bool { data, _ := os.ReadFile(pidFile); return len(data) > 0 }, 10*time.Second, 10*time.Millisecond)
	plugin := readPid(t, pidFile)

	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", plugin))
	require.NoError(t, err)
	assert.Regexp(t, fmt.Sprintf(`(?m)^NSpid:\t%d\t([2-9]|[1-9][0-9]+)$`, plugin), string(status), "the plugin is in a namespace of its own, not its init")

	self, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", plugin))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^0::(.*)$`).FindStringSubmatch(string(self))
	require.NotNil(t, m, "cgroups of the plugin: %s", self)
	callCgroup := filepath.Join(exectransport.CgroupMount(), m[1])
	assert.Equal(t, exectransport.CgroupParent(), filepath.Dir(callCgroup), "the plugin is in a cgroup of the call")
	procs, err := os.ReadFile(filepath.Join(callCgroup, "cgroup.procs"))
	require.NoError(t, err)
	assert.Equal(t, []string{strconv.Itoa(plugin)}, strings.Fields(string(procs)), "the call's cgroup holds the plugin only")

	// The namespace's init is the plugin's parent there, stopped, and in
	// this process's cgroup.
	init := nsInit(t, plugin)
	state, ok := procState(init)
	require.True(t, ok)
	assert.Equal(t, "t", state, "the init is stopped, traced")
	initStatus, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", init))
	require.NoError(t, err)
	assert.Regexp(t, fmt.Sprintf(`(?m)^NSpid:\t%d\t1$`, init), string(initStatus))
	initCgroup, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", init))
	require.NoError(t, err)
	ownCgroup, err := os.ReadFile("/proc/self/cgroup")
	require.NoError(t, err)
	assert.Equal(t, string(ownCgroup), string(initCgroup), "the init is not in the call's cgroup")

	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	assertDead(t, plugin)
	assertGone(t, init)
	assertNoCallCgroupsLeft(t)
}

// nsInit returns the host pid of the init of pid's PID namespace: the
// child of this process, other than pid, in pid's namespace.
func nsInit(t *testing.T, pid int) int {
	t.Helper()
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
	require.NoError(t, err)
	tasks, err := os.ReadDir("/proc/self/task")
	require.NoError(t, err)
	var children []string
	for _, task := range tasks {
		list, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%s/children", task.Name()))
		require.NoError(t, err)
		children = append(children, strings.Fields(string(list))...)
	}
	for _, child := range children {
		c, _ := strconv.Atoi(child)
		if c == pid {
			continue
		}
		if theirs, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", c)); err == nil && theirs == ns {
			return c
		}
	}
	t.Fatalf("no child of this process is the init of %s", ns)
	return 0
}

// A child that exited before the plugin, without being reaped, is a zombie
// of the namespace's init, which never reaps: it runs nothing and is not
// left running.
func TestExitedChildIsNotCountedAsLeftRunning(t *testing.T) {
	p, pidFile := scriptPlugin(t, `(sh -c 'read -r pid rest < /proc/self/stat; echo $pid > "$PIDFILE"' &)
`+waitForPidFile+`pid=$(cat "$PIDFILE")
while [ -e /proc/$pid ] && [ "$(sed 's/.*) //' /proc/$pid/stat | cut -c1)" != Z ]; do sleep 0.01; done
`+answerAllowed)
	resp, err := p.Admit(testContext(t), request("call-1"))
	require.NoError(t, err)
	assert.True(t, resp.Allowed)
	assertGone(t, readPid(t, pidFile))
	assertNoZombieChildren(t)
}
