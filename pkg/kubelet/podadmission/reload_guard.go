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
	"bytes"
	"fmt"
	"strings"
)

// A configuration is applied only once it is whole. A reload never reads a
// file that a process has open for writing (config_read.go), and applies a
// change only once it has settled (reload_settle.go), but a writer may
// still pause longer than that between two writes: rewrite a file in place
// with several open/write/close rounds, or close it before it is done.
// Every state such a file passes through is a prefix of what is being
// written, and a prefix of a configuration lists at most the plugins of
// the whole, some maybe without their last fields. So a change made in
// place (the same inode, new content) may add plugins but may not remove
// or change the plugins the file listed before the write began; that is
// refused as possibly half written. A write that goes on from the content
// in use (that content, and more) is the same write going on: it is judged
// against the file as it was before that write, so the complete file is
// applied even when a prefix of it was, and a plugin added in place gets
// its last fields. Changes that arrive as a new inode (renamed into place,
// or created anew) are not judged so: a file renamed into place is the way
// to remove plugins. A file that lists "plugins: []" removes its plugins
// in place too: no prefix of a file with plugins reads so. The rule holds
// across a kubelet restart: the files read at start are judged against the
// record of the configuration last applied (config_restore.go).

// inPlaceChangeError is a change made in place that would remove or
// change plugins the file listed before it was written.
type inPlaceChangeError struct {
	file string
	// lost names the plugins of the file, as before the write, that the
	// new content removes or changes.
	lost []string
}

func (e *inPlaceChangeError) Error() string {
	return fmt.Sprintf("%s: changed in place in a way that removes or changes its plugins [%s]; a file written in place can be read "+
		"half-written, also after a kubelet restart or a power loss, so that is not applied. Write the new content to a file whose name "+
		"starts with \".\" or does not end in .yaml, .yml or .json (it is not read), then rename it to %s; to remove every plugin of "+
		"the file, write \"plugins: []\"", e.file, strings.Join(e.lost, ", "), e.file)
}

// guardReload decides whether next, a valid configuration just read, may
// replace current, the one in use, as far as changes in place go: it
// returns an *inPlaceChangeError to refuse it. It sets the base of every
// file of next.
func guardReload(current, next *Config) error {
	for i := range next.snapshot.files {
		f := &next.snapshot.files[i]
		old, ok := current.snapshot.file(f.path)
		if !ok || !f.stamp.sameFile(old.stamp) || f.explicitlyEmpty {
			continue // whole, or emptied on purpose: its own base
		}
		var lost []string
		if f.base, lost = judgeInPlace(old, f); len(lost) > 0 {
			return &inPlaceChangeError{file: f.path, lost: lost}
		}
	}
	return nil
}

// judgeInPlace judges f, read through the inode of old, which was in use:
// it returns f's base and the plugins of old that f, changed in place,
// would remove or change.
func judgeInPlace(old, f *fileSnapshot) (base []ConfiguredPlugin, lost []string) {
	switch {
	case bytes.Equal(f.data, old.data):
		// Nothing is lost, unless old is a file cut mid-write whose
		// plugins as last applied were kept at start (config_restore.go).
		return old.base, lostPlugins(old.plugins, f.plugins)
	case bytes.HasPrefix(f.data, old.data):
		return old.base, lostPlugins(old.base, f.plugins) // the write of old's content goes on
	default:
		return old.plugins, lostPlugins(old.plugins, f.plugins) // a new write over old's content
	}
}

// lostPlugins names the plugins of before that after does not list with
// the same configuration.
func lostPlugins(before, after []ConfiguredPlugin) []string {
	kept := map[string]*ConfiguredPlugin{}
	for i := range after {
		kept[after[i].Name] = &after[i]
	}
	var lost []string
	for i := range before {
		if p, ok := kept[before[i].Name]; !ok || !samePluginConfig(&p.PluginConfig, &before[i].PluginConfig) {
			lost = append(lost, before[i].Name)
		}
	}
	return lost
}
