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
	"strings"

	"golang.org/x/sys/unix"
)

// configMapDataLink is the symlink of a ConfigMap or Secret volume that the
// kubelet's atomic writer swaps to a new directory of every file at once.
const configMapDataLink = "..data"

// swapLink is a symlink through which the whole configuration can be
// swapped at once, the way atomic writers (a ConfigMap volume's ..data,
// a "current" link to versioned directories) do it: write a new directory
// completely, then rename a new symlink to it over the old one. Such a
// swap is the one change that is whole the moment it is seen, and it is
// applied without waiting for the configuration to settle.
type swapLink struct {
	// path is the symlink and target the directory or file it resolves to.
	path, target string
	// ctime is when the symlink was created or renamed into place.
	ctime int64
}

// swapLinkOf returns the swap link of the configuration at path, a
// directory (isDir) or a file: the ..data link of the directory that holds
// the files, or else path itself when it is a symlink; nil if neither.
func swapLinkOf(path string, isDir bool) *swapLink {
	dir := path
	if !isDir {
		dir = filepath.Dir(path)
	}
	for _, link := range []string{filepath.Join(dir, configMapDataLink), path} {
		var st unix.Stat_t
		if err := unix.Lstat(link, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
			continue
		}
		target, err := filepath.EvalSymlinks(link)
		if err != nil {
			return nil
		}
		return &swapLink{path: link, target: target, ctime: st.Ctim.Nano()}
	}
	return nil
}

// swappedInWhole says whether next, read after current, was swapped in
// whole: its swap link now leads somewhere else than when current was
// read, every file of next is reached through it, and nothing of what it
// leads to changed after the link was put in place (a file written into
// the new directory after the swap is not whole by construction). The
// change times come from the same clock, coarse as it may be, and a file
// written before the link was made has one no later than the link's.
func swappedInWhole(current, next *configSnapshot) bool {
	before, after := current.swap, next.swap
	if before == nil || after == nil || before.path != after.path || before.target == after.target {
		return false
	}
	target, err := stampPath(after.target)
	if err != nil || target.ctime > after.ctime {
		return false
	}
	for i := range next.files {
		f := &next.files[i]
		resolved, err := filepath.EvalSymlinks(f.path)
		if err != nil || resolved != after.target && !strings.HasPrefix(resolved, after.target+string(os.PathSeparator)) ||
			f.stamp.ctime > after.ctime {
			return false
		}
	}
	return true
}
