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

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// dirLayer is the layer of DIR's tree: directories, regular files and
// symbolic links (anything else is an error), owned by root, with their
// modes (rootfsMode) and every time the epoch, in lexical order.
func dirLayer(dir string, epoch int64, mediaType types.MediaType) (v1.Layer, error) {
	var buf bytes.Buffer
	if err := writeTar(&buf, dir, time.Unix(epoch, 0).UTC(), rootfsMode); err != nil {
		return nil, fmt.Errorf("-rootfs: %w", err)
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(mediaType), tarball.WithCompressionLevel(gzip.DefaultCompression))
}

// rootfsMode is a file's mode in an image layer: its permission bits and
// its setuid, setgid and sticky bits (a setuid binary the image runs, a
// world-writable /tmp).
func rootfsMode(m fs.FileMode) int64 {
	mode := int64(m.Perm())
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	return mode
}

// layoutMode is a file's mode in an OCI layout tarball: 0755 for a
// directory, 0644 for a file, whatever the umask it was written with.
func layoutMode(m fs.FileMode) int64 {
	if m.IsDir() {
		return 0o755
	}
	return 0o644
}

// writeTar writes DIR's tree to w as a tar archive: directories, regular
// files and symbolic links, owned by root, with modeOf's mode and mtime, in
// lexical order.
func writeTar(w io.Writer, dir string, mtime time.Time, modeOf func(fs.FileMode) int64) error {
	info, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s: not a directory", dir)
	}
	tw := tar.NewWriter(w)
	// WalkDir visits the entries of each directory in lexical order.
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr := &tar.Header{
			Name:    filepath.ToSlash(rel),
			Mode:    modeOf(info.Mode()),
			ModTime: mtime,
		}
		switch {
		case info.Mode().IsDir():
			hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
		case info.Mode().IsRegular():
			hdr.Typeflag, hdr.Size = tar.TypeReg, info.Size()
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, target
		default:
			return fmt.Errorf("%s: a %s, not a directory, file or symbolic link", path, info.Mode().Type())
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}
