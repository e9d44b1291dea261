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

package plugin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runExecHelperEnv makes this test binary an Exec plugin written with
// RunExec whose handler waits for its context to end.
const runExecHelperEnv = "PODADMISSION_TEST_RUNEXEC_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(runExecHelperEnv) != "" {
		RunExec(func(ctx context.Context, _ *Request) (*Response, error) {
			fmt.Fprintln(os.Stderr, "handling")
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("stopped: %w", ctx.Err())
			case <-time.After(time.Minute):
				return Allow(), nil
			}
		})
	}
	os.Exit(m.Run())
}

// TestRunExecCancelsTheHandlerOnSIGTERM: a handler that is still running
// when SIGTERM comes sees its context canceled, and the plugin exits 1 with
// the handler's error, rather than being killed by the signal.
func TestRunExecCancelsTheHandlerOnSIGTERM(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), runExecHelperEnv+"=1")
	cmd.Stdin = strings.NewReader(testRequestJSON)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(stderr)
	require.True(t, lines.Scan(), "the plugin's handler runs")
	require.Equal(t, "handling", lines.Text())
	// Well past signalWatchDelay after the handler started.
	time.Sleep(signalWatchDelay + 500*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	var rest strings.Builder
	for lines.Scan() {
		rest.WriteString(lines.Text() + "\n")
	}
	err = cmd.Wait()
	var exitErr *exec.ExitError
	require.True(t, errors.As(err, &exitErr), "the plugin exits with an error: %v", err)
	assert.Equal(t, 1, exitErr.ExitCode(), "exit code (-1: killed by the signal); stderr: %s", rest.String())
	assert.Contains(t, rest.String(), "stopped: context canceled")
}
