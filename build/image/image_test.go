package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const epoch = 1764592505

// rootfs writes a kubelet and a plugin with their modes under a new dir.
func rootfs(t *testing.T, kubelet string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]os.FileMode{
		"usr/local/bin/kubelet":                    0o755,
		"usr/local/libexec/pod-admission/plugin":   0o755,
		"usr/local/share/podadmission/sample.yaml": 0o644,
	}
	for path, mode := range files {
		p := filepath.Join(dir, path)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte(kubelet+path), mode))
		require.NoError(t, os.Chmod(p, mode))
	}
	require.NoError(t, os.Symlink("kubelet", filepath.Join(dir, "usr/local/bin/kubelet-link")))
	return dir
}

func buildImage(t *testing.T, o options) (string, options) {
	t.Helper()
	out := t.TempDir()
	o.ociLayout, o.dockerArchive = filepath.Join(out, "oci"), filepath.Join(out, "image.tar")
	digest, err := run(o)
	require.NoError(t, err)
	return digest, o
}

func TestImageIsReproducible(t *testing.T) {
	o := options{rootfs: rootfs(t, "kubelet v1"), ref: "podadmission/kubelet:v1.37.2_podadmission.2", epoch: epoch, entrypoint: "/usr/local/bin/kubelet"}
	first, built := buildImage(t, o)
	// The same tree elsewhere, with other times: the same digest.
	o.rootfs = rootfs(t, "kubelet v1")
	second, _ := buildImage(t, o)
	assert.Equal(t, first, second, "two builds of the same tree")

	o.rootfs = rootfs(t, "kubelet v2")
	other, _ := buildImage(t, o)
	assert.NotEqual(t, first, other, "another kubelet must change the digest")

	// Both outputs hold the same image.
	p, err := layout.FromPath(built.ociLayout)
	require.NoError(t, err)
	index, err := p.ImageIndex()
	require.NoError(t, err)
	manifest, err := index.IndexManifest()
	require.NoError(t, err)
	require.Len(t, manifest.Manifests, 1)
	assert.Equal(t, first, manifest.Manifests[0].Digest.String())
	assert.Equal(t, "docker.io/podadmission/kubelet:v1.37.2_podadmission.2", manifest.Manifests[0].Annotations["io.containerd.image.name"])
	tag, err := name.NewTag(o.ref)
	require.NoError(t, err)
	img, err := tarball.ImageFromPath(built.dockerArchive, &tag)
	require.NoError(t, err)
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, []string{"/usr/local/bin/kubelet"}, cfg.Config.Entrypoint)
	assert.Equal(t, "amd64", cfg.Architecture)
	assert.Equal(t, int64(epoch), cfg.Created.Unix())
}

func TestLayerFilesAreRootOwnedWithTheirModes(t *testing.T) {
	data, err := dirTar(rootfs(t, "kubelet"), time.Unix(epoch, 0))
	require.NoError(t, err)
	tr := tar.NewReader(bytes.NewReader(data))
	got := map[string]string{}
	var names []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		names = append(names, hdr.Name)
		assert.Zero(t, hdr.Uid, hdr.Name)
		assert.Zero(t, hdr.Gid, hdr.Name)
		assert.Equal(t, int64(epoch), hdr.ModTime.Unix(), hdr.Name)
		got[hdr.Name] = fmt.Sprintf("%c %o %s", hdr.Typeflag, hdr.Mode, hdr.Linkname)
	}
	assert.IsIncreasing(t, names, "entries in lexical order")
	assert.Equal(t, "0 755 ", got["usr/local/bin/kubelet"])
	assert.Equal(t, "0 644 ", got["usr/local/share/podadmission/sample.yaml"])
	assert.Equal(t, "2 777 kubelet", got["usr/local/bin/kubelet-link"])
	assert.Equal(t, "5 700 ", got["usr/local/"])
}

func TestImageOnABaseKeepsItsLayersAndEnvironment(t *testing.T) {
	// A base image: one layer, its own PATH, an entrypoint of its own.
	baseDigest, base := buildImage(t, options{rootfs: rootfs(t, "base"), ref: "example.com/base:1", epoch: epoch, entrypoint: "/bin/base",
		labels: labelList{"base": "yes"}})
	require.NotEmpty(t, baseDigest)
	digest, built := buildImage(t, options{rootfs: rootfs(t, "kubelet"), ref: "podadmission/kubelet:v1", epoch: epoch,
		entrypoint: "/usr/local/bin/kubelet", base: base.dockerArchive, labels: labelList{"version": "v1"}})
	tag, err := name.NewTag("podadmission/kubelet:v1")
	require.NoError(t, err)
	img, err := tarball.ImageFromPath(built.dockerArchive, &tag)
	require.NoError(t, err)
	d, err := img.Digest()
	require.NoError(t, err)
	assert.Equal(t, digest, d.String())
	layers, err := img.Layers()
	require.NoError(t, err)
	assert.Len(t, layers, 2, "the base's layer and ours")
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, []string{"/usr/local/bin/kubelet"}, cfg.Config.Entrypoint)
	assert.Equal(t, map[string]string{"base": "yes", "version": "v1"}, cfg.Config.Labels)
	assert.Len(t, cfg.History, 2)
}

func TestBadInput(t *testing.T) {
	dir := rootfs(t, "kubelet")
	out := filepath.Join(t.TempDir(), "image.tar")
	for what, o := range map[string]options{
		"-rootfs, -ref and -epoch are required":    {ref: "a/b:c", epoch: epoch, dockerArchive: out},
		"nothing to write":                         {rootfs: dir, ref: "a/b:c", epoch: epoch},
		`-ref "a/b"`:                               {rootfs: dir, ref: "a/b", epoch: epoch, dockerArchive: out},
		"-base: stat /nonexistent":                 {rootfs: dir, ref: "a/b:c", epoch: epoch, dockerArchive: out, base: "/nonexistent"},
		"not a `docker save` archive of one image": {rootfs: dir, ref: "a/b:c", epoch: epoch, dockerArchive: out, base: filepath.Join(dir, "usr/local/share/podadmission/sample.yaml")},
		"-rootfs " + filepath.Join(dir, "usr/local/bin/kubelet") + ": not a directory": {rootfs: filepath.Join(dir, "usr/local/bin/kubelet"), ref: "a/b:c", epoch: epoch, dockerArchive: out},
	} {
		_, err := run(o)
		if assert.Error(t, err, what) {
			assert.Contains(t, err.Error(), what)
		}
	}
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	_, err := run(options{rootfs: dir, ref: "a/b:c", epoch: epoch, dockerArchive: out})
	assert.ErrorContains(t, err, fifo+": a p---------, not a directory, file or symbolic link")
}
