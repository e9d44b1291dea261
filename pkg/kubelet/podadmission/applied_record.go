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
	"fmt"
	"reflect"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// AppliedConfigurationName is the file in Options.StateDir that keeps the
// configuration last applied: every file's path, inode and content, so
// that a restarted kubelet can run it again and tell a configuration on
// disk that a write cut short left from one changed on purpose
// (reload_start.go).
const AppliedConfigurationName = "applied_configuration_state"

// appliedRecord is the content of AppliedConfigurationName.
type appliedRecord struct {
	// ConfigPath is the Options.ConfigPath the files were read from.
	ConfigPath string        `json:"configPath"`
	Files      []appliedFile `json:"files"`
}

// appliedFile is one configuration file as applied.
type appliedFile struct {
	Path string `json:"path"`
	// Dev, Ino and Btime identify its inode: a change of the same inode
	// since is a change in place (reload_guard.go).
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Btime int64  `json:"btime"`
	Data  []byte `json:"data"`
	// BaseData is the content whose plugins a change in place may not
	// remove or change (fileSnapshot.base), when it is not Data.
	BaseData []byte `json:"baseData,omitempty"`
}

func recordOf(configPath string, cfg *Config) *appliedRecord {
	r := &appliedRecord{ConfigPath: configPath, Files: []appliedFile{}}
	for _, f := range cfg.snapshot.files {
		file := appliedFile{Path: f.path, Dev: f.stamp.dev, Ino: f.stamp.ino, Btime: f.stamp.btime, Data: f.data}
		if string(f.baseData) != string(f.data) {
			file.BaseData = f.baseData
		}
		r.Files = append(r.Files, file)
	}
	return r
}

// config is the configuration r holds. Its stamps know only the files'
// inodes, so that the first reload reads the files on disk.
func (r *appliedRecord) config() (*Config, error) {
	files := make([]configFileRead, len(r.Files))
	for i, f := range r.Files {
		stamp := fileStamp{dev: f.Dev, ino: f.Ino, btime: f.Btime, size: int64(len(f.Data))}
		files[i] = configFileRead{path: f.Path, fileRead: fileRead{data: f.Data, stamp: stamp}}
	}
	// A zero stamp of the directory matches nothing on disk.
	cfg, err := configOf(configSnapshot{path: r.ConfigPath, dir: &fileStamp{}}, files, nil)
	if err != nil {
		return nil, err
	}
	for i, f := range r.Files {
		if f.BaseData == nil {
			continue
		}
		base, _, errs := loadFile(f.Path, f.BaseData)
		if len(errs) > 0 {
			return nil, fmt.Errorf("baseData: %w", errs[0])
		}
		cfg.snapshot.files[i].base, cfg.snapshot.files[i].baseData = base, f.BaseData
	}
	return cfg, nil
}

// appliedStore reads and writes the record. Only NewManager and the
// goroutine that reloads the configuration use it.
type appliedStore struct {
	path  string
	state *stateStore
	// saved is what the file holds, as far as this Manager knows.
	saved *appliedRecord
}

func newAppliedStore(state *stateStore) *appliedStore {
	return &appliedStore{path: state.path(AppliedConfigurationName), state: state}
}

// load returns the configuration last applied from configPath, checked
// like the one on disk; nil without an error when there is no record
// (the first start with this state directory) or when it is of another
// configuration path (the kubelet's flag changed: nothing is known of the
// files at the new one). A record that cannot be trusted, read or
// decoded, or that no longer holds a valid configuration, is an error
// that names the file: the kubelet cannot tell what it enforced, and the
// configuration on disk could be a write cut short.
func (s *appliedStore) load(logger klog.Logger, configPath, binDir string) (*Config, error) {
	var r appliedRecord
	found, err := s.state.load(AppliedConfigurationName, &r)
	if err == nil && found {
		s.saved = &r
		if r.ConfigPath != configPath {
			logger.Info("The record of the pod admission configuration last applied is of another configuration path; starting from the configuration on disk",
				"record", s.path, "recordedPath", r.ConfigPath, "path", configPath)
			return nil, nil
		}
		var cfg *Config
		if cfg, err = r.config(); err == nil {
			err = checkNodeConfig(cfg, binDir)
		}
		if err == nil {
			return cfg, nil
		}
		err = fmt.Errorf("%s: %w", s.path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("pod admission: the record of the configuration last applied cannot be used, so the kubelet cannot tell whether "+
			"the configuration on disk is whole: %w. Check the configuration on disk, then remove %s to start from it as it is", err, s.path)
	}
	return nil, nil
}

// saveApplied records the configuration in use, when the record differs.
// A record that cannot be written leaves the one before, which a restarted
// kubelet compares the configuration on disk with: older, it keeps more
// plugins rather than fewer. That is logged and reported on the node.
func (m *Manager) saveApplied(ctx context.Context) {
	s := m.applied
	if s == nil {
		return
	}
	r := recordOf(m.opts.ConfigPath, m.config)
	if reflect.DeepEqual(r, s.saved) {
		return
	}
	if err := s.state.save(AppliedConfigurationName, r); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot record the pod admission configuration in use; a restarted kubelet compares the configuration on disk with an older one", "path", s.path)
		m.recordNodeEvent(v1.EventTypeWarning, EventStateNotSaved, "Cannot record the pod admission configuration in use in %s: %v", s.path, err)
		return
	}
	s.saved = r
}
