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

package grpctransport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust"
)

// A socket path is only a name: after the plugin daemon stops, any user who
// can create files in the socket's directory can bind a socket of their own
// there and answer the kubelet. So every connection is checked before gRPC
// uses it: the socket's directory and every directory above it must be
// trusted (root's, not writable by group or others; the socket's own
// directory may belong to serverUID), and the process serving the socket
// must run as serverUID (root by default), by the peer credentials the
// kernel recorded when it listened (SO_PEERCRED).

// dialChecked is the gRPC dialer: it connects to the plugin's socket and
// returns the connection only if it passes the checks. A failed check is
// kept for the error of the calls that fail meanwhile.
func (p *Plugin) dialChecked(ctx context.Context, _ string) (net.Conn, error) {
	conn, err := p.dial(ctx)
	var untrusted *untrustedSocketError
	if errors.As(err, &untrusted) {
		p.untrusted.Store(untrusted)
	} else {
		p.untrusted.Store(nil)
	}
	return conn, err
}

func (p *Plugin) dial(ctx context.Context) (net.Conn, error) {
	if err := trust.CheckSocketDir(filepath.Dir(p.socket), p.serverUID); err != nil {
		return nil, &untrustedSocketError{fmt.Sprintf("untrusted socket %s: %v", p.socket, err)}
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", p.socket)
	if err != nil {
		return nil, err
	}
	uid, err := peerUID(conn)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("cannot read the peer credentials of socket %s: %w", p.socket, err)
	}
	if uid != p.serverUID {
		conn.Close()
		return nil, &untrustedSocketError{fmt.Sprintf("untrusted socket %s: served by uid %d, want uid %d (the plugin's serverUID)", p.socket, uid, p.serverUID)}
	}
	return conn, nil
}

// peerUID returns the uid of the process that serves the other end of conn.
func peerUID(conn net.Conn) (uint32, error) {
	unixConn, ok := conn.(*net.UnixConn)
	if !ok {
		return 0, fmt.Errorf("%T is not a unix socket connection", conn)
	}
	raw, err := unixConn.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if credErr != nil {
		return 0, credErr
	}
	return cred.Uid, nil
}

// untrustedSocketError is a socket the kubelet will not talk to.
type untrustedSocketError struct{ msg string }

func (e *untrustedSocketError) Error() string { return e.msg }
