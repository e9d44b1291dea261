package podadmission

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/klog/v2"

	podadmissionv1alpha1 "github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1"
)

// chainPlugin is a configured plugin as a chain calls it: the transport plus
// what is the same for every transport (matching, timeout, concurrency cap).
type chainPlugin struct {
	config  ConfiguredPlugin
	matcher podMatcher
	*instance
}

// instance is a created transport. A reload that leaves a plugin's
// configuration unchanged hands the instance to the next chain, keeping its
// connection and its calls in flight.
type instance struct {
	plugin Plugin
	// slots counts the calls in flight to every instance of the plugin's
	// name, across reloads.
	slots *callSlots
	// watchOnce starts the goroutine that forwards the plugin's
	// re-evaluation requests, once per instance.
	watchOnce sync.Once

	// refs counts the chains that hold the instance and the calls in flight
	// on it: the plugin is closed when the last of them lets go, so never
	// while an evaluation, of any chain, still uses it.
	mu   sync.Mutex
	refs int
}

func newChainPlugin(cfg ConfiguredPlugin, newPlugin PluginFactory, binDir string, slots *callSlots) (*chainPlugin, error) {
	matcher, err := newPodMatcher(cfg.Match)
	if err != nil {
		return nil, err
	}
	plugin, err := newPlugin(&cfg.PluginConfig, binDir)
	if err != nil {
		return nil, err
	}
	return &chainPlugin{
		config:   cfg,
		matcher:  matcher,
		instance: &instance{plugin: plugin, slots: slots},
	}, nil
}

// hold adds a user of the instance; drop must follow.
func (i *instance) hold() {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.refs++
}

// drop lets go of the instance and closes its plugin if that was the last
// user.
func (i *instance) drop() error {
	i.mu.Lock()
	i.refs--
	last := i.refs == 0
	i.mu.Unlock()
	if last {
		return i.plugin.Close()
	}
	return nil
}

func (p *chainPlugin) name() string { return p.config.Name }

func (p *chainPlugin) timeout() time.Duration { return p.config.Timeout.Duration }

func (p *chainPlugin) maxConcurrentCalls() int { return int(*p.config.MaxConcurrentCalls) }

// call sends req and returns the plugin's response, or an error when the
// plugin did not answer validly within its timeout. The wait for a free call
// slot counts against the timeout. The call runs on its own goroutine, which
// keeps its slot and its hold on the instance until the transport returns,
// so a transport that does not honour ctx cannot hold the pod's worker past
// the timeout, the cap still counts it, and a reload cannot close it.
func (p *chainPlugin) call(ctx context.Context, req *podadmissionv1alpha1.PodAdmissionRequest) (*podadmissionv1alpha1.PodAdmissionResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()

	if err := p.slots.acquire(ctx, p.maxConcurrentCalls()); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("no free call slot within the timeout of %s (maxConcurrentCalls: %d)", p.timeout(), p.maxConcurrentCalls())
		}
		return nil, fmt.Errorf("call cancelled: %w", err)
	}
	p.hold()

	type answer struct {
		resp *podadmissionv1alpha1.PodAdmissionResponse
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		defer func() {
			p.slots.release()
			if err := p.drop(); err != nil {
				klog.FromContext(ctx).Error(err, "Closing a pod admission plugin removed by a reload failed", "plugin", p.name())
			}
		}()
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

// callSlots caps the calls in flight to one plugin name. Every chain of
// the Manager shares it for that name, so a reload neither resets the count
// nor, while calls of an older configuration are in flight, lets more
// through: a call waits until fewer calls than its own configuration's
// maxConcurrentCalls are in flight, so there are never more than the
// largest cap of the configurations in use.
type callSlots struct {
	mu       sync.Mutex
	inFlight int
	// freed is closed, and replaced, whenever a call ends.
	freed chan struct{}
}

func newCallSlots() *callSlots {
	return &callSlots{freed: make(chan struct{})}
}

// acquire waits for one of limit slots, or for ctx; it returns ctx's error.
func (s *callSlots) acquire(ctx context.Context, limit int) error {
	for {
		s.mu.Lock()
		if s.inFlight < limit {
			s.inFlight++
			s.mu.Unlock()
			return nil
		}
		freed := s.freed
		s.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *callSlots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight--
	close(s.freed)
	s.freed = make(chan struct{})
}

// inUse is the number of calls in flight.
func (s *callSlots) inUse() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}
