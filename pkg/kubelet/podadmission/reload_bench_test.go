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
	"testing"
)

// benchmarkConfigFiles is the size of the configuration directory of the
// resync benchmarks: one plugin per file.
const benchmarkConfigFiles = 10000

func benchmarkConfigDir(b *testing.B) string {
	b.Helper()
	dir := configDir(b)
	for i := range benchmarkConfigFiles {
		writeConfigFile(b, filepath.Join(dir, fmt.Sprintf("%05d.yaml", i)), pluginsYAML(execPlugin(fmt.Sprintf("p%05d", i))))
	}
	return dir
}

// BenchmarkResyncUnchanged10000Files is the periodic resync of a
// configuration directory of 10,000 files when nothing changed: a stat per
// file, nothing read or parsed.
func BenchmarkResyncUnchanged10000Files(b *testing.B) {
	tm := newTestManager(b, configHeader+"plugins: []\n", nil)
	dir := benchmarkConfigDir(b)
	tm.opts.ConfigPath = dir
	tm.runCtx = b.Context()
	tm.reloadSettled(b.Context())
	if len(tm.pluginNames()) != benchmarkConfigFiles {
		b.Fatalf("%d plugins loaded, want %d", len(tm.pluginNames()), benchmarkConfigFiles)
	}
	// The files were written just now; a resync a while later finds them
	// older than the timestamp granularity.
	tm.config.snapshot.takenAt = tm.config.snapshot.takenAt.Add(racyWindow)
	loaded := tm.config
	b.ReportAllocs()
	for b.Loop() {
		tm.reload(b.Context())
	}
	if tm.config != loaded {
		b.Fatal("the unchanged configuration was read again")
	}
}

// BenchmarkLoad10000Files is a full read of the same directory: what every
// resync cost before, and what a reload costs when a file changed.
func BenchmarkLoad10000Files(b *testing.B) {
	dir := benchmarkConfigDir(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := LoadNodeConfig(dir, "/usr/libexec/kubernetes/pod-admission"); err != nil {
			b.Fatal(err)
		}
	}
}
