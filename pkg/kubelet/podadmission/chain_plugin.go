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

package podadmission

import (
	"context"
	"sync"
	"time"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
)

// chainPlugin is a configured plugin as a chain calls it: its transport
// plus what is the same for every transport (matching, timeout,
// concurrency cap, metrics).
type chainPlugin struct {
	config  ConfiguredPlugin
	matcher podMatcher
	*instance
}

// instance is a created transport. A reload that leaves a plugin's
// configuration unchanged hands the instance to the next chain, keeping its
// connection and its calls in flight.
type instance struct {
	plugin transport.Plugin
	// names is what the plugin's name has across reloads: call slots and
	// metric series.
	names *pluginName
	// startOnce starts the transport and the goroutine that forwards its
	// re-evaluation requests, once per instance.
	startOnce sync.Once
	// closed is told when the plugin is closed; nil for chains outside a
	// Manager.
	closed *sync.WaitGroup

	// refs counts the chains that hold the instance and the calls in flight
	// on it: the plugin is closed when the last of them lets go, so never
	// while an evaluation, of any chain, still uses it.
	mu   sync.Mutex
	refs int
}

// pluginName is what belongs to a plugin's name rather than to one
// configuration of it; chains hand it on to the chains after them.
type pluginName struct {
	// slots cap the calls in flight to every instance of the name.
	slots *callSlots
	// metrics are the name's metric series.
	metrics *pluginMetrics
}

func newPluginName(name string) *pluginName {
	return &pluginName{slots: newCallSlots(), metrics: newPluginMetrics(name)}
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
	if !last {
		return nil
	}
	err := i.plugin.Close()
	if i.closed != nil {
		i.closed.Done()
	}
	return err
}

// start starts the transport's background work, if it has any, once; it
// runs until the plugin is closed or ctx is done. forward, when set,
// receives the plugin's re-evaluation requests until its channel is
// closed; it runs on a goroutine the caller accounts for.
func (i *instance) start(ctx context.Context, forward func(<-chan transport.Reevaluation)) {
	i.startOnce.Do(func() {
		if starter, ok := i.plugin.(transport.Starter); ok {
			starter.Start(ctx)
		}
		if reevaluator, ok := i.plugin.(transport.Reevaluator); ok && forward != nil {
			forward(reevaluator.Reevaluations())
		}
	})
}

func (p *chainPlugin) name() string { return p.config.Name }

func (p *chainPlugin) timeout() time.Duration { return p.config.Timeout.Duration }

func (p *chainPlugin) maxConcurrentCalls() int { return int(*p.config.MaxConcurrentCalls) }
