// Command ociimage packs a root file system directory into a one-layer OCI
// image layout tarball that `ctr images import` reads, so that the images
// upstream's node e2e suite runs can be built from source on a machine that
// reaches no image registry and runs no image build daemon.
//
//	ociimage -rootfs DIR -ref registry.k8s.io/e2e-test-images/agnhost:2.66.1 \
//	    -entrypoint /agnhost -cmd pause -out agnhost.tar
//
// Every file is owned by root with its mode, symlinks stay symlinks and
// every time stamp is the epoch, so the same directory gives the same
// digests. -entrypoint and -cmd may be repeated, one argument each.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

type options struct {
	rootfs, ref, out, user, workdir string
	entrypoint, cmd, env            stringList
}

func main() {
	var o options
	flag.StringVar(&o.rootfs, "rootfs", "", "directory to pack as the image's file system")
	flag.StringVar(&o.ref, "ref", "", "full image reference, e.g. registry.k8s.io/pause:3.10.2")
	flag.StringVar(&o.out, "out", "", "OCI image layout tarball to write")
	flag.StringVar(&o.user, "user", "", "the image's default user (uid[:gid])")
	flag.StringVar(&o.workdir, "workdir", "", "the image's working directory")
	flag.Var(&o.entrypoint, "entrypoint", "one argument of the entrypoint (repeat)")
	flag.Var(&o.cmd, "cmd", "one argument of the default command (repeat)")
	flag.Var(&o.env, "env", "NAME=value of the image's environment (repeat)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "ociimage: %v\n", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.rootfs == "" || o.ref == "" || o.out == "" {
		return fmt.Errorf("-rootfs, -ref and -out are required")
	}
	layer, err := tarDirectory(o.rootfs)
	if err != nil {
		return fmt.Errorf("packing %s: %w", o.rootfs, err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(layer); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}

	env := append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, o.env...)
	imageConfig := map[string]any{"Env": env}
	for key, value := range map[string]any{"Entrypoint": []string(o.entrypoint), "Cmd": []string(o.cmd), "User": o.user, "WorkingDir": o.workdir} {
		switch v := value.(type) {
		case []string:
			if len(v) > 0 {
				imageConfig[key] = v
			}
		case string:
			if v != "" {
				imageConfig[key] = v
			}
		}
	}
	config, err := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"config":       imageConfig,
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{digest(layer)}},
	})
	if err != nil {
		return err
	}
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        descriptor("application/vnd.oci.image.config.v1+json", config, nil),
		"layers":        []any{descriptor("application/vnd.oci.image.layer.v1.tar+gzip", gz.Bytes(), nil)},
	})
	if err != nil {
		return err
	}
	index, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"manifests": []any{descriptor("application/vnd.oci.image.manifest.v1+json", manifest, map[string]string{
			// containerd's importer names the image after this.
			"io.containerd.image.name": o.ref,
		})},
	})
	if err != nil {
		return err
	}

	var archive bytes.Buffer
	tw := tar.NewWriter(&archive)
	files := []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", index},
		{blobPath(gz.Bytes()), gz.Bytes()},
		{blobPath(config), config},
		{blobPath(manifest), manifest},
	}
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755, ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return os.WriteFile(o.out, archive.Bytes(), 0o644)
}

// tarDirectory is the layer: root's files, in lexical order, at the epoch.
func tarDirectory(root string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == root {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: int64(info.Mode().Perm()), ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if info.Mode()&fs.ModeSticky != 0 {
			hdr.Mode |= 0o1000
		}
		if info.Mode()&fs.ModeSetuid != 0 {
			hdr.Mode |= 0o4000
		}
		switch {
		case d.IsDir():
			hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, target
		case info.Mode().IsRegular():
			hdr.Typeflag, hdr.Size = tar.TypeReg, info.Size()
		default:
			return fmt.Errorf("%s: only directories, regular files and symlinks can be packed", path)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if hdr.Typeflag == tar.TypeReg {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			_, err = tw.Write(data)
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func blobPath(b []byte) string {
	return "blobs/sha256/" + strings.TrimPrefix(digest(b), "sha256:")
}

func descriptor(mediaType string, b []byte, annotations map[string]string) map[string]any {
	d := map[string]any{"mediaType": mediaType, "digest": digest(b), "size": len(b)}
	if annotations != nil {
		d["annotations"] = annotations
	}
	return d
}
