package podadmission

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
)

// chainPlugin is a configured plugin as a chain calls it: the transport plus
// what is the same for every transport (matching, timeout, concurrency cap).
type chainPlugin struct {
	config  ConfiguredPlugin
	matcher podMatcher
	*instance
}

// instance is a created transport and its call slots. A reload that leaves
// a plugin's configuration unchanged hands the instance to the next chain,
// keeping its connection and its calls in flight.
type instance struct {
	plugin Plugin
	// slots holds one token per call in flight; its capacity is the
	// plugin's maxConcurrentCalls.
	slots chan struct{}
	// watchOnce starts the goroutine that forwards the plugin's
	// re-evaluation requests, once per instance.
	watchOnce sync.Once
}

func newChainPlugin(cfg ConfiguredPlugin, newPlugin PluginFactory, binDir string) (*chainPlugin, error) {
	matcher, err := newPodMatcher(cfg.Match)
	if err != nil {
		return nil, err
	}
	plugin, err := newPlugin(&cfg.PluginConfig, binDir)
	if err != nil {
		return nil, err
	}
	return &chainPlugin{
		config:  cfg,
		matcher: matcher,
		instance: &instance{
			plugin: plugin,
			slots:  make(chan struct{}, *cfg.MaxConcurrentCalls),
		},
	}, nil
}

func (p *chainPlugin) name() string { return p.config.Name }

func (p *chainPlugin) timeout() time.Duration { return p.config.Timeout.Duration }

// call sends req and returns the plugin's response, or an error when the
// plugin did not answer validly within its timeout. The wait for a free call
// slot counts against the timeout. The call runs on its own goroutine, which
// keeps its slot until the transport returns, so a transport that does not
// honour ctx cannot hold the pod's worker past the timeout, and the cap
// still counts it.
func (p *chainPlugin) call(ctx context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()

	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("no free call slot within the timeout of %s (maxConcurrentCalls: %d)", p.timeout(), cap(p.slots))
		}
		return nil, fmt.Errorf("call cancelled: %w", ctx.Err())
	}

	type answer struct {
		resp *podadmissionv1alpha1.PodAdmissionResponse
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		defer func() { <-p.slots }()
		resp, err := p.plugin.Admit(ctx, req)
		answered <- answer{resp, err}
	}()

	select {
	case a := <-answered:
		switch {
		case a.err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
			return nil, fmt.Errorf("no answer within the timeout of %s: %w", p.timeout(), a.err)
		case a.err != nil:
			return nil, a.err
		case a.resp == nil:
			return nil, errors.New("the transport returned neither a response nor an error")
		}
		return a.resp, nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("no answer within the timeout of %s", p.timeout())
		}
		return nil, fmt.Errorf("call cancelled: %w", ctx.Err())
	}
}
