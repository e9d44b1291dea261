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
	"path/filepath"
	"time"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust"
)

// racyWindow is how recent a file's change time may be when it is read for
// its stamp to be trusted later. File system timestamps are coarse (a
// jiffy, or a second on some file systems), so a write right after the
// read can leave the stamp as it was; such a file is read again at the
// next reload whatever its stamp says. Git treats its index the same way.
const racyWindow = 2 * time.Second

// configSnapshot is what the configuration files were when a Config was
// read: enough to tell, with a stat of each, that nothing changed since
// (the periodic resync then costs no read, hash or parse), and to compare
// the files in effect with a newer read of them (reload_guard.go).
type configSnapshot struct {
	// path is the configured file or directory.
	path string
	// dir is the stamp of the directory, when path is one: creating,
	// removing or renaming a file in it changes its stamp.
	dir *fileStamp
	// files are the configuration files read, in order.
	files []fileSnapshot
	// takenAt is when the read started, by the wall clock file system
	// timestamps use.
	takenAt time.Time

	// swap is the symlink an atomic writer swaps the configuration
	// through, if there is one (config_swap.go).
	swap *swapLink
}

// fileSnapshot is one configuration file as read.
type fileSnapshot struct {
	path  string
	stamp fileStamp
	// data is the file's content: a few hundred bytes for a few plugins,
	// kept to tell a write that goes on from one that starts over.
	data []byte
	// plugins are the plugins the file lists.
	plugins []ConfiguredPlugin
	// explicitlyEmpty: the file lists no plugins, on purpose ("plugins: []").
	explicitlyEmpty bool
	// base is what a change of the file in place may not remove or change
	// (reload_guard.go): the plugins the file listed before the write that
	// made this content. Set when the snapshot is put in use.
	base []ConfiguredPlugin
}

// unchanged says, from one stat of the directory and of each file, that
// the configuration at s.path is still exactly what was read: no file
// added, removed, replaced or written, and the directory still trusted.
// It errs on the side of false: any doubt means a full read.
func (s *configSnapshot) unchanged() bool {
	if s.path == "" {
		return false
	}
	if s.dir != nil {
		stamp, err := stampPath(s.path)
		if err != nil || stamp != *s.dir || s.racy(stamp) {
			return false
		}
	}
	dir := s.path
	if s.dir == nil {
		dir = filepath.Dir(s.path)
	}
	// A directory on the way that turned untrusted is reported by a full
	// read, which fails.
	if trust.CheckDir(dir) != nil {
		return false
	}
	for i := range s.files {
		stamp, err := stampPath(s.files[i].path)
		if err != nil || stamp != s.files[i].stamp || s.racy(stamp) {
			return false
		}
	}
	return true
}

// racy says whether stamp changed too close to the read for a later stat to
// show a change made right after it.
func (s *configSnapshot) racy(stamp fileStamp) bool {
	return stamp.ctime > s.takenAt.Add(-racyWindow).UnixNano()
}

// sameState says whether o found the directory and every file exactly as
// s did: the same names, inodes, sizes, modes and change times.
func (s *configSnapshot) sameState(o *configSnapshot) bool {
	if (s.dir == nil) != (o.dir == nil) || s.dir != nil && *s.dir != *o.dir || len(s.files) != len(o.files) {
		return false
	}
	for i := range s.files {
		if s.files[i].path != o.files[i].path || s.files[i].stamp != o.files[i].stamp {
			return false
		}
	}
	return true
}

// file returns the snapshot of the file at path, if it was read.
func (s *configSnapshot) file(path string) (*fileSnapshot, bool) {
	for i := range s.files {
		if s.files[i].path == path {
			return &s.files[i], true
		}
	}
	return nil, false
}
