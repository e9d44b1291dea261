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
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podadmission/podadmission/pkg/apis/config/scheme"
	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/pkg/apis/config/validation"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust"
)

// configFileExtensions are the names a configuration file in a directory
// may end with; any other file is not configuration (an editor's backup, a
// README) and is skipped, as CNI does in /etc/cni/net.d.
var configFileExtensions = []string{".yaml", ".yml", ".json"}

// Config is the plugin configuration of a node: every plugin of every
// configuration file, in evaluation order.
type Config struct {
	// Plugins in the order they run: files in lexical order, then the order
	// of each file's list. Defaulted and valid.
	Plugins []ConfiguredPlugin
	// Files are the configuration files read, in order.
	Files []string
	// Hash identifies the names and contents of Files, so that a reload
	// that changes nothing is recognised.
	Hash string

	// snapshot is what the files were when they were read: the reload
	// compares it with the files now (reload_settle.go, reload_guard.go).
	snapshot configSnapshot
}

// ConfiguredPlugin is one plugin and the file that configures it.
type ConfiguredPlugin struct {
	configv1alpha1.PluginConfig
	// File is the configuration file that lists the plugin.
	File string
	// Index is the plugin's position in that file's plugins list.
	Index int
}

// LoadConfig reads the pod admission configuration at path, a file or a
// directory, the way the kubelet does at start and on every reload.
//
// In a directory, files whose names end in .yaml, .yml or .json are read in
// lexical order; names starting with "." (editor swap files, the ..data
// links of a ConfigMap volume) and other names are skipped, and so are
// subdirectories. A directory without configuration files is an empty
// configuration: every pod is admitted. Symlinks are followed.
//
// Trust: every directory on the way to each configuration file, through
// symlinks, and every file must be owned by root and not group or world
// writable; see package trust.
//
// A file some process has open for writing is not read (a read lease
// cannot be taken on it): LoadConfig fails with an error that wraps
// errBeingWritten, and the caller tries again once the writer is done.
//
// Every error names the file and, for a bad value, the field path, e.g.
// "/etc/kubernetes/pod-admission/10-pss.yaml: plugins[0].timeout: Invalid
// value: "0s": must be greater than 0". All files are checked, so one
// error lists every problem; several come as a utilerrors.Aggregate.
func LoadConfig(path string) (*Config, error) {
	if path == "" {
		return nil, errors.New("the pod admission plugin configuration path is empty")
	}
	dir, files, err := configFiles(path)
	if err != nil {
		return nil, err
	}

	cfg := &Config{Files: files, snapshot: configSnapshot{path: path, dir: dir, takenAt: time.Now()}}
	hash := sha256.New()
	var errs []error
	for _, file := range files {
		read, err := readConfigFile(file)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		// Length-prefixed, so that moving bytes between files changes the hash.
		for _, part := range [][]byte{[]byte(file), read.data} {
			_ = binary.Write(hash, binary.BigEndian, uint64(len(part)))
			hash.Write(part)
		}
		plugins, explicitlyEmpty, fileErrs := loadFile(file, read.data)
		errs = append(errs, fileErrs...)
		cfg.Plugins = append(cfg.Plugins, plugins...)
		cfg.snapshot.files = append(cfg.snapshot.files, fileSnapshot{
			path:            file,
			stamp:           read.stamp,
			data:            read.data,
			plugins:         plugins,
			explicitlyEmpty: explicitlyEmpty,
			base:            plugins,
		})
	}
	errs = append(errs, duplicateNames(cfg.Plugins)...)
	if len(errs) > 0 {
		return nil, utilerrors.NewAggregate(errs)
	}
	cfg.Hash = fmt.Sprintf("sha256:%x", hash.Sum(nil))
	cfg.snapshot.swap = swapLinkOf(path, dir != nil)
	return cfg, nil
}

// LoadNodeConfig is LoadConfig plus the checks that depend on the kubelet's
// flags: Exec plugins need binDir, and when it is set, the bin dir and every
// Exec plugin executable that is already installed must pass the Exec
// transport's trust checks (a missing executable is no error: its plugin
// fails its calls until it is installed). The kubelet loads its
// configuration with it, at start and on every reload, and podadmctl
// validate --bin-dir checks with it.
func LoadNodeConfig(path, binDir string) (*Config, error) {
	cfg, err := LoadConfig(path)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, err := range CheckExecutables(cfg, binDir) {
		if !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, CheckExecEnv(cfg)...)
	if len(errs) > 0 {
		return nil, utilerrors.NewAggregate(errs)
	}
	return cfg, nil
}

