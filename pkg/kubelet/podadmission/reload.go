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
	"errors"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

const (
	// reloadDebounce is how long the configuration must stay unchanged
	// before it is reloaded, so that an editor's or an installer's several
	// writes make one reload of the finished files. A reload that finds a
	// file open for writing is tried again after as long.
	reloadDebounce = 250 * time.Millisecond
	// reloadResyncInterval is how often the configuration is checked even
	// without a file system event: events can be missed. A check that finds
	// every file as it was read costs one stat per file.
	reloadResyncInterval = time.Minute
	// maxWriterWait caps the back-off of the reloads that wait for a file
	// to be closed, should a process keep one open for writing.
	maxWriterWait = 8 * time.Second
)

// runConfigWatch reloads the configuration when it changes on disk, until
// ctx is done; then it stops the Manager. retry is when Start's reload
// asked to be tried again, or 0.
func (m *Manager) runConfigWatch(ctx context.Context, w *configWatch, retry time.Duration) {
	logger := klog.FromContext(ctx)
	defer m.stop(logger)

	var events <-chan fsnotify.Event
	var watchErrors <-chan error
	if w.watcher != nil {
		defer func() { _ = w.watcher.Close() }()
		events, watchErrors = w.watcher.Events, w.watcher.Errors
	}
	resync := m.clock.NewTicker(reloadResyncInterval)
	defer resync.Stop()
	// next is the pending reload: after a change settled, or a retry.
	var next clock.Timer
	var due <-chan time.Time
	schedule := func(after time.Duration) {
		if next != nil {
			next.Stop()
		}
		next = m.clock.NewTimer(after)
		due = next.C()
	}
	reload := func() {
		next, due = nil, nil
		retry := m.reload(ctx)
		// A directory that was replaced is watched from now on; what
		// changed in it before that is seen by one more reload.
		if w.update(logger, m.config) && (retry == 0 || retry > reloadDebounce) {
			retry = reloadDebounce
		}
		if retry > 0 {
			schedule(retry)
		}
	}
	if retry > 0 {
		schedule(retry)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case event, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			logger.V(4).Info("Pod admission configuration may have changed", "event", event.String())
			schedule(reloadDebounce)
		case err, ok := <-watchErrors:
			if !ok {
				watchErrors = nil
				continue
			}
			logger.Error(err, "Watching the pod admission configuration failed", "path", w.path)
		case <-due:
			reload()
		case <-resync.C():
			reload()
		}
	}
}

