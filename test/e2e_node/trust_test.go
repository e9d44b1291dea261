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

package e2enode

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

// Issue 12 against the real kubelet: an impostor socket and a
// configuration file caught half written never open the gate.

const (
	pluginImpostor    = "trust-impostor"
	pluginInPlaceHead = "trust-inplace-head"
	pluginInPlaceTail = "trust-inplace-tail"
	reasonInPlaceTail = "E2EInPlaceTail"
	// eventConfigReloaded and eventConfigChangedInPlace are the node event
	// reasons of pkg/kubelet/podadmission.
	eventConfigReloaded       = "PodAdmissionConfigReloaded"
	eventConfigChangedInPlace = "PodAdmissionConfigChangedInPlace"
	// nobody is the unprivileged user the attacker runs as.
	nobody = 65534
)

// holdFor is how long a held pod is watched not to start: longer than the
// kubelet's reload debounce and settle window and its first back-offs.
const holdFor = 10 * time.Second

// TestImpostorSocketIsNeverTrusted: after the real GRPC plugin is gone, a
// user who can write the socket's directory binds the socket and answers
// "allowed" to everything. The kubelet refuses to talk to it: because the
// directory is writable by others, and, once the directory is root's
// again, because the server runs as nobody (SO_PEERCRED).
func TestImpostorSocketIsNeverTrusted(t *testing.T) {
	usePluginKubelet(t, pluginKubelet)
	t.Parallel()
	c := suite.Cluster
	ctx := testContext(t, 5*time.Minute)
	ns := newNamespace(t, ctx)

	dir := c.Layout.SocketPath("trust-shared")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.Chmod(dir, 0o777|os.ModeSticky))
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	socket := filepath.Join(dir, "gate.sock")
	startNobodyGRPCPlugin(t, c, socket)

	file := "80-trust-impostor.yaml"
	writePluginConfigAndWait(t, ctx, file, configv1alpha1.PluginConfig{
		Name:     pluginImpostor,
		Type:     configv1alpha1.GRPCPluginType,
		Endpoint: "unix://" + socket,
		Timeout:  &metav1.Duration{Duration: 2 * time.Second},
		Match:    framework.MatchPluginLabel(pluginImpostor),
	})

	pod, err := c.Client.CoreV1().Pods(ns).Create(ctx, c.NewPod(ns, "impostor", framework.PluginLabels(pluginImpostor)), metav1.CreateOptions{})
	require.NoError(t, err)
	held := waitBlocked(t, ctx, ns, pod.Name, reasonPluginFailed)
	assertSoftBlocked(t, ctx, held, pluginImpostor, reasonPluginFailed)
	assert.Contains(t, held.Status.Message, "untrusted socket "+socket+": "+dir+": mode 01777 is group or world writable")
	t.Logf("held: %s", held.Status.Message)

	// The directory is root's and closed again; the impostor still serves.
	require.NoError(t, os.Chmod(dir, 0o755))
	held, _, err = framework.WaitForPod(ctx, c.Client, ns, pod.Name, 3*time.Minute, func(p *corev1.Pod) bool {
		return strings.Contains(p.Status.Message, "untrusted socket "+socket+": served by uid 65534, want uid 0")
	})
	require.NoError(t, err, "the peer credentials give the impostor away")
	assert.Equal(t, corev1.PodPending, held.Status.Phase)
	t.Logf("held: %s", held.Status.Message)
	assertNeverRunning(t, ctx, ns, pod.Name, holdFor)
}

