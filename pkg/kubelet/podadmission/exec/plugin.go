package exec

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust"
)

// minimalPath is the only variable of the kubelet's environment a plugin
// gets: enough to find standard tools, nothing that leaks the kubelet's
// configuration or credentials.
const minimalPath = "PATH=/usr/sbin:/usr/bin:/sbin:/bin"

// errPluginTimeout is the cause of a call's context when the plugin's own
// timeout, rather than the caller's deadline, ended the call.
var errPluginTimeout = errors.New("plugin timeout")

// Plugin calls one Exec plugin. It is safe for concurrent use: every call is
// a process of its own.
type Plugin struct {
	name    string
	binDir  string
	path    string
	args    []string
	env     []string
	timeout time.Duration
}

// New returns the Exec plugin cfg describes, whose executable is
// binDir/<cfg.Name>. The executable need not exist yet: it is looked up at
// every call. cfg is expected to be defaulted and validated; New only
// rejects what would make it run something else than binDir/<cfg.Name>.
func New(cfg *configv1alpha1.PluginConfig, binDir string) (*Plugin, error) {
	if cfg.Type != configv1alpha1.ExecPluginType {
		return nil, fmt.Errorf("pod admission plugin %q: type is %q, not %q", cfg.Name, cfg.Type, configv1alpha1.ExecPluginType)
	}
	if cfg.Name == "" || cfg.Name == "." || cfg.Name == ".." || filepath.Base(cfg.Name) != cfg.Name {
		return nil, fmt.Errorf("pod admission plugin %q: the name must be a file name in the plugin bin dir", cfg.Name)
	}
	if !filepath.IsAbs(binDir) {
		return nil, fmt.Errorf("pod admission plugin %q: plugin bin dir %q is not an absolute path", cfg.Name, binDir)
	}
	p := &Plugin{
		name:   cfg.Name,
		binDir: binDir,
		path:   filepath.Join(binDir, cfg.Name),
		args:   append([]string(nil), cfg.Args...),
		env:    []string{minimalPath},
	}
	for _, v := range cfg.Env {
		p.env = append(p.env, v.Name+"="+v.Value)
	}
	if cfg.Timeout != nil {
		p.timeout = cfg.Timeout.Duration
	}
	return p, nil
}

// Name is the plugin's name.
func (p *Plugin) Name() string { return p.name }

// Admit runs the plugin's executable once with req on stdin and returns the
// response it wrote on stdout. Every error names the plugin.
func (p *Plugin) Admit(ctx context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
	start := time.Now()
	resp, err := p.admit(ctx, req)
	logger := klog.FromContext(ctx)
	if err != nil {
		err = fmt.Errorf("pod admission plugin %q: %w", p.name, err)
		logger.V(4).Info("Exec pod admission plugin failed", "plugin", p.name, "pod", klog.KObj(req.Pod), "requestUID", req.UID, "duration", time.Since(start), "err", err)
		return nil, err
	}
	logger.V(4).Info("Exec pod admission plugin answered", "plugin", p.name, "pod", klog.KObj(req.Pod), "requestUID", req.UID, "duration", time.Since(start), "allowed", resp.Allowed, "reason", resp.Reason)
	return resp, nil
}

func (p *Plugin) admit(ctx context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
	if err := p.checkExecutable(); err != nil {
		return nil, err
	}
	request := *req
	request.APIVersion = podadmissionv1alpha1.SchemeGroupVersion.String()
	request.Kind = podadmissionv1alpha1.PodAdmissionRequestKind
	stdin, err := podadmissionv1alpha1.EncodeRequest(&request)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the request: %w", err)
	}

	budget := p.timeout
	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, p.timeout, errPluginTimeout)
		defer cancel()
	}
	if deadline, ok := ctx.Deadline(); ok && (budget == 0 || time.Until(deadline) < budget) {
		budget = time.Until(deadline).Round(time.Millisecond)
	}

	// No shell: the executable is run directly, with the configured args.
	cmd := exec.Command(p.path, p.args...)
	cmd.Env = p.env
	cmd.Dir = "/"
	out, err := runContained(ctx, p.name, cmd, stdin)
	if err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", p.path, err)
	}
	if !out.stderr.empty() {
		klog.FromContext(ctx).V(2).Info("Exec pod admission plugin wrote to stderr", "plugin", p.name, "pod", klog.KObj(req.Pod), "stderr", out.stderr.quoted())
	}
	if err := p.processError(ctx, out, budget); err != nil {
		return nil, err
	}
	return podadmissionv1alpha1.DecodeResponse(out.stdout.buf, &request)
}

// checkExecutable fails unless the plugin's executable is a trusted,
// executable regular file in a trusted bin dir, every directory on the way
// to it trusted too, after symlinks: the same check as at load
// (podadmission.CheckExecutables), made again because the binary can be
// swapped since.
func (p *Plugin) checkExecutable() error {
	return trust.CheckExecutableIn(p.binDir, p.name)
}

// processError says why a plugin process did not produce a response to
// decode, or returns nil when it exited 0 within its limits and left no
// process behind. The end of its stderr rides along for the log
// (processFailure), never in the message.
func (p *Plugin) processError(ctx context.Context, out *processOutcome, budget time.Duration) error {
	fail := func(format string, args ...any) error {
		return &processFailure{msg: fmt.Sprintf(format, args...), stderr: out.stderr}
	}
	switch {
	case out.killErr != nil:
		return fail("cannot kill its processes: %v", out.killErr)
	case out.stdout.overflowed():
		return fail("response larger than 1 MiB; its processes were killed")
	case errors.Is(out.stopped, context.DeadlineExceeded):
		if errors.Is(context.Cause(ctx), errPluginTimeout) {
			budget = p.timeout
		}
		return fail("timed out after %s; its processes were killed", budget)
	case out.stopped != nil:
		return fail("call canceled (%v); its processes were killed", context.Cause(ctx))
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
}

func (e *processFailure) Error() string { return e.msg }

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