// reload loads the configuration and, when it changed, is valid, has
// settled and is whole, puts it in use: new and changed plugins are
// created, unchanged ones kept, removed and changed ones closed once no
// evaluation uses them, and every pod not yet admitted is evaluated again
// at its next sync. An invalid configuration, or one that may be half
// written (reload_guard.go), is reported (log, metric, node event) once per
// distinct error and the last good one stays in use.
//
// It returns when to try again, or 0: a file is open for writing, or the
// change has not stayed unchanged for settleWindow yet (reload_settle.go).
// Only runConfigWatch and Start call it.
func (m *Manager) reload(ctx context.Context) (retryAfter time.Duration) {
	logger := klog.FromContext(ctx)
	if m.config.snapshot.unchanged() {
		m.reloads.pending = nil
		m.reloads.lastError = ""
		return 0
	}
	cfg, err := LoadNodeConfig(m.opts.ConfigPath, m.opts.BinDir)
	if errors.Is(err, errBeingWritten) || errors.Is(err, errChangedWhileRead) {
		n := m.reloads.writerWaits
		wait := writerWait(n)
		if wait == maxWriterWait && (n == 0 || writerWait(n-1) < maxWriterWait) {
			logger.Info("A pod admission configuration file stays open for writing; it is reloaded once it is closed", "err", err, "retryAfter", wait)
		} else {
			logger.V(2).Info("Pod admission configuration is being written; reloading it once the writer is done", "err", err, "retryAfter", wait)
		}
		m.reloads.writerWaits++
		return wait
	}
	if err == nil && cfg.Hash != m.config.Hash {
		if wait := m.reloads.settleLeft(m.config, cfg, m.clock.Now()); wait > 0 {
			logger.V(2).Info("Pod admission configuration changed; applying it once it stays unchanged", "settleWindow", settleWindow, "retryAfter", wait)
			return wait
		}
	}
	if err == nil {
		err = guardReload(m.config, cfg)
	}
	if err == nil && cfg.Hash == m.config.Hash {
		// The same content, maybe in new files: keep their stamps, so that
		// the next resync finds them unchanged.
		m.useConfig(cfg)
		m.saveConfigRecord(logger)
		return 0
	}
	var chain *Chain
	if err == nil {
		chain, err = newChainReusing(cfg, m.chain.Load(), m.opts.newPlugin, m.opts.BinDir, &m.plugins)
	}
	if err != nil {
		m.refuseReload(ctx, err)
		return 0
	}

	previous := m.chain.Swap(chain)
	m.useConfig(cfg)
	m.saveConfigRecord(logger)
	m.startPlugins(chain)
	m.goRun(func() {
		if err := previous.Close(); err != nil {
			logger.Error(err, "Closing pod admission plugins removed by a reload failed")
		}
	})
	m.reevaluateAll(ctx)

	names := make([]string, len(cfg.Plugins))
	for i, p := range cfg.Plugins {
		names[i] = p.Name
	}
	configReloadsTotal.WithLabelValues(reloadSuccess).Inc()
	logger.Info("Reloaded the pod admission configuration", "path", m.opts.ConfigPath, "files", cfg.Files, "plugins", names)
	m.recordNodeEvent(v1.EventTypeNormal, EventConfigReloaded,
		"Pod admission configuration reloaded: %d plugins [%s]", len(names), strings.Join(names, ", "))
	return 0
}

// reloadLoop is what the reloads remember between them besides the
// configuration in use. Putting a configuration in use (useConfig) starts
// it anew.
type reloadLoop struct {
	// pending is the change last found on disk and since when it has
	// stayed as it is (reload_settle.go).
	pending *pendingChange
	// writerWaits counts the reloads in a row that found a file open for
	// writing, for the back-off of the next try.
	writerWaits int
	// lastError is the error of the last refused reload, reported once.
	lastError string
}

// useConfig puts cfg in use as the configuration the chain is built from.
func (m *Manager) useConfig(cfg *Config) {
	m.config = cfg
	m.reloads = reloadLoop{}
}

// writerWait is how long to wait after the n-th reload in a row (from 0)
// that found a file open for writing: reloadDebounce doubling up to
// maxWriterWait.
func writerWait(n int) time.Duration {
	return min(reloadDebounce<<min(n, 8), maxWriterWait)
}

// refuseReload reports a refused reload, once per distinct error.
func (m *Manager) refuseReload(ctx context.Context, err error) {
	if err.Error() == m.reloads.lastError {
		return
	}
	m.reloads.lastError = err.Error()
	configReloadsTotal.WithLabelValues(reloadFailure).Inc()
	klog.FromContext(ctx).Error(err, "Refused the changed pod admission configuration; the last good one stays in use", "path", m.opts.ConfigPath)
	reason := EventConfigInvalid
	var inPlace *inPlaceChangeError
	if errors.As(err, &inPlace) {
		reason = EventConfigChangedInPlace
	}
	m.recordNodeEvent(v1.EventTypeWarning, reason,
		"Refused the changed pod admission configuration; the last good one stays in use: %v", err)
}

// stop retires the chain in use: its plugins are closed once the
// evaluations and calls using them are done. Later SoftAdmit calls keep
// pods Pending with ReasonUnavailable.
func (m *Manager) stop(logger klog.Logger) {
	if err := m.chain.Load().Close(); err != nil {
		logger.Error(err, "Closing pod admission plugins failed")
	}
}
