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

package grpctransport_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/grpctransport"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust/trusttest"
	"github.com/podadmission/podadmission/pkg/plugin"
	"github.com/podadmission/podadmission/test/testplugin/build"
)

// startNobodyPlugin runs the test plugin as a GRPC daemon as the user
// nobody, answering "allowed", on socket.
func startNobodyPlugin(t *testing.T, socket string) {
	t.Helper()
	binDir := trusttest.Dir(t)
	bin, err := build.Install(binDir, "impostor")
	require.NoError(t, err)
	daemon := trusttest.AsNobody(exec.Command(bin, "--serve=unix://"+socket, "--mode=allow"))
	daemon.Stderr = os.Stderr
	require.NoError(t, daemon.Start())
	t.Cleanup(func() {
		_ = daemon.Process.Kill()
		_ = daemon.Wait()
	})
	waitServing(t, socket)
}

// startPluginInNobodysDir runs nobody's plugin in a directory of nobody's,
// as a plugin daemon that runs as its own user would, and returns the
// directory and the socket.
func startPluginInNobodysDir(t *testing.T) (string, string) {
	t.Helper()
	dir := filepath.Join(trusttest.Dir(t), "run")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, trusttest.ChownToNobody(dir))
	socket := filepath.Join(dir, "p.sock")
	startNobodyPlugin(t, socket)
	return dir, socket
}

func newPluginWithServerUID(t *testing.T, socket string, serverUID *int64) *grpctransport.Plugin {
	t.Helper()
	p, err := grpctransport.New(&configv1alpha1.PluginConfig{
		Name:      "p",
		Type:      configv1alpha1.GRPCPluginType,
		Endpoint:  socket,
		ServerUID: serverUID,
	})
	require.NoError(t, err)
	p.Start(t.Context())
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	return p
}

// admitEventually calls the plugin until the error is wantErr (the
// connection is made in the background, so the first calls may fail for
// other reasons).
func admitEventually(t *testing.T, p *grpctransport.Plugin, wantErr string) {
	t.Helper()
	var last error
	require.Eventually(t, func() bool {
		resp, err := p.Admit(context.Background(), request("call-1"))
		last = err
		if err == nil {
			require.Fail(t, "an untrusted socket answered", "allowed=%v", resp.Allowed)
		}
		return err.Error() == wantErr
	}, 10*time.Second, 50*time.Millisecond, "last error: %v", last)
}

// Case 3 of issue 12: a socket in a directory every user can write can be
// bound by any of them once the real plugin stops, and its answers were
// trusted.
func TestSocketInAWorldWritableDirectoryIsNeverTrusted(t *testing.T) {
	shared := filepath.Join(trusttest.Dir(t), "shared")
	require.NoError(t, os.Mkdir(shared, 0o755))
	require.NoError(t, os.Chmod(shared, 0o777|os.ModeSticky))
	socket := filepath.Join(shared, "p.sock")
	want := fmt.Sprintf(`untrusted socket %s: %s: mode 01777 is group or world writable`, socket, shared)

	// The real plugin, as root: still not trusted, another user could have
	// bound the socket.
	real := startSDKServer(t, socket, func(context.Context, *plugin.Request) (*plugin.Response, error) { return plugin.Allow(), nil })
	p := newPlugin(t, socket)
	admitEventually(t, p, want)

	// It stops; nobody binds the name.
	real.shutdown()
	startNobodyPlugin(t, socket)
	admitEventually(t, p, want)
}

func TestSocketServedByAnotherUserIsRefused(t *testing.T) {
	dir, socket := startPluginInNobodysDir(t)
	// The directory is root's again: only the peer credentials tell.
	require.NoError(t, os.Chown(dir, 0, 0))

	p := newPlugin(t, socket)
	admitEventually(t, p, fmt.Sprintf(`untrusted socket %s: served by uid 65534, want uid 0 (the plugin's serverUID)`, socket))
}

func TestServerUIDTrustsTheNamedUser(t *testing.T) {
	_, socket := startPluginInNobodysDir(t)

	p := newPluginWithServerUID(t, socket, ptr.To[int64](trusttest.NobodyUID))
	require.Eventually(t, func() bool {
		resp, err := p.Admit(context.Background(), request("call-1"))
		return err == nil && resp.Allowed
	}, 10*time.Second, 50*time.Millisecond, "a plugin running as its configured serverUID is trusted")

	// A root server is not the configured user either.
	rootDir := trusttest.Dir(t)
	rootSocket := filepath.Join(rootDir, "root.sock")
	startSDKServer(t, rootSocket, func(context.Context, *plugin.Request) (*plugin.Response, error) { return plugin.Allow(), nil })
	p = newPluginWithServerUID(t, rootSocket, ptr.To[int64](trusttest.NobodyUID))
	admitEventually(t, p, fmt.Sprintf(`untrusted socket %s: served by uid 0, want uid 65534 (the plugin's serverUID)`, rootSocket))
}

// A connection checked once stays in use; one made later is checked again.
func TestEveryConnectionIsChecked(t *testing.T) {
	dir := filepath.Join(trusttest.Dir(t), "run")
	require.NoError(t, os.Mkdir(dir, 0o755))
	socket := filepath.Join(dir, "p.sock")
	server := startSDKServer(t, socket, func(context.Context, *plugin.Request) (*plugin.Response, error) { return plugin.Allow(), nil })
	p := newPlugin(t, socket)
	require.Eventually(t, func() bool { _, err := p.Admit(context.Background(), request("call-1")); return err == nil }, 10*time.Second, 20*time.Millisecond)

	server.shutdown()
	require.NoError(t, os.Chmod(dir, 0o777))
	listener, err := net.Listen("unix", socket)
	require.NoError(t, err)
	t.Cleanup(func() { listener.Close() })
	admitEventually(t, p, fmt.Sprintf(`untrusted socket %s: %s: mode 0777 is group or world writable`, socket, dir))
}
