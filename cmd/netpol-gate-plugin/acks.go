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
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust"
)

// The acknowledgement directory is the contract with the node's network
// policy agent (the CNI's policy component): when the agent has programmed
// a NetworkPolicy at some generation on this node, it creates a file named
//
//	<metadata.uid>.<metadata.generation>
//
// in the directory, e.g. 3c9a4d1e-5b7f-4a8e-9d21-0f6b2c8e7a11.4. Contents
// are ignored; names starting with "." are ignored, so an agent can write
// a temporary file and rename it. An acknowledgement of a generation also
// acknowledges the older ones. The agent may remove files of deleted
// policies.
//
// An acknowledgement starts pods, so the directory is part of the node's
// trust root: it must be owned by root or by the agent's uid
// (--ack-writer-uid), and not writable by group or others, and every
// directory above it must be root's (trust.CheckWriterDir). It is checked
// before every read; while it fails, no acknowledgement counts and every
// pod a policy selects is held. A directory another user made first (say
// under a sticky world-writable /tmp) never acknowledges anything.

// ackRescanPeriod is how often the directory is read in full besides the
// change notifications, in case a notification was lost (inotify queue
// overflow).
const ackRescanPeriod = 30 * time.Second

// ackSet is the acknowledgements found in the directory: the newest
// acknowledged generation of each policy.
type ackSet map[types.UID]int64

func (a ackSet) acknowledged(ref policyRef) bool {
	gen, ok := a[ref.UID]
	return ok && gen >= ref.Generation
}

// parseAckName returns the policy uid and generation a file name
// acknowledges.
func parseAckName(name string) (types.UID, int64, error) {
	dot := strings.LastIndexByte(name, '.')
	if dot <= 0 {
		return "", 0, fmt.Errorf("want <policy uid>.<generation>")
	}
	gen, err := strconv.ParseInt(name[dot+1:], 10, 64)
	if err != nil || gen < 1 {
		return "", 0, fmt.Errorf("want <policy uid>.<generation>, with a generation of 1 or more")
	}
	return types.UID(name[:dot]), gen, nil
}

// scanAcks reads the directory.
func scanAcks(logger klog.Logger, dir string) (ackSet, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	acks := ackSet{}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || e.IsDir() {
			continue
		}
		uid, gen, err := parseAckName(name)
		if err != nil {
			logger.V(2).Info("Ignoring a file in the acknowledgement directory", "dir", dir, "file", name, "err", err)
			continue
		}
		if gen > acks[uid] {
			acks[uid] = gen
		}
	}
	return acks, nil
}

// ackWatcher keeps the current ackSet of a directory and calls onChange
// when it changes.
type ackWatcher struct {
	dir       string
	writerUID uint32
	onChange  func()

	mu   sync.RWMutex
	acks ackSet
	// untrusted says why the directory failed its trust check at the last
	// read, when it did; acks is empty then.
	untrusted error
}

// newAckWatcher creates dir if it does not exist, owned by writerUID, and
// reads it.
func newAckWatcher(logger klog.Logger, dir string, writerUID uint32, onChange func()) (*ackWatcher, error) {
	_, statErr := os.Lstat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--ack-dir %s: %w", dir, err)
	}
	if os.IsNotExist(statErr) && writerUID != trust.TrustedUID {
		if err := os.Chown(dir, int(writerUID), -1); err != nil {
			return nil, fmt.Errorf("--ack-dir %s: %w", dir, err)
		}
	}
	w := &ackWatcher{dir: dir, writerUID: writerUID, onChange: onChange}
	acks, untrusted, err := w.read(logger)
	if err != nil {
		return nil, fmt.Errorf("--ack-dir %s: %w", dir, err)
	}
	w.acks, w.untrusted = acks, untrusted
	if untrusted != nil {
		logger.Error(untrusted, "The acknowledgement directory is not trusted: no acknowledgement in it counts, and every pod a NetworkPolicy selects is held", "dir", dir)
	}
	return w, nil
}

// read checks the directory's trust and reads it. A directory that fails
// the check holds no acknowledgement; untrusted says why. err is a failure
// to read a trusted directory.
func (w *ackWatcher) read(logger klog.Logger) (acks ackSet, untrusted, err error) {
	if err := trust.CheckWriterDir(w.dir, w.writerUID); err != nil {
		return ackSet{}, err, nil
	}
	acks, err = scanAcks(logger, w.dir)
	return acks, nil, err
}

// current returns the acknowledgements, and why none count when the
// directory is not trusted; the caller must not modify them.
func (w *ackWatcher) current() (ackSet, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.acks, w.untrusted
}

// run watches the directory until ctx is done.
func (w *ackWatcher) run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch --ack-dir %s: %w", w.dir, err)
	}
	defer watcher.Close()
	if err := watcher.Add(w.dir); err != nil {
		return fmt.Errorf("watch --ack-dir %s: %w", w.dir, err)
	}
	// Files written between the first scan and the watch.
	w.rescan(logger)

	ticker := time.NewTicker(ackRescanPeriod)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-watcher.Events:
			if !ok {
				return nil
			}
			logger.V(5).Info("Acknowledgement directory changed", "event", ev.String())
			w.rescan(logger)
		case err, ok := <-watcher.Errors:
			if !ok {
				return nil
			}
			// An overflow loses events: read everything again.
			logger.Error(err, "Watching the acknowledgement directory", "dir", w.dir)
			w.rescan(logger)
		case <-ticker.C:
			w.rescan(logger)
		}
	}
}

func (w *ackWatcher) rescan(logger klog.Logger) {
	acks, untrusted, err := w.read(logger)
	if err != nil {
		logger.Error(err, "Reading the acknowledgement directory", "dir", w.dir)
		return
	}
	w.mu.Lock()
	wasTrusted := w.untrusted == nil
	changed := !sameAcks(w.acks, acks) || wasTrusted != (untrusted == nil)
	w.acks, w.untrusted = acks, untrusted
	w.mu.Unlock()
	switch {
	case untrusted != nil && wasTrusted:
		logger.Error(untrusted, "The acknowledgement directory is not trusted: no acknowledgement in it counts, and every pod a NetworkPolicy selects is held", "dir", w.dir)
	case untrusted == nil && !wasTrusted:
		logger.Info("The acknowledgement directory is trusted again", "dir", w.dir)
	}
	if changed {
		logger.V(4).Info("Acknowledgements changed", "dir", w.dir, "policies", len(acks))
		w.onChange()
	}
}

func sameAcks(a, b ackSet) bool {
	if len(a) != len(b) {
		return false
	}
	for uid, gen := range a {
		if b[uid] != gen {
			return false
		}
	}
	return true
}
