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
	"container/list"
	"context"
	"sync"
)

// callSlots caps the calls in flight to one plugin name. Every chain of
// the Manager shares it for that name, so a reload neither resets the count
// nor, while calls of an older configuration are in flight, lets more
// through: a call waits until fewer calls than its own configuration's
// maxConcurrentCalls are in flight, so there are never more than the
// largest cap of the configurations in use.
//
// Waiting calls get slots in the order they came. When a burst of pods
// arrives (a node coming back, a DaemonSet rolled out), each call's wait
// counts against its plugin's timeout: waking every waiter on every free
// slot and letting them race would leave unlucky pods waiting out the
// timeout while later ones went through, failing calls the plugin never
// saw. A call whose configuration allows more calls than are in flight
// passes the waiters that must wait for their own, lower cap.
type callSlots struct {
	mu       sync.Mutex
	inFlight int
	// waiting holds the *slotWaiter of the calls that wait, in arrival
	// order. Between calls of the methods, none of them may take a slot:
	// each has a cap of at most inFlight.
	waiting list.List
}

// slotWaiter is a call waiting for a slot under its configuration's cap.
type slotWaiter struct {
	limit int
	// granted is closed when the call got its slot.
	granted chan struct{}
}

func newCallSlots() *callSlots {
	return &callSlots{}
}

// acquire waits for one of limit slots, or for ctx; it returns ctx's error.
// A call that gets a slot at once allocates nothing.
func (s *callSlots) acquire(ctx context.Context, limit int) error {
	s.mu.Lock()
	if s.inFlight < limit {
		// No waiter can take this slot (see waiting), so none is passed.
		s.inFlight++
		s.mu.Unlock()
		return nil
	}
	w := &slotWaiter{limit: limit, granted: make(chan struct{})}
	queued := s.waiting.PushBack(w)
	s.mu.Unlock()

	select {
	case <-w.granted:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-w.granted:
		// Granted as ctx ended: hand the slot on.
		s.inFlight--
		s.grant()
	default:
		s.waiting.Remove(queued)
	}
	return ctx.Err()
}

func (s *callSlots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight--
	s.grant()
}

// grant gives free slots to the waiters that may take one, in arrival
// order. s.mu is held.
func (s *callSlots) grant() {
	for e := s.waiting.Front(); e != nil; {
		next := e.Next()
		if w := e.Value.(*slotWaiter); s.inFlight < w.limit {
			s.inFlight++
			s.waiting.Remove(e)
			close(w.granted)
		}
		e = next
	}
}
