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
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust"
)

var _ transport.Plugin = (*Plugin)(nil)

// minimalPath is the only variable of the kubelet's environment a plugin
// gets: enough to find standard tools, nothing that leaks the kubelet's
// configuration or credentials.
const minimalPath = "PATH=/usr/sbin:/usr/bin:/sbin:/bin"

// Plugin calls one Exec plugin. It is safe for concurrent use: every call is
// a process of its own.
type Plugin struct {
	name   string
	binDir string
	args   []string
	// env is the process's environment; configured, the variables the
	// configuration sets, checked at every call.
	env        []string
	configured []configv1alpha1.ExecEnvVar
}

// New returns the Exec plugin cfg describes, whose executable is
// binDir/<cfg.Name>. The executable need not exist yet: it is looked up at
// every call. cfg is expected to be defaulted and validated; New only
// rejects what would make it run something else than binDir/<cfg.Name>.
func New(cfg *configv1alpha1.PluginConfig, binDir string) (*Plugin, error) {
	if cfg.Type != configv1alpha1.ExecPluginType {
		return nil, fmt.Errorf("type is %q, not %q", cfg.Type, configv1alpha1.ExecPluginType)
	}
	if cfg.Name == "" || cfg.Name == "." || cfg.Name == ".." || filepath.Base(cfg.Name) != cfg.Name {
		return nil, errors.New("the name must be a file name in the plugin bin dir")
	}
	if !filepath.IsAbs(binDir) {
		return nil, fmt.Errorf("plugin bin dir %q is not an absolute path", binDir)
	}
	p := &Plugin{
		name:       cfg.Name,
		binDir:     binDir,
		args:       append([]string(nil), cfg.Args...),
		env:        []string{minimalPath},
		configured: append([]configv1alpha1.ExecEnvVar(nil), cfg.Env...),
	}
	for _, v := range cfg.Env {
		p.env = append(p.env, v.Name+"="+v.Value)
	}
	return p, nil
}

// Admit runs the plugin's executable once with req on stdin and returns the
// response it wrote on stdout. The call lasts until the process exits or
// ctx ends; then every process it started is killed.
func (p *Plugin) Admit(ctx context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
	exe, err := p.openExecutable()
	if err != nil {
		return nil, err
	}
	defer exe.Close()
	stdin, err := podadmissionv1alpha1.EncodeRequest(req)
	if err != nil {
		return nil, err
	}

	out, err := runContained(ctx, p.name, exe, p.args, p.env, stdin)
	if err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", exe.Path, err)
	}
	if err := p.processError(ctx, out); err != nil {
		return nil, err
	}
	resp, err := podadmissionv1alpha1.DecodeResponse(out.stdout.buf, req)
	if err == nil && !out.stderr.empty() {
		// The chain logs the decision, and a failure's stderr with it;
		// what a plugin that answered wrote on the side only this
		// transport sees.
		klog.FromContext(ctx).V(2).Info("Exec pod admission plugin wrote to stderr", "plugin", p.name, "pod", klog.KObj(req.Pod), "requestUID", req.UID, "stderr", out.stderr.quoted())
	}
	return resp, err
}

// openExecutable opens the plugin's executable and checks it, and what the
// kernel runs for it (a script's interpreters, a binary's loader), and
// the code-loading variables of its environment: the same checks as at
// load (podadmission.CheckExecutables, podadmission.CheckExecEnv), made
// again because any of them can change since. The call runs the file
// opened here.
func (p *Plugin) openExecutable() (*trust.Executable, error) {
	exe, err := trust.OpenExecutableIn(p.binDir, p.name)
	if err != nil {
		return nil, err
	}
	for _, v := range p.configured {
		if err := trust.CheckEnv(v.Name, v.Value); err != nil {
			exe.Close()
			return nil, fmt.Errorf("environment variable %w", err)
		}
	}
	return exe, nil
}

// processError says why a plugin process did not produce a response to
// decode, or returns nil when it exited 0 within its limits and left no
// process behind. The end of its stderr rides along for the log
// (processFailure), never in the message.
func (p *Plugin) processError(ctx context.Context, out *processOutcome) error {
	fail := func(format string, args ...any) error {
		return &processFailure{msg: fmt.Sprintf(format, args...), stderr: out.stderr}
	}
	switch {
	case out.killErr != nil:
		return fail("cannot kill its processes: %v", out.killErr)
	case out.stdout.overflowed():
		return fail("response larger than %s; its processes were killed", protocol.SizeInMiB(maxStdout))
	case out.stopped != nil:
		// The chain says why ctx ended (its timeout, or the caller).
		return &processFailure{msg: fmt.Sprintf("stopped (%v); its processes were killed", out.stopped), stderr: out.stderr, cause: out.stopped}
	}
	var exitErr *exec.ExitError
	var exited string
	switch {
	case errors.As(out.waitErr, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			exited = fmt.Sprintf("killed by signal %s", unixSignalName(ws.Signal()))
		} else {
			exited = fmt.Sprintf("exited with code %d", exitErr.ExitCode())
		}
	case errors.Is(out.waitErr, exec.ErrWaitDelay):
		exited = "its stdout or stderr stayed open after its processes were killed"
	case out.waitErr != nil:
		exited = fmt.Sprintf("failed: %v", out.waitErr)
	}
	switch n := out.leftBehind; {
	case n > 0 && exited == "":
		// It answered, maybe "allowed", but broke the rule that nothing
		// it starts outlives the call: no answer counts then.
		return fail("left %s running after it exited; killed", processes(n))
	case n > 0:
		return fail("%s and left %s running; killed", exited, processes(n))
	case exited != "":
		return fail("%s", exited)
	}
	return nil
}

// processes says "1 process" or "n processes".
func processes(n int) string {
	if n == 1 {
		return "1 process"
	}
	return fmt.Sprintf("%d processes", n)
}

// processFailure is a plugin process that did not answer. Its message says
// what happened, for the pod's status; Stderr has the end of what the
// process wrote to stderr, for the kubelet's log only: it may hold
// anything, secrets included.
type processFailure struct {
	msg    string
	stderr *tailBuffer
	// cause is ctx's error when ctx stopped the process.
	cause error
}

func (e *processFailure) Error() string { return e.msg }

func (e *processFailure) Unwrap() error { return e.cause }

// Stderr returns the end of the process's stderr, quoted; "" if it wrote
// nothing.
func (e *processFailure) Stderr() string {
	if e.stderr.empty() {
		return ""
	}
	return e.stderr.quoted()
}

// Close releases nothing: an Exec plugin holds no resources between calls,
// and a call in flight is bounded by its context.
func (p *Plugin) Close() error { return nil }

// unixSignalName names a signal like kill -l does, SIGSEGV rather than
// "segmentation fault", so errors name what an operator can grep for.
func unixSignalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return sig.String()
}
