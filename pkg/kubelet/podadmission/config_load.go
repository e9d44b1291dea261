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
// Trust: the directory (for a file, the directory that holds it) and every
// configuration file must be owned by root and not group or world writable;
// see package trust.
//
// Every error names the file and, for a bad value, the field path, e.g.
// "/etc/kubernetes/pod-admission/10-pss.yaml: plugins[0].timeout: Invalid
// value: "0s": must be greater than 0". All files are checked, so one
// error lists every problem; several come as a utilerrors.Aggregate.
func LoadConfig(path string) (*Config, error) {
	if path == "" {
		return nil, errors.New("the pod admission plugin configuration path is empty")
	}
	files, err := configFiles(path)
	if err != nil {
		return nil, err
	}

	cfg := &Config{Files: files}
	hash := sha256.New()
	var errs []error
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			errs = append(errs, pathError(file, err))
			continue
		}
		// Length-prefixed, so that moving bytes between files changes the hash.
		for _, part := range [][]byte{[]byte(file), data} {
			_ = binary.Write(hash, binary.BigEndian, uint64(len(part)))
			hash.Write(part)
		}
		plugins, fileErrs := loadFile(file, data)
		errs = append(errs, fileErrs...)
		cfg.Plugins = append(cfg.Plugins, plugins...)
	}
	errs = append(errs, duplicateNames(cfg.Plugins)...)
	if len(errs) > 0 {
		return nil, utilerrors.NewAggregate(errs)
	}
	cfg.Hash = fmt.Sprintf("sha256:%x", hash.Sum(nil))
	return cfg, nil
}

// configFiles returns the trusted configuration files at path, in order.
func configFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, pathError(path, err)
	}
	if !info.IsDir() {
		if err := trust.CheckDir(filepath.Dir(path)); err != nil {
			return nil, err
		}
		if err := trust.CheckFile(path); err != nil {
			return nil, err
		}
		return []string{path}, nil
	}

	if err := trust.CheckDir(path); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(path) // sorted by name
	if err != nil {
		return nil, pathError(path, err)
	}
	var files []string
	var errs []error
	for _, entry := range entries {
		if !isConfigFileName(entry.Name()) {
			continue
		}
		file := filepath.Join(path, entry.Name())
		info, err := os.Stat(file)
		if err != nil {
			errs = append(errs, pathError(file, err))
			continue
		}
		if info.IsDir() {
			continue
		}
		if err := trust.CheckFile(file); err != nil {
			errs = append(errs, err)
			continue
		}
		files = append(files, file)
	}
	return files, utilerrors.NewAggregate(errs)
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

// loadFile decodes, defaults and validates one file.
func loadFile(file string, data []byte) ([]ConfiguredPlugin, []error) {
	cfg, err := scheme.Decode(data)
	if err != nil {
		return nil, prefixErrors(file, err)
	}
	if errs := validation.ValidatePodAdmissionConfiguration(cfg); len(errs) > 0 {
		return nil, prefixErrors(file, errs.ToAggregate())
	}
	plugins := make([]ConfiguredPlugin, len(cfg.Plugins))
	for i, p := range cfg.Plugins {
		plugins[i] = ConfiguredPlugin{PluginConfig: p, File: file, Index: i}
	}
	return plugins, nil
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
