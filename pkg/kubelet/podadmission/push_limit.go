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
	"slices"
	"time"
)

// A push re-evaluates a pod the pushing plugin holds at once while the
// plugin has pushed that pod at most pushBurst times in a row, then once per
// pushInterval (a token bucket of pushBurst tokens per pod and plugin,
// refilled one per pushInterval). The first push is never delayed, nor the
// plugin's own push right after the Reevaluation{All} its transport sends
// when it connects; a plugin pushing in a loop has each pod it holds
// evaluated once a second: the shortest wait it could ask for without
// pushing (retryAfterSeconds: 1), and the kubelet's first back-off. That
// bounds what a push costs the plugins before the pusher in the chain to one
// call per second per pod the pusher holds, and nothing for the pods other
// plugins hold.
const (
	pushInterval = time.Second
	pushBurst    = 2
)

// pushState is what a pod's podState keeps about the pushes that name it.
// It survives the pod's admission, for the holds of its updates.
type pushState struct {
	// limits are the buckets of the plugins that pushed the pod, one per
	// plugin name: a pod held by one plugin and then another is limited
	// per plugin, so a plugin's pushes never use up another's.
	limits []pushLimit
	// deferredUntil is when a push over the rate makes the pod due; zero
	// when no push is deferred.
	deferredUntil time.Time
	// evaluating: the pod (or its update) is being evaluated. A push that
	// arrives meanwhile races with the decision: it is kept in racing and
	// counts once the decision says which plugin holds the pod.
	evaluating bool
	racing     []pushRace
}

// pushLimit is one plugin's bucket for one pod, as the time its pushes
// have used up to (the generic cell rate algorithm's form of a token
// bucket): a push is served at once while busyUntil is less than
// pushBurst-1 intervals ahead.
type pushLimit struct {
	plugin    string
	busyUntil time.Time
}

// pushRace is a plugin that pushed a pod during its evaluation; named says
// the push named the pod by UID rather than with All.
type pushRace struct {
	plugin string
	named  bool
}

// due says whether a deferred push has made the pod due.
func (p *pushState) due(now time.Time) bool {
	return !p.deferredUntil.IsZero() && !now.Before(p.deferredUntil)
}

// take charges a push-driven evaluation to plugin's bucket and returns how
// long it must wait: zero within the burst.
func (p *pushState) take(plugin string, now time.Time) time.Duration {
	i := slices.IndexFunc(p.limits, func(l pushLimit) bool { return l.plugin == plugin })
	if i < 0 {
		p.limits = append(p.limits, pushLimit{plugin: plugin})
		i = len(p.limits) - 1
	}
	l := &p.limits[i]
	start := l.busyUntil
	if start.Before(now) {
		start = now
	}
	l.busyUntil = start.Add(pushInterval)
	return max(start.Add(-(pushBurst-1)*pushInterval).Sub(now), 0)
}

// race keeps a push that arrived during the pod's evaluation.
func (p *pushState) race(plugin string, named bool) {
	i := slices.IndexFunc(p.racing, func(r pushRace) bool { return r.plugin == plugin })
	if i < 0 {
		p.racing = append(p.racing, pushRace{plugin: plugin, named: named})
		return
	}
	p.racing[i].named = p.racing[i].named || named
}

// evaluationStarts forgets the pushes the evaluation that starts answers.
func (p *pushState) evaluationStarts() {
	p.evaluating = true
	p.deferredUntil = time.Time{}
	p.racing = nil
}

// evaluationEnds returns the pushes that raced with the evaluation and
// forgets them.
func (p *pushState) evaluationEnds() []pushRace {
	racing := p.racing
	p.evaluating, p.racing = false, nil
	return racing
}