// TestHalfWrittenConfigurationNeverAdmits: a configuration file rewritten
// in place is caught half written by reloads, as a careless operator's
// editor or script leaves it: closed after the first plugin, and then open
// for writing. Neither state is applied; the held pod stays held and a
// new pod is held too.
func TestHalfWrittenConfigurationNeverAdmits(t *testing.T) {
	usePluginKubelet(t, pluginKubelet)
	t.Parallel()
	c := suite.Cluster
	ctx := testContext(t, 5*time.Minute)
	ns := newNamespace(t, ctx)

	file := "81-trust-inplace.yaml"
	path := filepath.Join(c.Kubelet.PluginConfigDir, file)
	for _, name := range []string{pluginInPlaceHead, pluginInPlaceTail} {
		require.NoError(t, c.InstallExecPlugin(name))
		t.Cleanup(func() { assert.NoError(t, c.RemovePluginBinary(name)) })
	}
	writePluginConfigAndWait(t, ctx, file,
		execPlugin(pluginInPlaceHead, "--mode=deny", "--reason=E2EInPlaceHead"),
		execPlugin(pluginInPlaceTail, "--mode=deny", "--reason="+reasonInPlaceTail))
	complete, err := os.ReadFile(path)
	require.NoError(t, err)
	// The file up to the second plugin's entry: the first plugin, whole.
	first := bytes.Index(complete, []byte("\n- "))
	require.Positive(t, first, "plugins in:\n%s", complete)
	second := bytes.Index(complete[first+1:], []byte("\n- "))
	require.Positive(t, second, "two plugins in:\n%s", complete)
	head := complete[:first+1+second+1]

	newTailPod := func(name string) *corev1.Pod {
		pod, err := c.Client.CoreV1().Pods(ns).Create(ctx, c.NewPod(ns, name, framework.PluginLabels(pluginInPlaceTail)), metav1.CreateOptions{})
		require.NoError(t, err)
		return waitBlocked(t, ctx, ns, pod.Name, reasonInPlaceTail)
	}
	held := newTailPod("held")

	// Closed half written: a reload reads a valid file without the tail
	// plugin, and refuses it.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	_, err = f.Write(head)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	waitNodeEvent(t, ctx, eventConfigChangedInPlace, path+": changed in place in a way that removes or changes its plugins ["+pluginInPlaceTail+"]")
	newTailPod("after-close")
	assertNeverRunning(t, ctx, ns, held.Name, holdFor)

	// Open for writing, half written: not read at all until it is closed.
	f, err = os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	_, err = f.Write(head)
	require.NoError(t, err)
	assertNeverRunning(t, ctx, ns, held.Name, holdFor)
	newTailPod("while-open")
	_, err = f.Write(complete[len(head):])
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assertNeverRunning(t, ctx, ns, held.Name, holdFor)
	current, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(complete), string(current))
}

// startNobodyGRPCPlugin runs the test plugin as a GRPC daemon as the user
// nobody on socket, answering "allowed" to every pod.
func startNobodyGRPCPlugin(t *testing.T, c *framework.Cluster, socket string) {
	t.Helper()
	// A copy nobody can run: the build output may sit in a directory only
	// root can enter.
	binDir := c.Layout.StatePath("trust-impostor")
	require.NoError(t, os.MkdirAll(binDir, 0o755))
	binary := filepath.Join(binDir, "testplugin")
	data, err := os.ReadFile(c.Binaries.TestPlugin)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(binary, data, 0o755))
	log, err := os.Create(c.Layout.LogPath("plugin-" + pluginImpostor))
	require.NoError(t, err)
	daemon := exec.Command(binary, "--serve=unix://"+socket, "--mode=allow")
	daemon.Stdout, daemon.Stderr = log, log
	daemon.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}, Setpgid: true}
	require.NoError(t, daemon.Start())
	t.Cleanup(func() {
		_ = syscall.Kill(-daemon.Process.Pid, syscall.SIGKILL)
		_ = daemon.Wait()
		_ = log.Close()
		_ = os.RemoveAll(binDir)
	})
	require.Eventually(t, func() bool {
		info, err := os.Stat(socket)
		return err == nil && info.Sys().(*syscall.Stat_t).Uid == nobody
	}, 30*time.Second, 50*time.Millisecond, "nobody's plugin binds %s", socket)
}

// writePluginConfigAndWait writes a configuration file and waits until the
// kubelet uses it (a reload event names its plugins); it removes the file
// when the test ends.
func writePluginConfigAndWait(t *testing.T, ctx context.Context, file string, plugins ...configv1alpha1.PluginConfig) {
	t.Helper()
	c := suite.Cluster
	require.NoError(t, c.WritePluginConfig(file, plugins...))
	t.Cleanup(func() { assert.NoError(t, c.RemovePluginConfig(file)) })
	for _, p := range plugins {
		waitNodeEvent(t, ctx, eventConfigReloaded, p.Name)
	}
}

// waitNodeEvent waits for an event on the node with reason whose message
// contains text.
func waitNodeEvent(t *testing.T, ctx context.Context, reason, text string) {
	t.Helper()
	var last string
	require.Eventually(t, func() bool {
		events, err := suite.Cluster.Client.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Node,reason=" + reason})
		if err != nil {
			return false
		}
		for _, e := range events.Items {
			last = e.Message
			if strings.Contains(e.Message, text) {
				return true
			}
		}
		return false
	}, time.Minute, 200*time.Millisecond, "no node event %s saying %q; last: %q", reason, text, last)
}

// assertNeverRunning checks for a while that the pod does not start.
func assertNeverRunning(t *testing.T, ctx context.Context, namespace, name string, within time.Duration) {
	t.Helper()
	pod, _, err := framework.WaitForPod(ctx, suite.Cluster.Client, namespace, name, within, func(p *corev1.Pod) bool {
		return p.Status.Phase != corev1.PodPending
	})
	if err == nil {
		t.Fatalf("pod %s/%s left Pending: %s", namespace, name, framework.DescribePod(pod))
	}
}
