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
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// A kubelet restarted, or a node that lost power, while a writer was
// rewriting a configuration file in place finds the file cut: a prefix of
// what was being written, with fewer plugins or a plugin without its last
// fields. The inode survives both, so at start every file read is judged
// against the record of the configuration last applied (config_record.go)
// as a reload judges it against the one in use (reload_guard.go): a file
// of the recorded inode that would lose or change recorded plugins starts
// with its plugins as last applied, plus the plugins it adds on disk, and
// is reported like a refused reload. Its snapshot keeps what the reload
// needs to go on as without the restart: the writer's completion (the
// content read, and more) is applied once it settles, a real removal in
// place stays refused. A file of another inode than the record's is taken
// as it is, as on reload: it cannot be told from a file renamed into
// place. A recorded file no longer there keeps its plugins until a reload
// finds it gone for the settle window (reload_settle.go).

// restoredConfig is the configuration to start with.
type restoredConfig struct {
	config *Config
	// cut are the files that would lose or change recorded plugins.
	cut []*inPlaceChangeError
	// gone are the recorded files not read, whose plugins are kept.
	gone []string
	// dropped names the plugins a file read lists under a name another
	// file's kept plugins use: the kept one stays, as a reload would
	// have refused the whole change.
	dropped []string
}

// restoreConfig judges read, the configuration files as read at start,
// against recorded, the files of the record.
func restoreConfig(read *Config, recorded []fileSnapshot) restoredConfig {
	var r restoredConfig
	byPath := map[string]*fileSnapshot{}
	for i := range recorded {
		byPath[recorded[i].path] = &recorded[i]
	}
	// claimed maps the name of a plugin kept from the record to its file.
	claimed := map[string]string{}
	keep := func(old *fileSnapshot) {
		for _, p := range old.plugins {
			claimed[p.Name] = old.path
		}
	}

	files := make([]fileSnapshot, 0, len(read.snapshot.files)+len(recorded))
	for _, f := range read.snapshot.files {
		old, ok := byPath[f.path]
		delete(byPath, f.path)
		if ok && f.stamp.sameInodeAcrossBoots(old.stamp) && !f.explicitlyEmpty {
			var lost []string
			if f.base, lost = judgeInPlace(old, &f); len(lost) > 0 {
				f.plugins = withAddedPlugins(old.plugins, f.plugins)
				r.cut = append(r.cut, &inPlaceChangeError{file: f.path, lost: lost})
				keep(old)
			}
		}
		files = append(files, f)
	}
	for _, old := range recorded {
		if _, gone := byPath[old.path]; gone {
			files = append(files, old)
			r.gone = append(r.gone, old.path)
			keep(&old)
		}
	}
	if len(r.cut) == 0 && len(r.gone) == 0 {
		r.config = read
		r.config.snapshot.files = files // with the bases judged
		return r
	}
	slices.SortStableFunc(files, func(a, b fileSnapshot) int { return strings.Compare(a.path, b.path) })

	cfg := *read
	cfg.snapshot.files = files
	cfg.Plugins = nil
	hash := sha256.New()
	hash.Write([]byte(read.Hash))
	for i := range files {
		f := &files[i]
		plugins := make([]ConfiguredPlugin, 0, len(f.plugins))
		for _, p := range f.plugins {
			if owner, ok := claimed[p.Name]; ok && owner != f.path {
				r.dropped = append(r.dropped, fmt.Sprintf("%s: %s", f.path, p.Name))
				continue
			}
			plugins = append(plugins, p)
		}
		f.plugins = plugins
		cfg.Plugins = append(cfg.Plugins, plugins...)
		// Not the hash of any files read: the next read is a change,
		// judged and settled like any other.
		for _, p := range plugins {
			fmt.Fprintf(hash, "\x00%s\x00%s\x00%d", f.path, p.Name, p.Index)
		}
	}
	cfg.Hash = fmt.Sprintf("sha256:%x", hash.Sum(nil))
	r.config = &cfg
	return r
}

// withAddedPlugins is kept, then the plugins of read that kept does not
// name.
func withAddedPlugins(kept, read []ConfiguredPlugin) []ConfiguredPlugin {
	names := map[string]bool{}
	for _, p := range kept {
		names[p.Name] = true
	}
	out := slices.Clone(kept)
	for _, p := range read {
		if !names[p.Name] {
			out = append(out, p)
		}
	}
	return out
}

// restoreConfig returns the configuration to start with, read judged
// against the record, and logs what it kept from the record. Without a
// usable record it is read.
func (m *Manager) restoreConfig(logger klog.Logger, read *Config) restoredConfig {
	recorded, err := m.record.load(m.opts.ConfigPath)
	if err != nil {
		logger.Error(err, "Pod admission cannot use its record of the configuration last applied; the configuration files are taken as they are, so a file cut by a kubelet restart or a power loss in the middle of a write in place is not recognised",
			"path", m.record.path)
		return restoredConfig{config: read}
	}
	if recorded == nil {
		return restoredConfig{config: read}
	}
	r := restoreConfig(read, recorded)
	if errs := duplicateNames(r.config.Plugins); len(errs) > 0 {
		logger.Error(errors.Join(errs...), "Pod admission cannot use its record of the configuration last applied; the configuration files are taken as they are", "path", m.record.path)
		return restoredConfig{config: read}
	}
	for _, file := range r.gone {
		logger.Info("A pod admission configuration file last applied is gone; its plugins stay in use until it stayed gone for the settle window",
			"file", file, "settleWindow", settleWindow)
	}
	if len(r.dropped) > 0 {
		logger.Info("Pod admission left out plugins whose names plugins kept from the configuration last applied use", "plugins", r.dropped)
	}
	return r
}

// reportCutFiles reports the files that started with their plugins as
// last applied, like a refused reload.
func (m *Manager) reportCutFiles(logger klog.Logger, cut []*inPlaceChangeError) {
	for _, err := range cut {
		logger.Error(err, "A pod admission configuration file was changed in place in a way that removes or changes its plugins while the kubelet was not running, as a write cut by a kubelet restart or a power loss is; it starts with its plugins as last applied, and the plugins it adds",
			"file", err.file, "lostPlugins", err.lost)
		configReloadsTotal.WithLabelValues(reloadFailure).Inc()
		m.recordNodeEvent(v1.EventTypeWarning, EventConfigChangedInPlace,
			"Started with the pod admission plugins last applied from a file changed in place while the kubelet was not running: %v", err)
	}
	if len(cut) > 0 {
		// The first reload that reads the file again finds the same.
		m.reloads.lastError = cut[0].Error()
	}
}
