package podadmission

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const configHeader = "apiVersion: podadmission.kubelet.config.k8s.io/v1alpha1\nkind: PodAdmissionConfiguration\n"

// configDir returns a new directory that passes the trust check.
func configDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pod-admission")
	require.NoError(t, os.Mkdir(dir, 0o755))
	return dir
}

func writeConfigFile(t testing.TB, path, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	require.NoError(t, os.Chmod(path, 0o644)) // WriteFile keeps an existing file's mode
}

func execPluginYAML(names ...string) string {
	s := configHeader + "plugins:\n"
	for _, n := range names {
		s += "- name: " + n + "\n  type: Exec\n"
	}
	return s
}

func pluginNames(cfg *Config) []string {
	var names []string
	for _, p := range cfg.Plugins {
		names = append(names, p.Name)
	}
	return names
}

func TestLoadConfigFile(t *testing.T) {
	dir := configDir(t)
	file := filepath.Join(dir, "config.yaml")
	writeConfigFile(t, file, execPluginYAML("b", "a"))

	cfg, err := LoadConfig(file)
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "a"}, pluginNames(cfg))
	assert.Equal(t, []string{file}, cfg.Files)
	assert.Equal(t, file, cfg.Plugins[1].File)
	assert.Equal(t, 1, cfg.Plugins[1].Index)
	assert.Equal(t, "Fail", string(cfg.Plugins[0].FailurePolicy), "defaults applied")
	assert.Regexp(t, "^sha256:[0-9a-f]{64}$", cfg.Hash)

	again, err := LoadConfig(file)
	require.NoError(t, err)
	assert.Equal(t, cfg.Hash, again.Hash, "same content, same hash")

	writeConfigFile(t, file, execPluginYAML("b"))
	changed, err := LoadConfig(file)
	require.NoError(t, err)
	assert.NotEqual(t, cfg.Hash, changed.Hash)
}

