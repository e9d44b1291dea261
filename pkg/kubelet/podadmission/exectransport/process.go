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

package exectransport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust"
)

const (
	// maxStdout caps a plugin's response.
	maxStdout = protocol.MaxResponseSize
	// maxStderr is how much of the end of a plugin's stderr is kept for the
	// log.
	maxStderr = 4 << 10
	// pipeWaitDelay bounds how long a call waits for stdout and stderr to
	// close once every process of the call is gone; nothing should hold
	// them then.
	pipeWaitDelay = time.Second
)

// processOutcome is what one plugin process did.
type processOutcome struct {
	stdout *cappedBuffer
	stderr *tailBuffer
	// stopped is why the call stopped the process before it exited on its
	// own: the context's error, or nil.
	stopped error
	// leftBehind counts the processes the plugin left running when it
	// exited on its own (they were killed); 0 when it left none or they
	// could not be counted.
	leftBehind int
	// waitErr is what exec.Cmd.Wait returned.
	waitErr error
	// killErr says why the processes of the call could not all be killed.
	killErr error
}

// runContained runs exe, the checked executable of one call of plugin, with
// args and env, in a container of its own (contain.go), feeding it stdin,
// until it exits, ctx is done, or its stdout exceeds maxStdout. In every
// case it then kills every process left in the container, so nothing the
// plugin started outlives the call, and reaps the plugin's process. It
// returns an error only when the process could not be started.
func runContained(ctx context.Context, plugin string, exe *trust.Executable, args, env []string, stdin []byte) (*processOutcome, error) {
	run, err := newExecution(exe)
	if err != nil {
		return nil, err
	}
	defer run.close()
	box, err := newContainer(plugin)
	if err != nil {
		return nil, err
	}
	defer box.release()
	out := &processOutcome{
		stdout: newCappedBuffer(maxStdout),
		stderr: &tailBuffer{max: maxStderr},
	}
	// No shell: the executable is run directly, with the configured args;
	// argv[0] is its configured path, as if it were executed by it.
	cmd := &exec.Cmd{
		Path:       run.path,
		Args:       append([]string{exe.Path}, args...),
		Env:        env,
		Dir:        "/",
		Stdin:      bytes.NewReader(stdin),
		Stdout:     out.stdout,
		Stderr:     out.stderr,
		ExtraFiles: run.extraFiles,
		WaitDelay:  pipeWaitDelay,
	}
	if err := box.start(cmd, run); err != nil {
		return nil, err
	}
	run.close()
	pid := cmd.Process.Pid

	exited := make(chan struct{})
	go func() {
		defer close(exited)
		waitExitedWithoutReaping(pid)
	}()

	select {
	case <-exited:
		// The plugin exited on its own; whatever is left in its container
		// it left behind.
		out.leftBehind = max(box.others(), 0)
	case <-ctx.Done():
		out.stopped = ctx.Err()
	case <-out.stdout.exceeded:
	}
	out.killErr = box.kill()
	<-exited
	out.waitErr = cmd.Wait()
	if err := box.reap(); err != nil && out.killErr == nil {
		out.killErr = err
	}
	return out, nil
}

// startError is why process (the call's init or the plugin) could not be
// started from run, without the /proc/self/fd path it was executed by. A
// permission error says which process and what the checked file's
// descriptor was then.
func startError(process string, run *execution, err error) error {
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) && pathErr.Path == run.path {
		err = pathErr.Err
	}
	if errno, ok := err.(syscall.Errno); ok && errno == syscall.EACCES {
		return fmt.Errorf("%w (executing %s; %s)", err, process, run.describeChecked())
	}
	return err
}

// waitExitedWithoutReaping blocks until process pid has exited, leaving it
// a zombie for exec.Cmd.Wait to reap.
func waitExitedWithoutReaping(pid int) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}
