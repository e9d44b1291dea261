// Package trust checks that a file the kubelet reads or runs is part of the
// node's trust root: owned by root and writable by nobody else. The pod
// admission configuration and Exec plugin binaries decide which pods run on
// the node, so anyone who can change them can change that decision.
package trust

import (
	"fmt"
	"os"
	"syscall"
)

// TrustedUID is the owner every checked file must have.
const TrustedUID = 0

// CheckFile returns an error naming path and the fault when path is not a
// regular file owned by TrustedUID, or is writable by its group or others.
// It follows symlinks: what counts is the file that will be read or run.
func CheckFile(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file (%s)", path, info.Mode().Type())
	}
	return checkOwnerAndMode(path, info)
}

// CheckDir is CheckFile for a directory.
func CheckDir(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s: not a directory", path)
	}
	return checkOwnerAndMode(path, info)
}

func checkOwnerAndMode(path string, info os.FileInfo) error {
	if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Uid != TrustedUID {
		return fmt.Errorf("%s: owned by uid %d, must be owned by root", path, st.Uid)
	}
	if perm := info.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%s: mode %#o is group or world writable", path, perm)
	}
	return nil
}