func TestLoadConfigDirectory(t *testing.T) {
	dir := configDir(t)
	writeConfigFile(t, filepath.Join(dir, "20-b.yml"), execPluginYAML("b1", "b2"))
	writeConfigFile(t, filepath.Join(dir, "10-a.yaml"), execPluginYAML("a"))
	writeConfigFile(t, filepath.Join(dir, "30-c.json"), `{"apiVersion": "podadmission.kubelet.config.k8s.io/v1alpha1", "kind": "PodAdmissionConfiguration", "plugins": [{"name": "c", "type": "GRPC", "endpoint": "/run/c.sock"}]}`)
	// Not configuration: skipped even though they would not load.
	writeConfigFile(t, filepath.Join(dir, ".10-a.yaml.swp"), "garbage")
	writeConfigFile(t, filepath.Join(dir, ".hidden.yaml"), "garbage")
	writeConfigFile(t, filepath.Join(dir, "10-a.yaml~"), "garbage")
	writeConfigFile(t, filepath.Join(dir, "README.md"), "garbage")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub.yaml"), 0o755))
	// A ConfigMap volume: files are symlinks through ..data.
	data := filepath.Join(dir, "..2026_01_01")
	require.NoError(t, os.Mkdir(data, 0o755))
	writeConfigFile(t, filepath.Join(data, "40-d.yaml"), execPluginYAML("d"))
	require.NoError(t, os.Symlink("..2026_01_01", filepath.Join(dir, "..data")))
	require.NoError(t, os.Symlink("..data/40-d.yaml", filepath.Join(dir, "40-d.yaml")))

	cfg, err := LoadConfig(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b1", "b2", "c", "d"}, pluginNames(cfg))
	assert.Equal(t, []string{
		filepath.Join(dir, "10-a.yaml"),
		filepath.Join(dir, "20-b.yml"),
		filepath.Join(dir, "30-c.json"),
		filepath.Join(dir, "40-d.yaml"),
	}, cfg.Files)
	assert.Equal(t, filepath.Join(dir, "20-b.yml"), cfg.Plugins[2].File)
	assert.Equal(t, 1, cfg.Plugins[2].Index)
}

func TestLoadConfigEmptyDirectory(t *testing.T) {
	cfg, err := LoadConfig(configDir(t))
	require.NoError(t, err)
	assert.Empty(t, cfg.Plugins)
	assert.Empty(t, cfg.Files)
}

func TestLoadConfigErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		// setup writes the configuration into dir and returns the path to load.
		setup   func(t *testing.T, dir string) string
		wantErr func(dir string) string
	}{
		"empty path": {
			setup:   func(t *testing.T, dir string) string { return "" },
			wantErr: func(string) string { return "the pod admission plugin configuration path is empty" },
		},
		"missing path": {
			setup:   func(t *testing.T, dir string) string { return filepath.Join(dir, "missing.yaml") },
			wantErr: func(dir string) string { return dir + "/missing.yaml: no such file or directory" },
		},
		"invalid field": {
			setup: func(t *testing.T, dir string) string {
				writeConfigFile(t, filepath.Join(dir, "10-pss.yaml"), configHeader+"plugins:\n- name: pss\n  type: Exec\n  timeout: 0s\n")
				return dir
			},
			wantErr: func(dir string) string {
				return dir + `/10-pss.yaml: plugins[0].timeout: Invalid value: "0s": must be greater than 0`
			},
		},
		"errors in several files": {
			setup: func(t *testing.T, dir string) string {
				writeConfigFile(t, filepath.Join(dir, "10-a.yaml"), configHeader+"plugins:\n- name: a\n  type: Exec\n  maxConcurrentCalls: 0\n  failurePolicy: Never\n")
				writeConfigFile(t, filepath.Join(dir, "20-b.yaml"), configHeader+"plugins:\n- name: b\n  type: GRPC\n")
				return dir
			},
			wantErr: func(dir string) string {
				return "[" + dir + "/10-a.yaml: plugins[0].maxConcurrentCalls: Invalid value: 0: must be greater than or equal to 1, " +
					dir + `/10-a.yaml: plugins[0].failurePolicy: Unsupported value: "Never": supported values: "Fail", "Ignore", ` +
					dir + "/20-b.yaml: plugins[0].endpoint: Required value: a GRPC plugin needs the unix socket it serves on]"
			},
		},
		"decoding error": {
			setup: func(t *testing.T, dir string) string {
				writeConfigFile(t, filepath.Join(dir, "10-a.yaml"), configHeader+"plugins:\n- name: a\n  type: Exec\n  timout: 1s\n")
				return dir
			},
			wantErr: func(dir string) string {
				return dir + `/10-a.yaml: strict decoding error: unknown field "plugins[0].timout"`
			},
		},
		"wrong apiVersion": {
			setup: func(t *testing.T, dir string) string {
				writeConfigFile(t, filepath.Join(dir, "config.json"), `{"apiVersion": "podadmission.kubelet.config.k8s.io/v1", "kind": "PodAdmissionConfiguration"}`)
				return filepath.Join(dir, "config.json")
			},
			wantErr: func(dir string) string {
				return dir + `/config.json: apiVersion: Unsupported value: "podadmission.kubelet.config.k8s.io/v1": supported values: "podadmission.kubelet.config.k8s.io/v1alpha1"`
			},
		},
		"empty file": {
			setup: func(t *testing.T, dir string) string {
				writeConfigFile(t, filepath.Join(dir, "10-a.yaml"), "")
				return dir
			},
			wantErr: func(dir string) string {
				return dir + "/10-a.yaml: no PodAdmissionConfiguration in the file: it is empty or holds only comments"
			},
		},
		"duplicate name across files": {
			setup: func(t *testing.T, dir string) string {
				writeConfigFile(t, filepath.Join(dir, "10-a.yaml"), execPluginYAML("x", "pss"))
				writeConfigFile(t, filepath.Join(dir, "20-b.yaml"), execPluginYAML("other", "more", "pss"))
				return dir
			},
			wantErr: func(dir string) string {
				return dir + `/20-b.yaml: plugins[2].name: Duplicate value: "pss": already defined in ` + dir + "/10-a.yaml at plugins[1]"
			},
		},
		"duplicate name in one file": {
			setup: func(t *testing.T, dir string) string {
				writeConfigFile(t, filepath.Join(dir, "10-a.yaml"), execPluginYAML("pss", "pss"))
				return dir
			},
			wantErr: func(dir string) string { return dir + `/10-a.yaml: plugins[1].name: Duplicate value: "pss"` },
		},
		"broken symlink": {
			setup: func(t *testing.T, dir string) string {
				require.NoError(t, os.Symlink("..data/gone.yaml", filepath.Join(dir, "10-a.yaml")))
				return dir
			},
			wantErr: func(dir string) string { return dir + "/10-a.yaml: no such file or directory" },
		},
		"world-writable file": {
			setup: func(t *testing.T, dir string) string {
				writeConfigFile(t, filepath.Join(dir, "10-a.yaml"), execPluginYAML("a"))
				require.NoError(t, os.Chmod(filepath.Join(dir, "10-a.yaml"), 0o666))
				return dir
			},
			wantErr: func(dir string) string { return dir + "/10-a.yaml: mode 0666 is group or world writable" },
		},
		"group-writable single file": {
			setup: func(t *testing.T, dir string) string {
				writeConfigFile(t, filepath.Join(dir, "config.yaml"), execPluginYAML("a"))
				require.NoError(t, os.Chmod(filepath.Join(dir, "config.yaml"), 0o664))
				return filepath.Join(dir, "config.yaml")
			},
			wantErr: func(dir string) string { return dir + "/config.yaml: mode 0664 is group or world writable" },
		},
		"file not owned by root": {
			setup: func(t *testing.T, dir string) string {
				writeConfigFile(t, filepath.Join(dir, "10-a.yaml"), execPluginYAML("a"))
				require.NoError(t, os.Chown(filepath.Join(dir, "10-a.yaml"), 1000, 1000))
				return dir
			},
			wantErr: func(dir string) string { return dir + "/10-a.yaml: owned by uid 1000, must be owned by root" },
		},
		"world-writable directory": {
			setup: func(t *testing.T, dir string) string {
				writeConfigFile(t, filepath.Join(dir, "10-a.yaml"), execPluginYAML("a"))
				require.NoError(t, os.Chmod(dir, 0o777))
				return dir
			},
			wantErr: func(dir string) string { return dir + ": mode 0777 is group or world writable" },
		},
		"directory of a single file not owned by root": {
			setup: func(t *testing.T, dir string) string {
				writeConfigFile(t, filepath.Join(dir, "config.yaml"), execPluginYAML("a"))
				require.NoError(t, os.Chown(dir, 1000, 1000))
				return filepath.Join(dir, "config.yaml")
			},
			wantErr: func(dir string) string { return dir + ": owned by uid 1000, must be owned by root" },
		},
		"named pipe": {
			setup: func(t *testing.T, dir string) string {
				require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "10-a.yaml"), 0o600))
				return dir
			},
			wantErr: func(dir string) string { return dir + "/10-a.yaml: not a regular file (p---------)" },
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := configDir(t)
			cfg, err := LoadConfig(tc.setup(t, dir))
			require.EqualError(t, err, tc.wantErr(dir))
			assert.Nil(t, cfg)
		})
	}
}
