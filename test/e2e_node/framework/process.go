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

package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/klog/v2"
)

// Process is one component of the cluster, run in its own process group so
// that stopping it also stops whatever it forked, and so that a Ctrl-C in
// the terminal reaches the harness only, which then stops it in order.
type Process struct {
	Name    string
	LogPath string

	cmd     *exec.Cmd
	logFile *os.File
	exited  chan struct{}
	waitErr error
}

// ProcessSpec says how to start a Process.
type ProcessSpec struct {
	Name   string
	Binary string
	Args   []string
	// Dir is the working directory; the harness's own if empty.
	Dir string
	// Env is added to the harness's environment.
	Env []string
	// LogPath receives stdout and stderr; appended to, so restarts of a
	// component keep one log.
	LogPath string
}

// StartProcess starts the process and returns once it has been forked.
func StartProcess(spec ProcessSpec) (*Process, error) {
	if _, err := os.Stat(spec.Binary); err != nil {
		return nil, fmt.Errorf("%s: binary missing: %w", spec.Name, err)
	}
	if err := os.MkdirAll(filepath.Dir(spec.LogPath), 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(spec.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logFile, "=== %s: %s %s\n", time.Now().Format(time.RFC3339Nano), spec.Binary, strings.Join(spec.Args, " "))

	cmd := exec.Command(spec.Binary, spec.Args...)
	cmd.Dir = spec.Dir
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", spec.Name, err)
	}
	p := &Process{Name: spec.Name, LogPath: spec.LogPath, cmd: cmd, logFile: logFile, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	klog.InfoS("Started", "component", spec.Name, "pid", cmd.Process.Pid, "log", spec.LogPath)
	return p, nil
}

// Pid is the process id, which is also its process group id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Running reports whether the process has not exited yet.
func (p *Process) Running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// ExitError describes how the process ended, for error messages.
func (p *Process) ExitError() error {
	if p.Running() {
		return nil
	}
	if p.waitErr == nil {
		return fmt.Errorf("%s exited with status 0 (log: %s)", p.Name, p.LogPath)
	}
	return fmt.Errorf("%s exited: %w (log: %s)", p.Name, p.waitErr, p.LogPath)
}

// Stop sends SIGTERM to the process group, and SIGKILL if it has not
// exited within grace. It returns once the process has exited; anything it
// left running is found by the teardown's sweep of the run's processes.
func (p *Process) Stop(grace time.Duration) {
	if !p.Running() {
		return
	}
	start := time.Now()
	_ = syscall.Kill(-p.Pid(), syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		klog.InfoS("Did not stop in time, killing", "component", p.Name, "grace", grace)
		_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
		<-p.exited
	}
	klog.InfoS("Stopped", "component", p.Name, "took", time.Since(start).Round(time.Millisecond))
}

// WaitReady polls ready until it returns nil, the process exits, or the
// context ends; the error names the component and its log.
func (p *Process) WaitReady(ctx context.Context, ready func(context.Context) error) error {
	start := time.Now()
	var lastErr error
	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	for {
		if lastErr = ready(ctx); lastErr == nil {
			klog.InfoS("Ready", "component", p.Name, "took", time.Since(start).Round(time.Millisecond))
			return nil
		}
		select {
		case <-p.exited:
			return p.ExitError()
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s: %w (log: %s)", p.Name, time.Since(start).Round(time.Millisecond), errors.Join(ctx.Err(), lastErr), p.LogPath)
		case <-ticker.C:
		}
	}
}
