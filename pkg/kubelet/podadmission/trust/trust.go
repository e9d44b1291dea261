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

// Package trust checks that a file the kubelet reads or runs is part of the
// node's trust root: it, and every directory on the way to it, is owned by
// root and writable by nobody else. The pod admission configuration, the
// Exec plugin binaries and the GRPC plugin sockets decide which pods run on
// the node, so anyone who can change them, or rename or replace any
// directory above them, can change that decision.
//
// The rule is sshd's StrictModes applied to the whole path: every directory
// from / down, including the directories reached through symlinks and the
// directories the symlinks sit in, must be owned by root and must not be
// writable by its group or others. A world-writable directory with the
// sticky bit (/tmp) is not trusted either: anyone may create names in it.
//
// An executable is more than its file: the kernel also runs a script's
// interpreters and a binary's dynamic loader, and the environment can make
// the loader or an interpreter load code from elsewhere. OpenExecutableIn
// (executable.go) and CheckEnv (env.go) check those the same way.
package trust

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// TrustedUID is the owner every checked file and directory must have.
const TrustedUID = 0

// maxSymlinks is how many symlinks a path may go through, as the kernel's
// limit (ELOOP after 40).
const maxSymlinks = 40

// CheckFile returns the resolved file when path is a trusted regular file:
// every directory on its path, through symlinks, and the file itself owned
// by TrustedUID and not writable by group or others. The error names path,
// the offending file or directory and its owner or mode.
func CheckFile(path string) (fs.FileInfo, error) {
	r, err := resolve(path)
	if err != nil {
		return nil, err
	}
	if !r.info.Mode().IsRegular() {
		return nil, r.fault(r.final, fmt.Sprintf("not a regular file (%s)", r.info.Mode().Type()))
	}
	return r.info, r.checkOwnerAndMode(r.final, r.info, TrustedUID)
}

// CheckDir is CheckFile for a directory.
func CheckDir(path string) error {
	return checkDir(path, TrustedUID)
}

// CheckSocketDir is CheckDir for the directory of a GRPC plugin's socket.
// The directory itself may also be owned by serverUID, the uid the plugin
// daemon is configured to run as, which must be able to create its socket
// there; every directory above it must be owned by root.
func CheckSocketDir(path string, serverUID uint32) error {
	return checkDir(path, serverUID)
}

// CheckWriterDir is CheckDir for a directory another trusted user writes,
// such as a node agent's status directory: the directory itself may also
// be owned by writerUID; every directory above it must be owned by root.
// What is in it was then written by root or writerUID.
func CheckWriterDir(path string, writerUID uint32) error {
	return checkDir(path, writerUID)
}

// CheckPath is CheckFile for a path that may name a regular file or a
// directory, such as an entry of a search path.
func CheckPath(path string) error {
	r, err := resolve(path)
	if err != nil {
		return err
	}
	if !r.info.Mode().IsRegular() && !r.info.IsDir() {
		return r.fault(r.final, fmt.Sprintf("neither a regular file nor a directory (%s)", r.info.Mode().Type()))
	}
	return r.checkOwnerAndMode(r.final, r.info, TrustedUID)
}

func checkDir(path string, ownerUID uint32) error {
	r, err := resolve(path)
	if err != nil {
		return err
	}
	if !r.info.IsDir() {
		return r.fault(r.final, "not a directory")
	}
	return r.checkOwnerAndMode(r.final, r.info, ownerUID)
}

// resolution is a path resolved to the file it names, with every directory
// on the way checked.
type resolution struct {
	// path is what the caller asked about, for error messages.
	path string
	// final is the resolved path and info its file (not yet checked).
	final string
	info  fs.FileInfo
}

// resolve walks path one component at a time, as the kernel does, following
// symlinks, and checks every directory it passes through on the way to the
// last component: the ones of path, those of every symlink's target, and
// so the ones that hold the symlinks. Directories on the way must be
// root's; the caller checks the last component.
func resolve(path string) (*resolution, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r := &resolution{path: path}
	current := "/"
	info, err := os.Lstat(current)
	if err != nil {
		return nil, r.pathError(err)
	}
	pending := splitPath(abs)
	if len(pending) == 0 {
		r.final, r.info = current, info
		return r, nil
	}
	if err := r.checkOwnerAndMode(current, info, TrustedUID); err != nil {
		return nil, err
	}
	links := 0
	for len(pending) > 0 {
		name := pending[0]
		pending = pending[1:]
		if name == ".." {
			current = filepath.Dir(current)
			continue
		}
		next := filepath.Join(current, name)
		info, err := os.Lstat(next)
		if err != nil {
			return nil, r.pathError(err)
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			links++
			if links > maxSymlinks {
				return nil, r.pathError(syscall.ELOOP)
			}
			target, err := os.Readlink(next)
			if err != nil {
				return nil, r.pathError(err)
			}
			if filepath.IsAbs(target) {
				current = "/"
			}
			pending = append(splitPath(target), pending...)
			continue
		}
		if len(pending) == 0 {
			r.final, r.info = next, info
			return r, nil
		}
		if !info.IsDir() {
			return nil, r.pathError(syscall.ENOTDIR)
		}
		if err := r.checkOwnerAndMode(next, info, TrustedUID); err != nil {
			return nil, err
		}
		current = next
	}
	// The path ended in a symlink to a directory already walked, or in "..".
	info, err = os.Lstat(current)
	if err != nil {
		return nil, r.pathError(err)
	}
	r.final, r.info = current, info
	return r, nil
}

// splitPath returns the non-empty components of path, "." dropped.
func splitPath(path string) []string {
	var parts []string
	for _, part := range strings.Split(path, "/") {
		if part != "" && part != "." {
			parts = append(parts, part)
		}
	}
	return parts
}

// checkOwnerAndMode fails unless the file at offender, whose info is given,
// is owned by TrustedUID or ownerUID and not writable by group or others.
func (r *resolution) checkOwnerAndMode(offender string, info fs.FileInfo, ownerUID uint32) error {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return r.fault(offender, "cannot read its owner")
	}
	if st.Uid != TrustedUID && st.Uid != ownerUID {
		if ownerUID != TrustedUID {
			return r.fault(offender, fmt.Sprintf("owned by uid %d, must be owned by root or uid %d", st.Uid, ownerUID))
		}
		return r.fault(offender, fmt.Sprintf("owned by uid %d, must be owned by root", st.Uid))
	}
	if perm := info.Mode().Perm(); perm&0o022 != 0 {
		return r.fault(offender, fmt.Sprintf("mode %#o is group or world writable", perm|sticky(info)))
	}
	return nil
}

// sticky returns the sticky bit of info as a permission bit, so that a mode
// like /tmp's is shown as 01777.
func sticky(info fs.FileInfo) fs.FileMode {
	if info.Mode()&fs.ModeSticky != 0 {
		return 0o1000
	}
	return 0
}

// fault is the error for a check that offender failed, in terms of path.
func (r *resolution) fault(offender, problem string) error {
	switch {
	case offender == r.path || offender == filepath.Clean(r.path):
		return fmt.Errorf("%s: %s", r.path, problem)
	case r.final == offender:
		return fmt.Errorf("%s: resolves to %s: %s", r.path, offender, problem)
	}
	return fmt.Errorf("%s: on its path, %s: %s", r.path, offender, problem)
}

// pathError reports a failed lookup under the path asked about, keeping the
// cause for errors.Is (os.ErrNotExist).
func (r *resolution) pathError(err error) error {
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		err = pathErr.Err
	}
	return &fs.PathError{Op: "stat", Path: r.path, Err: err}
}
