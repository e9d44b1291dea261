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
				return "[" + dir + "/10-a.yaml: plugins[0].maxConcurrentCalls: Invalid value: 0: must be between 1 and 256, " +
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
			wantErr: func(dir string) string {
				return dir + "/config.yaml: on its path, " + dir + ": owned by uid 1000, must be owned by root"
			},
		},
		"group-writable parent directory": {
			setup: func(t *testing.T, dir string) string {
				sub := filepath.Join(dir, "sub", "pod-admission")
				require.NoError(t, os.MkdirAll(sub, 0o755))
				writeConfigFile(t, filepath.Join(sub, "10-a.yaml"), execPluginYAML("a"))
				require.NoError(t, os.Chmod(filepath.Join(dir, "sub"), 0o775))
				return sub
			},
			wantErr: func(dir string) string {
				return dir + "/sub/pod-admission: on its path, " + dir + "/sub: mode 0775 is group or world writable"
			},
		},
		"symlinked file in another user's directory": {
			setup: func(t *testing.T, dir string) string {
				other := filepath.Join(dir, "other")
				require.NoError(t, os.Mkdir(other, 0o755))
				writeConfigFile(t, filepath.Join(other, "10-a.yaml"), execPluginYAML("a"))
				require.NoError(t, os.Chown(other, 1000, 1000))
				conf := filepath.Join(dir, "conf")
				require.NoError(t, os.Mkdir(conf, 0o755))
				require.NoError(t, os.Symlink(filepath.Join(other, "10-a.yaml"), filepath.Join(conf, "10-a.yaml")))
				return conf
			},
			wantErr: func(dir string) string {
				return dir + "/conf/10-a.yaml: on its path, " + dir + "/other: owned by uid 1000, must be owned by root"
			},
		},
		"plugins key without a list": {
			setup: func(t *testing.T, dir string) string {
				writeConfigFile(t, filepath.Join(dir, "10-a.yaml"), configHeader+"plugins:\n")
				return dir
			},
			wantErr: func(dir string) string {
				return dir + `/10-a.yaml: plugins: Required value: must be a list of plugins; write "plugins: []" for none`
			},
		},
		"no plugins key": {
			setup: func(t *testing.T, dir string) string {
				writeConfigFile(t, filepath.Join(dir, "10-a.yaml"), configHeader)
				return dir
			},
			wantErr: func(dir string) string {
				return dir + `/10-a.yaml: plugins: Required value: must be a list of plugins; write "plugins: []" for none`
			},
		},
		"only comments": {
			setup: func(t *testing.T, dir string) string {
				writeConfigFile(t, filepath.Join(dir, "10-a.yaml"), "# plugins: []\n")
				return dir
			},
			wantErr: func(dir string) string {
				return dir + "/10-a.yaml: no PodAdmissionConfiguration in the file: it is empty or holds only comments"
			},
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

// A file some process has open for writing may be half written: it is not
// read (a read lease cannot be had) until the writer closes it.
func TestLoadConfigDoesNotReadAFileOpenForWriting(t *testing.T) {
	dir := configDir(t)
	file := filepath.Join(dir, "10-a.yaml")
	writeConfigFile(t, file, execPluginYAML("a", "b"))
	writer, err := os.OpenFile(file, os.O_WRONLY, 0)
	require.NoError(t, err)

	cfg, err := LoadConfig(dir)
	require.ErrorIs(t, err, errBeingWritten)
	assert.EqualError(t, err, file+": open for writing by another process; read once it is closed")
	assert.Nil(t, cfg)

	// Other readers do not count.
	require.NoError(t, writer.Close())
	reader, err := os.Open(file)
	require.NoError(t, err)
	defer reader.Close()
	cfg, err = LoadConfig(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, pluginNames(cfg))
}

func TestLoadNodeConfigChecksTheExecPluginsAsTheyWouldRun(t *testing.T) {
	dir := configDir(t)
	file := filepath.Join(dir, "10-a.yaml")
	writeConfigFile(t, file, execPluginYAML("installed", "missing")+"- name: gate\n  type: GRPC\n  endpoint: /run/gate.sock\n")
	binDir := filepath.Join(filepath.Dir(dir), "bin")
	require.NoError(t, os.Mkdir(binDir, 0o755))
	writeConfigFile(t, filepath.Join(binDir, "installed"), "#!/bin/sh\n")
	require.NoError(t, os.Chmod(filepath.Join(binDir, "installed"), 0o755))

	cfg, err := LoadNodeConfig(dir, binDir)
	require.NoError(t, err, "a missing executable blocks its plugin's pods at every call, it does not fail the configuration")
	assert.Equal(t, []string{"installed", "missing", "gate"}, pluginNames(cfg))
	assert.Len(t, CheckExecutables(cfg, binDir), 1)
	assert.ErrorIs(t, CheckExecutables(cfg, binDir)[0], os.ErrNotExist)

	require.NoError(t, os.Chmod(filepath.Join(binDir, "installed"), 0o775))
	_, err = LoadNodeConfig(dir, binDir)
	require.EqualError(t, err, file+`: plugins[0]: plugin "installed": untrusted executable: `+binDir+"/installed: mode 0775 is group or world writable")
	require.NoError(t, os.Chmod(filepath.Join(binDir, "installed"), 0o755))

	require.NoError(t, os.Chmod(binDir, 0o777))
	_, err = LoadNodeConfig(dir, binDir)
	require.EqualError(t, err, "untrusted plugin bin dir: "+binDir+": mode 0777 is group or world writable")

	_, err = LoadNodeConfig(dir, "")
	require.EqualError(t, err, "["+file+`: plugins[0].type: Invalid value: "Exec": Exec plugins need the kubelet flag --pod-admission-plugin-bin-dir, `+
		file+`: plugins[1].type: Invalid value: "Exec": Exec plugins need the kubelet flag --pod-admission-plugin-bin-dir]`)
}
