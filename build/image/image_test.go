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
	o := options{rootfs: rootfs(t, "kubelet v1"), ref: "podadmission/kubelet:v1.37.2_podadmission.2", epoch: epoch, entrypoint: argList{"/usr/local/bin/kubelet"}}
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
	dir := rootfs(t, "kubelet")
	// A setuid binary (upstream's nonewprivs image) and a sticky /tmp.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "usr/local/bin/nnp"), []byte("nnp"), 0o755))
	require.NoError(t, os.Chmod(filepath.Join(dir, "usr/local/bin/nnp"), 0o4755|os.ModeSetuid))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "tmp"), 0o777))
	require.NoError(t, os.Chmod(filepath.Join(dir, "tmp"), 0o777|os.ModeSticky))
	var data bytes.Buffer
	require.NoError(t, writeTar(&data, dir, time.Unix(epoch, 0), rootfsMode))
	tr := tar.NewReader(&data)
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
	assert.Equal(t, "0 4755 ", got["usr/local/bin/nnp"], "the setuid bit is kept")
	assert.Equal(t, "5 1777 ", got["tmp/"], "the sticky bit is kept")
}

func TestImageOnABaseKeepsItsLayersAndEnvironment(t *testing.T) {
	// A base image: one layer, its own PATH, an entrypoint of its own.
	baseDigest, base := buildImage(t, options{rootfs: rootfs(t, "base"), ref: "example.com/base:1", epoch: epoch, entrypoint: argList{"/bin/base"},
		labels: labelList{"base": "yes"}})
	require.NotEmpty(t, baseDigest)
	digest, built := buildImage(t, options{rootfs: rootfs(t, "kubelet"), ref: "podadmission/kubelet:v1", epoch: epoch,
		entrypoint: argList{"/usr/local/bin/kubelet"}, base: base.dockerArchive, labels: labelList{"version": "v1"}})
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
	for _, c := range []struct {
		want string
		o    options
	}{
		{"-rootfs, -ref and -epoch are required", options{ref: "a/b:c", epoch: epoch, dockerArchive: out}},
		{"-rootfs, -ref and -epoch are required", options{rootfs: dir, ref: "a/b:c", epoch: -1, dockerArchive: out}},
		{"nothing to write", options{rootfs: dir, ref: "a/b:c", epoch: epoch}},
		{`-ref "a/b"`, options{rootfs: dir, ref: "a/b", epoch: epoch, dockerArchive: out}},
		{"-base: stat /nonexistent", options{rootfs: dir, ref: "a/b:c", epoch: epoch, dockerArchive: out, base: "/nonexistent"}},
		{"not a `docker save` archive of one image", options{rootfs: dir, ref: "a/b:c", epoch: epoch, dockerArchive: out, base: filepath.Join(dir, "usr/local/share/podadmission/sample.yaml")}},
		{"-rootfs: " + filepath.Join(dir, "usr/local/bin/kubelet") + ": not a directory", options{rootfs: filepath.Join(dir, "usr/local/bin/kubelet"), ref: "a/b:c", epoch: epoch, dockerArchive: out}},
	} {
		_, err := run(c.o)
		if assert.Error(t, err, c.want) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	_, err := run(options{rootfs: dir, ref: "a/b:c", epoch: epoch, dockerArchive: out})
	assert.ErrorContains(t, err, fifo+": a p---------, not a directory, file or symbolic link")
}

// The images upstream's node e2e suite runs (test/upstream-e2e/build.sh):
// entrypoint and command of several arguments, a user, a working directory,
// the environment, the host's architecture.
func TestImageConfiguration(t *testing.T) {
	o := options{rootfs: rootfs(t, "agnhost"), ref: "registry.k8s.io/e2e-test-images/agnhost:2.66.1", epoch: 0,
		entrypoint: argList{"/sampledeviceplugin", "-alsologtostderr"}, cmd: argList{"pause", "--now"},
		env: envList{"PATH=/bin", "LANG=C"}, user: "65535:65535", workdir: "/uploads", arch: "arm64"}
	_, built := buildImage(t, o)
	tag, err := name.NewTag(o.ref)
	require.NoError(t, err)
	img, err := tarball.ImageFromPath(built.dockerArchive, &tag)
	require.NoError(t, err)
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, []string{"/sampledeviceplugin", "-alsologtostderr"}, cfg.Config.Entrypoint)
	assert.Equal(t, []string{"pause", "--now"}, cfg.Config.Cmd)
	assert.Equal(t, []string{"PATH=/bin", "LANG=C"}, cfg.Config.Env, "-env PATH replaces the default PATH")
	assert.Equal(t, "65535:65535", cfg.Config.User)
	assert.Equal(t, "/uploads", cfg.Config.WorkingDir)
	assert.Equal(t, "arm64", cfg.Architecture)
	assert.Equal(t, "linux", cfg.OS)

	// No -entrypoint, no -cmd: neither is set (the busybox image's sh is a -cmd).
	o = options{rootfs: rootfs(t, "busybox"), ref: "registry.k8s.io/e2e-test-images/busybox:1.37.0-1", epoch: 0, cmd: argList{"sh"}}
	_, built = buildImage(t, o)
	tag, err = name.NewTag(o.ref)
	require.NoError(t, err)
	img, err = tarball.ImageFromPath(built.dockerArchive, &tag)
	require.NoError(t, err)
	cfg, err = img.ConfigFile()
	require.NoError(t, err)
	assert.Empty(t, cfg.Config.Entrypoint)
	assert.Equal(t, []string{"sh"}, cfg.Config.Cmd)
	assert.Equal(t, "amd64", cfg.Architecture, "the default architecture")
}

