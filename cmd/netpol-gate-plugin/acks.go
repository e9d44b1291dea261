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
	dir      string
	onChange func()

	mu   sync.RWMutex
	acks ackSet
}

// newAckWatcher creates dir if it does not exist and reads it.
func newAckWatcher(logger klog.Logger, dir string, onChange func()) (*ackWatcher, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--ack-dir %s: %w", dir, err)
	}
	acks, err := scanAcks(logger, dir)
	if err != nil {
		return nil, fmt.Errorf("--ack-dir %s: %w", dir, err)
	}
	return &ackWatcher{dir: dir, onChange: onChange, acks: acks}, nil
}

// current returns the acknowledgements; the caller must not modify them.
func (w *ackWatcher) current() ackSet {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.acks
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
	acks, err := scanAcks(logger, w.dir)
	if err != nil {
		logger.Error(err, "Reading the acknowledgement directory", "dir", w.dir)
		return
	}
	w.mu.Lock()
	changed := !sameAcks(w.acks, acks)
	w.acks = acks
	w.mu.Unlock()
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
