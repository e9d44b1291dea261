//go:build e2e_node

package framework

import (
	"os"
	"path/filepath"
)

// writeFileAtomically writes path through a temporary file next to its
// directory (same filesystem, but outside the directory a watcher such as
// the kubelet's static pod source or plugin config loader reads) and a
// rename, so the watcher never reads half a file.
func writeFileAtomically(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(filepath.Dir(path)), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
