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
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The record keeps what a reload compares a file with: read back, the
// sample configurations are the same to the plugin and the inode, and
// judging the unchanged files against it keeps nothing from it.
func TestConfigRecordRoundTripsTheExamples(t *testing.T) {
	dir := configDir(t)
	for _, name := range []string{"10-pod-security.yaml", "20-netpol-gate.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "pod-admission", name))
		require.NoError(t, err)
		writeConfigFile(t, filepath.Join(dir, name), string(data))
	}
	cfg, err := LoadConfig(dir)
	require.NoError(t, err)
	record := newConfigRecord(openState(t, stateDir(t)))
	require.NoError(t, record.save(cfg))

	files, err := record.load(dir)
	require.NoError(t, err)
	require.Len(t, files, 2)
	for i, f := range files {
		read := cfg.snapshot.files[i]
		assert.Equal(t, read.path, f.path)
		assert.True(t, read.stamp.sameInodeAcrossBoots(f.stamp))
		assert.Equal(t, read.data, f.data)
		assert.Empty(t, lostPlugins(read.plugins, f.plugins), "plugins")
		assert.Empty(t, lostPlugins(f.plugins, read.plugins), "plugins")
		assert.Empty(t, lostPlugins(read.base, f.base), "base")
	}

	again, err := LoadConfig(dir)
	require.NoError(t, err)
	restored := restoreConfig(again, files)
	assert.Empty(t, restored.cut)
	assert.Empty(t, restored.gone)
	assert.Same(t, again, restored.config, "taken as it is")
}

// The record follows every configuration put in use: at start, on a
// reload that applies a change, and on one that finds the same content in
// a new file. It is written for root only, where the checkpoint is.
func TestConfigRecordIsWrittenAtEveryApply(t *testing.T) {
	tm := restartableManager(t, pluginsYAML(execPlugin("a")))
	path := filepath.Join(tm.opts.StateDir, ConfigRecordName)
	info, err := os.Stat(path)
	require.NoError(t, err, "written at start")
	assert.Zero(t, info.Mode().Perm()&0o077, "for root only")
	record := newConfigRecord(openState(t, tm.opts.StateDir))
	recordedData := func() string {
		t.Helper()
		files, err := record.load(tm.dir)
		require.NoError(t, err)
		require.Len(t, files, 1)
		return string(files[0].data)
	}
	recordedIno := func() uint64 {
		t.Helper()
		files, err := record.load(tm.dir)
		require.NoError(t, err)
		return files[0].stamp.ino
	}
	assert.Equal(t, pluginsYAML(execPlugin("a")), recordedData())

	writeConfig(t, tm.file, pluginsYAML(execPlugin("a"), execPlugin("b")))
	tm.reloadSettled(t.Context())
	assert.Equal(t, pluginsYAML(execPlugin("a"), execPlugin("b")), recordedData(), "a reload that applied a change")

	writeConfig(t, tm.file, pluginsYAML(execPlugin("a"), execPlugin("b")))
	tm.reloadSettled(t.Context())
	stamp, err := stampPath(tm.file)
	require.NoError(t, err)
	assert.Equal(t, stamp.ino, recordedIno(), "the same content in a new file")

	// A refused reload records nothing.
	rewriteInPlace(t, tm.file, pluginsYAML(execPlugin("a")))
	tm.reloadSettled(t.Context())
	assert.Equal(t, pluginsYAML(execPlugin("a"), execPlugin("b")), recordedData())
}