// The OCI layout tarball: what `ctr images import` reads, named for
// containerd by its full reference, the same bytes whatever the umask.
func TestLayoutArchive(t *testing.T) {
	dir := rootfs(t, "pause")
	write := func(umask int) (string, string) {
		old := syscall.Umask(umask)
		defer syscall.Umask(old)
		out := filepath.Join(t.TempDir(), "pause.oci.tar")
		digest, err := run(options{rootfs: dir, ref: "registry.k8s.io/pause:3.10.2", epoch: epoch, entrypoint: argList{"/pause"}, ociArchive: out})
		require.NoError(t, err)
		return digest, out
	}
	digest, archive := write(0o022)
	digest2, archive2 := write(0o077)
	assert.Equal(t, digest, digest2)
	a, err := os.ReadFile(archive)
	require.NoError(t, err)
	b, err := os.ReadFile(archive2)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(a, b), "the layout tarball written under umask 022 and 077 differs")
	entries, err := os.ReadDir(filepath.Dir(archive))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "nothing but the archive is left beside it")

	// Its entries: sorted, root-owned, 0755/0644, at the epoch; unpacked,
	// it is a layout holding the image under containerd's name for it.
	unpacked := t.TempDir()
	tr := tar.NewReader(bytes.NewReader(a))
	var names []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		names = append(names, hdr.Name)
		assert.Zero(t, hdr.Uid, hdr.Name)
		assert.Equal(t, int64(epoch), hdr.ModTime.Unix(), hdr.Name)
		p := filepath.Join(unpacked, hdr.Name)
		if hdr.Typeflag == tar.TypeDir {
			assert.Equal(t, int64(0o755), hdr.Mode, hdr.Name)
			require.NoError(t, os.MkdirAll(p, 0o755))
			continue
		}
		assert.Equal(t, int64(0o644), hdr.Mode, hdr.Name)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	assert.IsIncreasing(t, names)
	assert.Contains(t, names, "index.json")
	assert.Contains(t, names, "oci-layout")
	p, err := layout.FromPath(unpacked)
	require.NoError(t, err)
	index, err := p.ImageIndex()
	require.NoError(t, err)
	manifest, err := index.IndexManifest()
	require.NoError(t, err)
	require.Len(t, manifest.Manifests, 1)
	assert.Equal(t, digest, manifest.Manifests[0].Digest.String())
	assert.Equal(t, "registry.k8s.io/pause:3.10.2", manifest.Manifests[0].Annotations["io.containerd.image.name"])
	img, err := p.Image(manifest.Manifests[0].Digest)
	require.NoError(t, err)
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, []string{"/pause"}, cfg.Config.Entrypoint)
}

func TestBadFlags(t *testing.T) {
	var env envList
	assert.ErrorContains(t, env.Set("NOVALUE"), `-env "NOVALUE": want NAME=VALUE`)
	assert.ErrorContains(t, env.Set("=x"), `-env "=x": want NAME=VALUE`)
	var labels labelList
	assert.ErrorContains(t, labels.Set("novalue"), `-label "novalue": want KEY=VALUE`)
	require.NoError(t, labels.Set("a=b=c"))
	assert.Equal(t, labelList{"a": "b=c"}, labels)
}
