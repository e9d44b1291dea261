package exec

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const (
	// maxStdout caps a plugin's response. A PodAdmissionResponse is a few
	// hundred bytes; a plugin that writes more is broken.
	maxStdout = 1 << 20
	// maxStderr is how much of the end of a plugin's stderr is kept for the
	// error message and the log.
	maxStderr = 4 << 10
	// pipeWaitDelay bounds how long a call waits for stdout and stderr to
	// close after the process group was killed. Only a process that left the
	// group (setsid) can hold them open longer.
	pipeWaitDelay = time.Second
)

// processOutcome is what one plugin process did.
type processOutcome struct {
	stdout *cappedBuffer
	stderr *tailBuffer
	// stopped is why the call stopped the process before it exited on its
	// own: the context's error, or nil.
	stopped error
	// waitErr is what exec.Cmd.Wait returned.
	waitErr error
}

// runInProcessGroup runs cmd in a process group of its own, feeding it stdin,
// until it exits, ctx is done, or its stdout exceeds maxStdout. In every case
// it then kills the whole group, so nothing the plugin started outlives the
// call, and reaps the plugin's process. It returns an error only when the
// process could not be started.
func runInProcessGroup(ctx context.Context, cmd *exec.Cmd, stdin []byte) (*processOutcome, error) {
	out := &processOutcome{
		stdout: newCappedBuffer(maxStdout),
		stderr: &tailBuffer{max: maxStderr},
	}
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout = out.stdout
	cmd.Stderr = out.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = pipeWaitDelay
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	pgid := cmd.Process.Pid

	exited := make(chan struct{})
	go func() {
		defer close(exited)
		waitExitedWithoutReaping(pgid)
	}()

	select {
	case <-exited:
	case <-ctx.Done():
		out.stopped = ctx.Err()
	case <-out.stdout.exceeded:
	}
	// Kill the group while its leader is not reaped yet: until then its
	// pid, which is the group's id, cannot be reused, so the signal can
	// only reach this call's processes.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-exited
	out.waitErr = cmd.Wait()
	return out, nil
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
