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
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// queueCall starts a call that waits for one of limit slots and returns the
// channel its acquire's result arrives on, once the call is queued.
func queueCall(t *testing.T, ctx context.Context, s *callSlots, limit int) <-chan error {
	t.Helper()
	s.mu.Lock()
	before := s.waiting.Len()
	s.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- s.acquire(ctx, limit) }()
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.waiting.Len() == before+1
	}, 5*time.Second, time.Millisecond, "the call waits")
	return done
}

func inFlight(s *callSlots) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}

// TestCallSlotsServeWaitersInArrivalOrder: in a burst, the calls that wait
// get free slots in the order they came, so none waits out its timeout
// while later calls go through.
func TestCallSlotsServeWaitersInArrivalOrder(t *testing.T) {
	s := newCallSlots()
	ctx := context.Background()
	require.NoError(t, s.acquire(ctx, 1))
	var waiters []<-chan error
	for range 5 {
		waiters = append(waiters, queueCall(t, ctx, s, 1))
	}
	for i, done := range waiters {
		s.release()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatalf("call %d did not get the slot freed for it", i)
		}
		for j, later := range waiters[i+1:] {
			select {
			case <-later:
				t.Fatalf("call %d got a slot before call %d, which came first", i+1+j, i)
			default:
			}
		}
		assert.Equal(t, 1, inFlight(s))
	}
	s.release()
	assert.Equal(t, 0, inFlight(s))
}

// TestCallSlotsACallThatStopsWaitingTakesNoSlot: a call whose context ends
// while it waits leaves the queue, and the next slot goes to the call after
// it.
func TestCallSlotsACallThatStopsWaitingTakesNoSlot(t *testing.T) {
	s := newCallSlots()
	require.NoError(t, s.acquire(context.Background(), 1))
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := queueCall(t, ctx, s, 1)
	next := queueCall(t, context.Background(), s, 1)
	cancel()
	require.ErrorIs(t, <-gaveUp, context.Canceled)

	s.release()
	require.NoError(t, <-next)
	assert.Equal(t, 1, inFlight(s), "the call that gave up holds no slot")
	s.mu.Lock()
	assert.Zero(t, s.waiting.Len())
	s.mu.Unlock()
}

// TestCallSlotsAHigherCapPassesWaitersOfALowerOne: after a reload raised a
// plugin's maxConcurrentCalls, its calls do not queue behind those of the
// older configuration, which wait for their own cap.
func TestCallSlotsAHigherCapPassesWaitersOfALowerOne(t *testing.T) {
	s := newCallSlots()
	ctx := context.Background()
	require.NoError(t, s.acquire(ctx, 2))
	require.NoError(t, s.acquire(ctx, 2))
	older := queueCall(t, ctx, s, 2)

	require.NoError(t, s.acquire(ctx, 3), "a call under the raised cap takes the third slot at once")
	assert.Equal(t, 3, inFlight(s))

	s.release()
	s.release()
	require.NoError(t, <-older, "the older call gets a slot once fewer than its cap are in flight")
	assert.Equal(t, 2, inFlight(s))
}
