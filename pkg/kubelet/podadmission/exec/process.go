package exec

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"
)

const (
	// maxStdout caps a plugin's response. A PodAdmissionResponse is a few
	// hundred bytes; a plugin that writes more is broken.
	maxStdout = 1 << 20
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

// runContained runs cmd, the process of one call of plugin, in a container
// of its own (contain.go), feeding it stdin, until it exits, ctx is done,
// or its stdout exceeds maxStdout. In every case it then kills every
// process left in the container, so nothing the plugin started outlives the
// call, and reaps the plugin's process. It returns an error only when the
// process could not be started.
func runContained(ctx context.Context, plugin string, cmd *exec.Cmd, stdin []byte) (*processOutcome, error) {
	box, err := newContainment(plugin)
	if err != nil {
		return nil, err
	}
	defer box.release()
	out := &processOutcome{
		stdout: newCappedBuffer(maxStdout),
		stderr: &tailBuffer{max: maxStderr},
	}
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout = out.stdout
	cmd.Stderr = out.stderr
	cmd.WaitDelay = pipeWaitDelay
	box.prepare(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	pid := cmd.Process.Pid
	box.started(pid)

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
