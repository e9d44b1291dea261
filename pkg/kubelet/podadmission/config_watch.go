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
	"os"
	"path/filepath"
	"syscall"

	"github.com/fsnotify/fsnotify"
	"k8s.io/klog/v2"
)

// configWatch is the file system watch of the configuration.
//
// It watches directories, not files: editors save by renaming a new file
// into place and ConfigMap volumes swap a ..data symlink, and both replace
// the inode a file watch would follow. It watches the directory that holds
// the configuration and every directory above it, as configured and as
// resolved through symlinks, and the directories the configuration files'
// symlinks lead to: so a configuration directory replaced by a rename or
// by an atomic-writer symlink swap is seen at once. Every event triggers a
// reload, which costs a stat per file when nothing changed.
type configWatch struct {
	// path is the configured file or directory.
	path    string
	watcher *fsnotify.Watcher // nil when watching failed: resyncs only
	// watched maps each watched directory to the inode the watch is on: a
	// watch follows its inode, so a directory replaced under the same name
	// needs a new watch.
	watched map[string]dirInode
}

// watchConfig starts watching the configuration, so that every change after
// Start returns is seen.
func (m *Manager) watchConfig(logger klog.Logger) *configWatch {
	w := &configWatch{path: m.opts.ConfigPath, watched: map[string]dirInode{}}
	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		logger.Error(err, "Cannot watch the pod admission configuration; reading it periodically instead", "path", m.opts.ConfigPath, "interval", reloadResyncInterval)
		return w
	}
	w.watcher = watcher
	w.update(logger, m.config)
	return w
}

// update (re)adds the watches of the directories cfg, the configuration in
// use, depends on, and drops the others. It reports whether it added a
// watch on a directory that was not watched before.
func (w *configWatch) update(logger klog.Logger, cfg *Config) (added bool) {
	if w.watcher == nil {
		return false
	}
	want := map[string]bool{}
	addChain := func(dir string) {
		for {
			want[dir] = true
			if parent := filepath.Dir(dir); parent != dir {
				dir = parent
				continue
			}
			return
		}
	}
	dir := w.path
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		dir = filepath.Dir(dir)
	}
	addChain(filepath.Clean(dir))
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		addChain(resolved)
	}
	if cfg != nil {
		for _, f := range cfg.snapshot.files {
			if info, err := os.Lstat(f.path); err == nil && info.Mode()&os.ModeSymlink != 0 {
				if resolved, err := filepath.EvalSymlinks(f.path); err == nil {
					want[filepath.Dir(resolved)] = true
				}
			}
		}
	}

	// fsnotify drops the watch of a directory that is moved or removed.
	live := map[string]bool{}
	for _, dir := range w.watcher.WatchList() {
		live[dir] = true
	}
	for dir, ino := range w.watched {
		if current, ok := inodeOf(dir); want[dir] && live[dir] && ok && current == ino {
			continue
		}
		_ = w.watcher.Remove(dir)
		delete(w.watched, dir)
	}
	for dir := range want {
		if _, ok := w.watched[dir]; ok {
			continue
		}
		ino, ok := inodeOf(dir)
		if !ok {
			continue // not there yet; its parent's watch sees it come
		}
		if err := w.watcher.Add(dir); err != nil {
			logger.Error(err, "Cannot watch a directory of the pod admission configuration; retrying at the next resync", "dir", dir, "interval", reloadResyncInterval)
			continue
		}
		w.watched[dir] = ino
		added = true
	}
	return added
}

// dirInode identifies a directory's inode.
type dirInode struct{ dev, ino uint64 }

// inodeOf returns the inode of the directory path resolves to.
func inodeOf(path string) (dirInode, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return dirInode{}, false
	}
	return dirInode{dev: st.Dev, ino: st.Ino}, true
}