// CheckExecutables checks the executable of every Exec plugin of cfg in
// binDir, the way the Exec transport checks it before every call
// (trust.CheckExecutableIn). Each error names the file and the plugin; the
// one of a missing executable wraps fs.ErrNotExist.
func CheckExecutables(cfg *Config, binDir string) []error {
	var errs []error
	dirChecked := false
	for _, p := range cfg.Plugins {
		if p.Type != configv1alpha1.ExecPluginType {
			continue
		}
		switch {
		case binDir == "":
			errs = append(errs, fmt.Errorf("%s: plugins[%d].type: Invalid value: %q: Exec plugins need the kubelet flag --pod-admission-plugin-bin-dir", p.File, p.Index, p.Type))
			continue
		case !filepath.IsAbs(binDir):
			return []error{fmt.Errorf("plugin bin dir %q is not an absolute path", binDir)}
		case !dirChecked:
			// Said once: it is the same for every plugin.
			dirChecked = true
			if err := trust.CheckDir(binDir); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return []error{fmt.Errorf("untrusted plugin bin dir: %w", err)}
			}
		}
		if err := trust.CheckExecutableIn(binDir, p.Name); err != nil {
			errs = append(errs, fmt.Errorf("%s: plugins[%d]: plugin %q: %w", p.File, p.Index, p.Name, err))
		}
	}
	return errs
}

// configFiles returns the configuration files at path, in order, with
// every directory on the way to them trusted, and the stamp of the
// directory that holds them when path is a directory.
func configFiles(path string) (*fileStamp, []string, error) {
	// Stamped before it is listed: a file added during the listing
	// changes the directory after its stamp, so the next reload sees it.
	dir, err := stampPath(path)
	if err != nil {
		return nil, nil, pathError(path, err)
	}
	if !dir.isDir() {
		return nil, []string{path}, nil
	}

	if err := trust.CheckDir(path); err != nil {
		return nil, nil, err
	}
	entries, err := os.ReadDir(path) // sorted by name
	if err != nil {
		return nil, nil, pathError(path, err)
	}
	var files []string
	var errs []error
	for _, entry := range entries {
		if !isConfigFileName(entry.Name()) {
			continue
		}
		file := filepath.Join(path, entry.Name())
		if entry.Type().IsRegular() {
			files = append(files, file)
			continue
		}
		info, err := os.Stat(file)
		if err != nil {
			errs = append(errs, pathError(file, err))
			continue
		}
		if info.IsDir() {
			continue
		}
		files = append(files, file)
	}
	return &dir, files, utilerrors.NewAggregate(errs)
}

func isConfigFileName(name string) bool {
	if strings.HasPrefix(name, ".") {
		return false
	}
	for _, ext := range configFileExtensions {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// loadFile decodes, defaults and validates one file. explicitlyEmpty says
// that the file lists no plugins on purpose ("plugins: []").
func loadFile(file string, data []byte) (plugins []ConfiguredPlugin, explicitlyEmpty bool, errs []error) {
	cfg, err := scheme.Decode(data)
	if err != nil {
		return nil, false, prefixErrors(file, err)
	}
	if errs := validation.ValidatePodAdmissionConfiguration(cfg); len(errs) > 0 {
		return nil, false, prefixErrors(file, errs.ToAggregate())
	}
	plugins = make([]ConfiguredPlugin, len(cfg.Plugins))
	for i, p := range cfg.Plugins {
		plugins[i] = ConfiguredPlugin{PluginConfig: p, File: file, Index: i}
	}
	return plugins, len(plugins) == 0, nil
}

// duplicateNames reports a plugin name used in two files, naming both.
// Duplicates within one file are found by validation.
func duplicateNames(plugins []ConfiguredPlugin) []error {
	var errs []error
	first := map[string]ConfiguredPlugin{}
	for _, p := range plugins {
		prev, found := first[p.Name]
		if !found {
			first[p.Name] = p
			continue
		}
		if prev.File == p.File {
			continue
		}
		dup := field.Duplicate(field.NewPath("plugins").Index(p.Index).Child("name"), p.Name)
		dup.Detail = fmt.Sprintf("already defined in %s at plugins[%d]", prev.File, prev.Index)
		errs = append(errs, fmt.Errorf("%s: %w", p.File, dup))
	}
	return errs
}

// prefixErrors names file in front of each error err holds.
func prefixErrors(file string, err error) []error {
	var agg utilerrors.Aggregate
	if !errors.As(err, &agg) {
		return []error{fmt.Errorf("%s: %w", file, err)}
	}
	var errs []error
	for _, e := range agg.Errors() {
		errs = append(errs, fmt.Errorf("%s: %w", file, e))
	}
	return errs
}

// pathError renders a file system error as "<path>: <problem>".
func pathError(path string, err error) error {
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return fmt.Errorf("%s: %w", path, pathErr.Err)
	}
	return fmt.Errorf("%s: %w", path, err)
}
