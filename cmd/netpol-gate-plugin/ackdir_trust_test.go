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

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/klog/v2"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust/trusttest"
)

// Case 6 of issue 18: the acknowledgement directory was never checked.
// Made first by another user under a sticky world-writable parent (where
// anyone may create names), it was that user's: what they wrote there
// started pods before their NetworkPolicies were programmed.
func TestAckDirectoryMadeByAnotherUserAcknowledgesNothing(t *testing.T) {
	shared := filepath.Join(trusttest.Dir(t), "shared")
	require.NoError(t, os.Mkdir(shared, 0o755))
	require.NoError(t, os.Chmod(shared, os.ModeSticky|0o777))
	dir := filepath.Join(shared, "acks")
	out, err := trusttest.AsNobody(exec.Command("/bin/sh", "-c", `mkdir "$1" && touch "$1/uid-deny-all.1"`, "sh", dir)).CombinedOutput()
	require.NoError(t, err, "nobody makes the directory first: %s", out)

	w, err := newAckWatcher(klog.Background(), dir, 0, func() {})
	require.NoError(t, err, "an untrusted directory holds pods; it does not stop the gate")
	acks, untrusted := w.current()
	assert.Empty(t, acks, "nothing nobody wrote is an acknowledgement")
	require.EqualError(t, untrusted, fmt.Sprintf("%s: on its path, %s: mode 01777 is group or world writable", dir, shared))

	// Under a trusted parent, a directory owned by another user than the
	// agent is refused too.
	parent := trusttest.Dir(t)
	theirs := filepath.Join(parent, "acks")
	require.NoError(t, os.Mkdir(theirs, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(theirs, "uid-deny-all.1"), nil, 0o644))
	require.NoError(t, trusttest.ChownToNobody(theirs))
	w, err = newAckWatcher(klog.Background(), theirs, 0, func() {})
	require.NoError(t, err)
	acks, untrusted = w.current()
	assert.Empty(t, acks)
	require.EqualError(t, untrusted, theirs+": owned by uid 65534, must be owned by root")

	// Owned by the agent's uid, it is the agent's.
	w, err = newAckWatcher(klog.Background(), theirs, trusttest.NobodyUID, func() {})
	require.NoError(t, err)
	acks, untrusted = w.current()
	require.NoError(t, untrusted)
	assert.Equal(t, ackSet{"uid-deny-all": 1}, acks)
}

// The gate makes a missing directory for the agent, owned by its uid.
func TestAckDirectoryIsCreatedForTheWriter(t *testing.T) {
	dir := filepath.Join(trusttest.Dir(t), "acks")
	_, err := newAckWatcher(klog.Background(), dir, trusttest.NobodyUID, func() {})
	require.NoError(t, err)
	info, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), info.Mode().Perm())
	out, err := trusttest.AsNobody(exec.Command("/bin/sh", "-c", `touch "$1/uid-a.1"`, "sh", dir)).CombinedOutput()
	require.NoError(t, err, "the agent can write it: %s", out)
}

// The trust check runs at every rescan: a directory that turns untrusted
// while the gate runs stops counting at once, and counts again when fixed.
func TestAckDirectoryTrustIsCheckedAtEveryRescan(t *testing.T) {
	dir := filepath.Join(trusttest.Dir(t), "acks")
	changed := make(chan struct{}, 10)
	w, err := newAckWatcher(klog.Background(), dir, 0, func() { changed <- struct{}{} })
	require.NoError(t, err)
	touch(t, dir, "uid-a.1")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	require.Eventually(t, func() bool { acks, _ := w.current(); return acks.acknowledged(policyRef{UID: "uid-a", Generation: 1}) }, 5*time.Second, 10*time.Millisecond)
	drainChanges(changed)

	require.NoError(t, os.Chmod(dir, 0o777))
	touch(t, dir, "uid-b.1") // a change, so the directory is read again
	waitChanged(t, changed)
	acks, untrusted := w.current()
	assert.Empty(t, acks)
	require.EqualError(t, untrusted, dir+": mode 0777 is group or world writable")

	// The chmod is an event of its own: the rescan it causes may come
	// before uid-c.1 exists, so wait for the one that sees it.
	require.NoError(t, os.Chmod(dir, 0o755))
	touch(t, dir, "uid-c.1")
	require.Eventually(t, func() bool {
		acks, untrusted = w.current()
		return untrusted == nil && len(acks) == 3
	}, 5*time.Second, 10*time.Millisecond, "the directory, trusted again, is never read with uid-c.1")
	assert.Equal(t, ackSet{"uid-a": 1, "uid-b": 1, "uid-c": 1}, acks)
}

func drainChanges(ch chan struct{}) {
	for len(ch) > 0 {
		<-ch
	}
}

func waitChanged(t *testing.T, ch chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no change noticed")
	}
}

// While the directory is untrusted, every pod a policy selects is held,
// saying why; pods no policy selects are not.
func TestUntrustedAckDirectoryHoldsEverySelectedPod(t *testing.T) {
	env := newGateEnv(t, gateConfig{})
	env.addPolicy(t, policy("team-a", "deny-all", "uid-deny", 1, nil))
	env.ack("uid-deny", 1)
	env.mu.Lock()
	env.ackErr = fmt.Errorf("/run/netpol-acks: owned by uid 65534, must be owned by root")
	env.mu.Unlock()

	resp := env.admit(pod("team-a", "web", nil))
	assert.False(t, resp.Allowed)
	assert.Equal(t, ReasonAcknowledgementsUntrusted, resp.Reason)
	assert.Equal(t, "waiting for NetworkPolicy team-a/deny-all (generation 1): the acknowledgement directory is not trusted, so no acknowledgement counts (/run/netpol-acks: owned by uid 65534, must be owned by root)", resp.Message)
	assert.True(t, env.admit(pod("team-b", "web", nil)).Allowed, "no policy selects it")

	env.mu.Lock()
	env.ackErr = nil
	env.mu.Unlock()
	assert.True(t, env.admit(pod("team-a", "web", nil)).Allowed)
}
