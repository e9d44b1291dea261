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
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
)

// Every call runs in a PID namespace of its own. No process can leave its
// PID namespace, whatever it does to its process group, its parent or its
// cgroup, and when the namespace's init dies the kernel kills every other
// process in it. The init is not the plugin: if it were, the kernel would
// kill what the plugin leaves behind the moment it exits, before the call
// can count it (a plugin that leaves processes behind fails its call). It
// is a sentinel, a process that never runs a single instruction:
//
//   - it is started with PTRACE_TRACEME and CLONE_NEWPID, so the exec that
//     starts it stops it, traced by this process, before the new program
//     runs (ptrace(2): "all successful calls to execve(2) by the traced
//     process will cause it to be sent a SIGTRAP signal, giving the parent
//     a chance to gain control before the new program begins execution");
//     this process never resumes it;
//   - it has PR_SET_PDEATHSIG SIGKILL, so it dies, and with it the whole
//     namespace, if this process (the thread that started it) does;
//   - the plugin is then started in its namespace (setns on a locked
//     thread), as an ordinary process, our child.
//
// Killing the sentinel ends the call: the kernel kills the plugin and
// everything it started, even a process that moved itself into another
// cgroup. Where ptrace is refused (Yama ptrace_scope 3, an LSM), the
// plugin itself is the namespace's init: nothing it starts outlives it,
// but what it leaves behind is killed at its exit without being counted.

// sentinel is the init of a call's PID namespace.
type sentinel struct {
	pid int
	// ns is the namespace, open, to start the plugin in.
	ns     *os.File
	reaped bool
	// gone is closed once the sentinel is reaped, by the goroutine the
	// first reap starts (waitGone); waitErr is why it could not be.
	gone    chan struct{}
	waitErr error
}

var (
	sentinelsProbed      sync.Once
	sentinelsUnavailable bool
	sentinelsMu          sync.RWMutex
)

// useSentinels says whether calls run under a sentinel. The first call
// finds out: a sentinel of this process's own executable is started (it
// stops before it runs) and killed.
func useSentinels() bool {
	sentinelsProbed.Do(func() {
		s, err := startSentinel("/proc/self/exe", nil)
		if err == nil {
			err = s.reap()
		}
		if err != nil {
			sentinelsMu.Lock()
			sentinelsUnavailable = true
			sentinelsMu.Unlock()
			klog.Background().Info("Cannot start a traced init for the PID namespaces of Exec pod admission plugin calls (is ptrace refused?); each plugin is the init of its call's PID namespace instead: processes it leaves behind are killed when it exits, but not reported",
				"err", err)
		}
	})
	sentinelsMu.RLock()
	defer sentinelsMu.RUnlock()
	return !sentinelsUnavailable
}

// startSentinel starts the init of a new PID namespace by executing path
// with files, which stops before it runs. It stays in this process's
// cgroup.
func startSentinel(path string, files []uintptr) (*sentinel, error) {
	null, err := devNull()
	if err != nil {
		return nil, err
	}
	sys := &syscall.SysProcAttr{
		Ptrace:     true,
		Cloneflags: syscall.CLONE_NEWPID,
		Pdeathsig:  syscall.SIGKILL,
	}
	stdio := []uintptr{null.Fd(), null.Fd(), null.Fd()}
	pid, err := syscall.ForkExec(path, []string{"pod-admission-call-init"}, &syscall.ProcAttr{
		Dir:   "/",
		Env:   []string{},
		Files: append(stdio, files...),
		Sys:   sys,
	})
	if err != nil {
		return nil, err
	}
	s := &sentinel{pid: pid}
	if s.ns, err = os.Open(fmt.Sprintf("/proc/%d/ns/pid", pid)); err != nil {
		s.release()
		return nil, fmt.Errorf("cannot open the call's PID namespace: %w", err)
	}
	return s, nil
}

// devNull is the sentinel's stdin, stdout and stderr, opened once.
var devNull = sync.OnceValues(func() (*os.File, error) { return os.Open(os.DevNull) })

// hostPIDNamespace is this process's own PID namespace, open, to return a
// thread to once it started a plugin in a call's namespace.
var hostPIDNamespace = sync.OnceValues(func() (*os.File, error) {
	return os.Open("/proc/self/ns/pid")
})

// start starts cmd in the sentinel's namespace: the thread that forks it
// enters the namespace for its children (setns CLONE_NEWPID) and leaves it
// again. A thread that cannot leave it ends with the goroutine, so no
// later child of this process is born in a call's namespace.
func (s *sentinel) start(cmd *exec.Cmd) error {
	host, err := hostPIDNamespace()
	if err != nil {
		return fmt.Errorf("cannot open this process's PID namespace: %w", err)
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := unix.Setns(int(s.ns.Fd()), unix.CLONE_NEWPID); err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("cannot enter the call's PID namespace: %w", err)
			return
		}
		err := cmd.Start()
		if backErr := unix.Setns(int(host.Fd()), unix.CLONE_NEWPID); backErr != nil {
			klog.Background().Error(backErr, "Cannot return a thread from the PID namespace of an Exec pod admission plugin call; ending the thread")
			done <- err
			return // locked: the thread ends with the goroutine
		}
		runtime.UnlockOSThread()
		done <- err
	}()
	return <-done
}

// kill kills the sentinel, and so every process in its namespace.
func (s *sentinel) kill() {
	if !s.reaped {
		_ = syscall.Kill(s.pid, syscall.SIGKILL)
	}
}

// reap kills the sentinel if it is not dead yet and waits until it is
// reaped: the kernel reports the namespace's init dead once every other
// process in it is gone and reaped. So the plugin, our child in the
// namespace, must be reaped first. The wait blocks in wait4(2) rather than
// polling: the namespace is usually gone within a few hundred
// microseconds, less than a polling interval would add to every call.
func (s *sentinel) reap() error {
	if s.reaped {
		return nil
	}
	s.kill()
	if s.gone == nil {
		s.gone = make(chan struct{})
		go s.waitGone()
	}
	timeout := time.NewTimer(maxKillWait)
	defer timeout.Stop()
	select {
	case <-s.gone:
	case <-timeout.C:
		return fmt.Errorf("processes of the call's PID namespace still running %s after they were killed", maxKillWait)
	}
	s.reaped = true
	s.ns.Close()
	if s.waitErr != nil {
		return fmt.Errorf("cannot reap the init of the call's PID namespace: %w", s.waitErr)
	}
	return nil
}

// waitGone reaps the sentinel, then closes gone.
func (s *sentinel) waitGone() {
	defer close(s.gone)
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(s.pid, &ws, 0, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			s.waitErr = err
			return
		}
		// A traced child's stop is reported too: only its end counts.
		if pid == s.pid && (ws.Exited() || ws.Signaled()) {
			return
		}
	}
}

// release kills the sentinel if the call did not, and reaps it; one that
// cannot be reaped in time is left to the goroutine that waits for it.
func (s *sentinel) release() {
	if err := s.reap(); err != nil {
		klog.Background().Error(err, "The PID namespace of an Exec pod admission plugin call outlives it; waiting for it in the background")
		go func() {
			<-s.gone
			s.ns.Close()
		}()
	}
}
