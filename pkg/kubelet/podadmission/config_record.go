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
	"fmt"
	"path/filepath"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/pkg/apis/config/validation"
)

// The record keeps the configuration last applied, in Options.StateDir
// (state_dir.go), rewritten every time a configuration is put in use: at
// start and on every reload that applies one. At the next start every file
// read is judged against it the way a reload judges a file against the one
// in use (config_restore.go), so that a file a kubelet restart or a power
// loss cut in the middle of a write in place is not taken for whole. A
// record that cannot be used (corrupt, untrusted, of another configuration
// path) is logged and left out: the files are then taken as they are.

// ConfigRecordName is the file in Options.StateDir that keeps the
// configuration last applied.
const ConfigRecordName = "applied_config_state"

type configRecordData struct {
	// Path is the configuration path (Options.ConfigPath) it is of.
	Path  string         `json:"path"`
	Files []recordedFile `json:"files"`
}

// recordedFile is one configuration file as it was in use: what a reload
// compares a newer read of it with (fileSnapshot).
type recordedFile struct {
	Path string `json:"path"`
	// Ino and Btime identify the file's inode (fileStamp). The device
	// number is left out: it may change across a reboot.
	Ino   uint64 `json:"ino"`
	Btime int64  `json:"btime"`
	Data  []byte `json:"data"`
	// Plugins are the plugins in use from the file, Base what a change of
	// it in place may not remove or change (reload_guard.go).
	Plugins []recordedPlugin `json:"plugins"`
	Base    []recordedPlugin `json:"base"`
}

type recordedPlugin struct {
	// Index is the plugin's position in the file's plugins list.
	Index  int                         `json:"index"`
	Config configv1alpha1.PluginConfig `json:"config"`
}

// configRecord reads and writes the record.
type configRecord struct {
	state *stateDirectory
	path  string
}

func newConfigRecord(state *stateDirectory) *configRecord {
	return &configRecord{state: state, path: state.path(ConfigRecordName)}
}

// save records cfg, the configuration in use, durably.
func (r *configRecord) save(cfg *Config) error {
	data := configRecordData{Path: cfg.snapshot.path, Files: make([]recordedFile, len(cfg.snapshot.files))}
	for i, f := range cfg.snapshot.files {
		data.Files[i] = recordedFile{
			Path:    f.path,
			Ino:     f.stamp.ino,
			Btime:   f.stamp.btime,
			Data:    f.data,
			Plugins: recordPlugins(f.plugins),
			Base:    recordPlugins(f.base),
		}
	}
	cp, err := newStateCheckpoint(data)
	if err != nil {
		return err
	}
	return r.state.write(ConfigRecordName, cp)
}

func recordPlugins(plugins []ConfiguredPlugin) []recordedPlugin {
	out := make([]recordedPlugin, len(plugins))
	for i, p := range plugins {
		out[i] = recordedPlugin{Index: p.Index, Config: p.PluginConfig}
	}
	return out
}

// load returns the files of the record of the configuration at
// configPath, in order; none, without an error, when there is no record.
func (r *configRecord) load(configPath string) ([]fileSnapshot, error) {
	var cp stateCheckpoint
	if found, err := r.state.read(ConfigRecordName, &cp); !found || err != nil {
		return nil, err
	}
	var data configRecordData
	if err := strictJSON([]byte(cp.Data), &data); err != nil {
		return nil, fmt.Errorf("%s: data: %w", r.path, err)
	}
	if data.Path != configPath {
		return nil, fmt.Errorf("%s: a record of the configuration at %q, not %q", r.path, data.Path, configPath)
	}
	files := make([]fileSnapshot, len(data.Files))
	seen := map[string]bool{}
	for i, f := range data.Files {
		if !filepath.IsAbs(f.Path) || filepath.Clean(f.Path) != f.Path || seen[f.Path] {
			return nil, fmt.Errorf("%s: data: files[%d]: path %q: not a clean absolute path, or listed twice", r.path, i, f.Path)
		}
		seen[f.Path] = true
		plugins, err := restorePlugins(f.Path, f.Plugins, field.NewPath("files").Index(i).Child("plugins"))
		if err != nil {
			return nil, fmt.Errorf("%s: data: %w", r.path, err)
		}
		base, err := restorePlugins(f.Path, f.Base, field.NewPath("files").Index(i).Child("base"))
		if err != nil {
			return nil, fmt.Errorf("%s: data: %w", r.path, err)
		}
		files[i] = fileSnapshot{
			path:    f.Path,
			stamp:   fileStamp{ino: f.Ino, btime: f.Btime},
			data:    f.Data,
			plugins: plugins,
			base:    base,
		}
	}
	return files, nil
}

// restorePlugins returns the recorded plugins of file, validated as when
// they were loaded: a record written by another version of this code
// must not put in use what this version refuses.
func restorePlugins(file string, recorded []recordedPlugin, path *field.Path) ([]ConfiguredPlugin, error) {
	plugins := make([]ConfiguredPlugin, len(recorded))
	names := map[string]bool{}
	for i, p := range recorded {
		if errs := validation.ValidatePluginConfig(&p.Config, path.Index(i).Child("config")); len(errs) > 0 {
			return nil, errs.ToAggregate()
		}
		if names[p.Config.Name] {
			return nil, field.Duplicate(path.Index(i).Child("config", "name"), p.Config.Name)
		}
		names[p.Config.Name] = true
		plugins[i] = ConfiguredPlugin{PluginConfig: p.Config, File: file, Index: p.Index}
	}
	return plugins, nil
}

// saveConfigRecord records the configuration in use, if there is a state
// directory. A failure is logged: the next start then judges the files
// against an older record, or none.
func (m *Manager) saveConfigRecord(logger klog.Logger) {
	if m.record == nil {
		return
	}
	if err := m.record.save(m.config); err != nil {
		logger.Error(err, "Pod admission cannot record the configuration it applied; a kubelet restart will compare the files with an older record", "path", m.record.path)
	}
}
