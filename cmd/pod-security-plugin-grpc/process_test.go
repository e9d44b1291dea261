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

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	apptesting "github.com/podadmission/podadmission/cmd/pod-security-plugin/app/testing"
	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/grpctransport"
)

// These tests run the daemon as a process: this test binary, made the
// daemon by daemonHelperEnv.

// daemonHelperEnv makes this test binary run main with its arguments.
const daemonHelperEnv = "PODADMISSION_TEST_POD_SECURITY_GRPC_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(daemonHelperEnv) != "" {
		main()
	}
	os.Exit(m.Run())
}

// process is the daemon run as a process.
type process struct {
	cmd *exec.Cmd
	// stderr is complete once ended has delivered.
	stderr bytes.Buffer
	// ended delivers cmd.Wait's result.
	ended chan error
}

// startProcess starts the daemon with args, and kills it when the test
// ends if it is still running.
func startProcess(t *testing.T, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(os.Args[0], args...), ended: make(chan error, 1)}
	p.cmd.Env = append(os.Environ(), daemonHelperEnv+"=1")
	p.cmd.Stderr = &p.stderr
	require.NoError(t, p.cmd.Start())
	go func() { p.ended <- p.cmd.Wait() }()
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	return p
}

// exitCode waits for the daemon to end and returns its exit code.
func (p *process) exitCode(t *testing.T) int {
	t.Helper()
	select {
	case err := <-p.ended:
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return exitErr.ExitCode()
		}
		require.NoError(t, err)
		return 0
	case <-time.After(20 * time.Second):
		t.Fatal("the daemon did not end within 20s")
		return -1
	}
}

// TestFlagErrorsEndTheDaemon: a daemon with a bad command line ends at
// once, exit code 1, saying what is wrong on stderr.
func TestFlagErrorsEndTheDaemon(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no socket":    {[]string{"--level=restricted"}, `err="--socket: required: the unix socket to serve the kubelet on, such as /run/podadmission/pod-security.sock"`},
		"bad level":    {[]string{"--socket=/run/ps.sock", "--level=strict"}, `err="--level \"strict\": must be baseline or restricted"`},
		"stray arg":    {[]string{"--socket=/run/ps.sock", "baseline"}, `Error: unknown command "baseline" for "pod-security-plugin-grpc"`},
		"unknown flag": {[]string{"--socket=/run/ps.sock", "--levle=baseline"}, `Error: unknown flag: --levle`},
	} {
		t.Run(name, func(t *testing.T) {
			p := startProcess(t, tc.args...)
			assert.Equal(t, 1, p.exitCode(t))
			assert.Contains(t, p.stderr.String(), tc.want)
		})
	}
}

// TestSignalsEndTheDaemonCleanly: SIGTERM (systemd's stop) and SIGINT end a
// daemon that a kubelet is connected to, with exit code 0 and its socket
// removed. The socket's directory did not exist: the daemon created it.
func TestSignalsEndTheDaemonCleanly(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			socket := filepath.Join(t.TempDir(), "run", "pod-security.sock")
			p := startProcess(t, "--socket=unix://"+socket)
			waitForSocket(t, socket, p.ended)

			kubelet, err := grpctransport.New(&configv1alpha1.PluginConfig{
				Name: "pod-security", Type: configv1alpha1.GRPCPluginType, Endpoint: "unix://" + socket,
			})
			require.NoError(t, err)
			kubelet.Start(t.Context())
			defer kubelet.Close()
			resp, err := kubelet.Admit(t.Context(), apptesting.KubeletRequest(apptesting.HostNetworkPod("team-a"), false))
			require.NoError(t, err)
			assert.Equal(t, `violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`, resp.Message)

			require.NoError(t, p.cmd.Process.Signal(sig))
			// -1: killed by the signal, rather than ended by it.
			assert.Equal(t, 0, p.exitCode(t), "stderr:\n%s", &p.stderr)
			assert.Contains(t, p.stderr.String(), "Stopped serving the kubelet")
			assert.NoFileExists(t, socket)
		})
	}
}
