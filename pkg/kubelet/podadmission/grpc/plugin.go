package grpc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/klog/v2"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	pb "github.com/podadmission/podadmission/pkg/apis/podadmission/grpc/v1alpha1"
	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission"
)

const (
	// maxResponseSize caps what a plugin may send, like the Exec
	// transport's stdout cap.
	maxResponseSize = 1 << 20
	// maxRequestSize bounds a request, which carries one pod.
	maxRequestSize = 16 << 20

	// Reconnection back-off, as the kubelet's CRI client does it: a plugin
	// daemon that starts or restarts is found within a few seconds.
	baseBackoffDelay  = 100 * time.Millisecond
	maxBackoffDelay   = 3 * time.Second
	minConnectTimeout = 5 * time.Second

	// reevaluationBuffer is how many re-evaluations may wait for the
	// manager before the stream from the plugin is slowed down.
	reevaluationBuffer = 64
)

// Plugin calls one GRPC plugin. It is safe for concurrent use; calls share
// one connection.
type Plugin struct {
	name    string
	socket  string
	timeout time.Duration
	// serverUID is the uid the plugin daemon must run as (peer.go).
	serverUID uint32
	// untrusted is why the last connection attempt was refused, until one
	// passes the checks.
	untrusted atomic.Pointer[untrustedSocketError]

	conn   *grpc.ClientConn
	client pb.PodAdmissionPluginClient

	reevaluations chan podadmission.Reevaluation
	closed        atomic.Bool
	stop          context.CancelFunc
	done          sync.WaitGroup
	closeOnce     sync.Once
}

// New returns the GRPC plugin cfg describes and starts connecting to its
// socket in the background. It does not wait for the plugin, which may not
// be running yet. Close it to stop.
func New(cfg *configv1alpha1.PluginConfig) (*Plugin, error) {
	if cfg.Type != configv1alpha1.GRPCPluginType {
		return nil, fmt.Errorf("pod admission plugin %q: type is %q, not %q", cfg.Name, cfg.Type, configv1alpha1.GRPCPluginType)
	}
	socket, err := socketPath(cfg.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("pod admission plugin %q: %w", cfg.Name, err)
	}
	connectParams := grpc.ConnectParams{Backoff: backoff.DefaultConfig, MinConnectTimeout: minConnectTimeout}
	connectParams.Backoff.BaseDelay = baseBackoffDelay
	connectParams.Backoff.MaxDelay = maxBackoffDelay
	p := &Plugin{
		name:          cfg.Name,
		socket:        socket,
		reevaluations: make(chan podadmission.Reevaluation, reevaluationBuffer),
	}
	if cfg.ServerUID != nil {
		p.serverUID = uint32(*cfg.ServerUID)
	}
	conn, err := grpc.NewClient(unixScheme+socket,
		grpc.WithContextDialer(p.dialChecked),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithAuthority("localhost"),
		grpc.WithConnectParams(connectParams),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxResponseSize), grpc.MaxCallSendMsgSize(maxRequestSize)),
	)
	if err != nil {
		return nil, fmt.Errorf("pod admission plugin %q: %w", cfg.Name, err)
	}
	p.conn, p.client = conn, pb.NewPodAdmissionPluginClient(conn)
	if cfg.Timeout != nil {
		p.timeout = cfg.Timeout.Duration
	}
	ctx, stop := context.WithCancel(context.Background())
	p.stop = stop
	logger := klog.Background().WithValues("plugin", p.name, "endpoint", unixScheme+socket)
	ctx = klog.NewContext(ctx, logger)
	p.done.Add(2)
	go func() {
		defer p.done.Done()
		p.watchConnection(ctx)
	}()
	go func() {
		defer p.done.Done()
		p.watchReevaluations(ctx)
	}()
	return p, nil
}

// Name is the plugin's name.
func (p *Plugin) Name() string { return p.name }

// Admit asks the plugin about req. It fails at once when the plugin is not
// connected. Every error names the plugin.
func (p *Plugin) Admit(ctx context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
	start := time.Now()
	resp, err := p.admit(ctx, req)
	logger := klog.FromContext(ctx)
	if err != nil {
		err = fmt.Errorf("pod admission plugin %q: %w", p.name, err)
		logger.V(4).Info("GRPC pod admission plugin failed", "plugin", p.name, "pod", klog.KObj(req.Pod), "requestUID", req.UID, "duration", time.Since(start), "err", err)
		return nil, err
	}
	logger.V(4).Info("GRPC pod admission plugin answered", "plugin", p.name, "pod", klog.KObj(req.Pod), "requestUID", req.UID, "duration", time.Since(start), "allowed", resp.Allowed, "reason", resp.Reason)
	return resp, nil
}

func (p *Plugin) admit(ctx context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
	if p.closed.Load() {
		return nil, errors.New("closed")
	}
	in, err := pb.RequestToProto(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel, budget := withCallTimeout(ctx, p.timeout)
	defer cancel()
	// Fail fast (no WaitForReady): a plugin that is down blocks pods at once
	// instead of holding a pod worker until the deadline.
	out, err := p.client.Admit(ctx, in)
	if err != nil {
		return nil, p.callError(ctx, err, budget)
	}
	return pb.ResponseFromProto(out, req)
}

// withCallTimeout bounds a call by timeout (when set) and by ctx's deadline.
// It returns the budget the call has, for the error if it times out: the
// configured timeout exactly when that is the earlier limit.
func withCallTimeout(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc, time.Duration) {
	deadline, hasDeadline := ctx.Deadline()
	if timeout > 0 && (!hasDeadline || time.Until(deadline) >= timeout) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		return ctx, cancel, timeout
	}
	ctx, cancel := context.WithCancel(ctx)
	return ctx, cancel, time.Until(deadline).Round(time.Millisecond)
}

// Reevaluations delivers the plugin's requests to evaluate pods again, and
// Reevaluation{All: true} every time the connection becomes ready. It is
// closed by Close.
func (p *Plugin) Reevaluations() <-chan podadmission.Reevaluation {
	return p.reevaluations
}

// Close stops reconnecting and watching, closes the connection, then closes
// Reevaluations. Calls in flight fail. It is safe to call more than once.
func (p *Plugin) Close() error {
	var err error
	p.closeOnce.Do(func() {
		p.closed.Store(true)
		p.stop()
		p.done.Wait()
		err = p.conn.Close()
		close(p.reevaluations)
	})
	return err
}
