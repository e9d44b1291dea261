package podadmission

import (
	"context"
	"os"
	"path/filepath"
	"slices"
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
	// writes make one reload of the finished files.
	reloadDebounce = 250 * time.Millisecond
	// reloadResyncInterval is how often the configuration is read even
	// without a file system event: events can be missed, e.g. while the
	// watched directory is being replaced.
	reloadResyncInterval = time.Minute
)

// configWatch is the file system watch of the configuration.
type configWatch struct {
	// dir is the configuration directory, or the directory that holds the
	// configuration file.
	dir     string
	watcher *fsnotify.Watcher // nil when watching failed: resyncs only
}

// watchConfig starts watching the configuration, so that every change after
// Start returns is seen.
//
// It watches the configuration directory, or the directory that holds the
// configuration file, not the files: editors save by renaming a new file
// into place and ConfigMap volumes swap a ..data symlink, and both replace
// the inode a file watch would follow. Every change in that directory
// triggers a reload; one that leaves the configuration's content unchanged
// is recognised by its hash and changes nothing.
func (m *Manager) watchConfig(logger klog.Logger) *configWatch {
	w := &configWatch{dir: m.opts.ConfigPath}
	if info, err := os.Stat(w.dir); err != nil || !info.IsDir() {
		w.dir = filepath.Dir(w.dir)
	}
	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		logger.Error(err, "Cannot watch the pod admission configuration; reading it periodically instead", "path", m.opts.ConfigPath, "interval", reloadResyncInterval)
		return w
	}
	w.watcher = watcher
	ensureWatch(logger, watcher, w.dir)
	return w
}

// runConfigWatch reloads the configuration when it changes on disk, until
// ctx is done; then it stops the Manager.
func (m *Manager) runConfigWatch(ctx context.Context, w *configWatch) {
	logger := klog.FromContext(ctx)
	defer m.stop(ctx)

	var events <-chan fsnotify.Event
	var watchErrors <-chan error
	if w.watcher != nil {
		defer func() { _ = w.watcher.Close() }()
		events, watchErrors = w.watcher.Events, w.watcher.Errors
	}
	resync := m.clock.NewTicker(reloadResyncInterval)
	defer resync.Stop()
	var debounce clock.Timer
	var debounced <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case event, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			logger.V(4).Info("Pod admission configuration directory changed", "event", event.String())
			if debounce != nil {
				debounce.Stop()
			}
			debounce = m.clock.NewTimer(reloadDebounce)
			debounced = debounce.C()
		case err, ok := <-watchErrors:
			if !ok {
				watchErrors = nil
				continue
			}
			logger.Error(err, "Watching the pod admission configuration failed", "dir", w.dir)
		case <-debounced:
			debounce, debounced = nil, nil
			m.reload(ctx)
		case <-resync.C():
			if w.watcher != nil {
				ensureWatch(logger, w.watcher, w.dir)
			}
			m.reload(ctx)
		}
	}
}

// ensureWatch (re)adds the watch on dir, which is lost when dir is removed.
func ensureWatch(logger klog.Logger, watcher *fsnotify.Watcher, dir string) {
	if slices.Contains(watcher.WatchList(), dir) {
		return
	}
	if err := watcher.Add(dir); err != nil {
		logger.Error(err, "Cannot watch the pod admission configuration directory; retrying periodically", "dir", dir, "interval", reloadResyncInterval)
	}
}

// reload loads the configuration and, when it changed and is valid, puts it
// in use: new and changed plugins are created, unchanged ones kept, removed
// and changed ones closed once no evaluation uses them, and every pod not
// yet admitted is evaluated again at its next sync. An invalid configuration
// is reported (log, metric, node event) once per distinct error and the
// last good one stays in use. Only runConfigWatch calls it.
func (m *Manager) reload(ctx context.Context) {
	logger := klog.FromContext(ctx)
	cfg, err := loadConfigForNode(m.opts.ConfigPath, m.opts.BinDir)
	if err == nil && cfg.Hash == m.config.Hash {
		m.lastReloadError = ""
		return
	}
	var chain *Chain
	if err == nil {
		chain, err = newChainReusing(cfg, m.chain.Load(), m.opts.NewPlugin, m.opts.BinDir)
	}
	if err != nil {
		if err.Error() == m.lastReloadError {
			return
		}
		m.lastReloadError = err.Error()
		configReloadsTotal.WithLabelValues(reloadFailure).Inc()
		logger.Error(err, "Refused the changed pod admission configuration; the last good one stays in use", "path", m.opts.ConfigPath)
		m.recordNodeEvent(v1.EventTypeWarning, EventConfigInvalid,
			"Refused the changed pod admission configuration; the last good one stays in use: %v", err)
		return
	}

	m.lastReloadError = ""
	previous := m.chain.Swap(chain)
	m.config = cfg
	for _, p := range chain.plugins {
		m.watchReevaluations(m.runCtx, p)
	}
	go func() {
		if err := previous.retire(chain); err != nil {
			logger.Error(err, "Closing pod admission plugins removed by a reload failed")
		}
	}()
	m.reevaluateAll(ctx)

	names := make([]string, len(cfg.Plugins))
	for i, p := range cfg.Plugins {
		names[i] = p.Name
	}
	configReloadsTotal.WithLabelValues(reloadSuccess).Inc()
	logger.Info("Reloaded the pod admission configuration", "path", m.opts.ConfigPath, "files", cfg.Files, "plugins", names)
	m.recordNodeEvent(v1.EventTypeNormal, EventConfigReloaded,
		"Pod admission configuration reloaded: %d plugins [%s]", len(names), strings.Join(names, ", "))
}

// stop closes every plugin once the evaluations using them are done. Later
// SoftAdmit calls keep pods Pending with ReasonUnavailable.
func (m *Manager) stop(ctx context.Context) {
	if err := m.chain.Load().retire(nil); err != nil {
		klog.FromContext(ctx).Error(err, "Closing pod admission plugins failed")
	}
}
