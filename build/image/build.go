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
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

type options struct {
	rootfs, ref, base, user, workdir, arch string
	ociLayout, ociArchive, dockerArchive   string
	epoch                                  int64
	entrypoint, cmd                        argList
	env                                    envList
	labels                                 labelList
}

// run builds the image and writes what was asked; it returns the image's
// manifest digest.
func run(o options) (string, error) {
	if o.rootfs == "" || o.ref == "" || o.epoch < 0 {
		return "", fmt.Errorf("-rootfs, -ref and -epoch are required")
	}
	if o.ociLayout == "" && o.ociArchive == "" && o.dockerArchive == "" {
		return "", fmt.Errorf("nothing to write: give -oci-layout, -oci-archive or -docker-archive")
	}
	if o.arch == "" {
		o.arch = "amd64"
	}
	tag, err := name.NewTag(o.ref)
	if err != nil {
		return "", fmt.Errorf("-ref %q: %w", o.ref, err)
	}
	if !strings.HasSuffix(o.ref, ":"+tag.TagStr()) {
		return "", fmt.Errorf("-ref %q: name the tag (REPOSITORY:TAG)", o.ref)
	}
	img, err := build(o)
	if err != nil {
		return "", err
	}
	if o.ociLayout != "" {
		if err := writeLayout(o.ociLayout, tag, img); err != nil {
			return "", err
		}
	}
	if o.ociArchive != "" {
		if err := writeLayoutArchive(o.ociArchive, tag, img, o.epoch); err != nil {
			return "", err
		}
	}
	if o.dockerArchive != "" {
		if err := tarball.WriteToFile(o.dockerArchive, tag, img); err != nil {
			return "", fmt.Errorf("writing %s: %w", o.dockerArchive, err)
		}
	}
	digest, err := img.Digest()
	if err != nil {
		return "", err
	}
	return digest.String(), nil
}

// build: the base (or no base), the rootfs as one more layer, and the
// configuration: entrypoint, command, environment, user, working directory,
// labels, linux/-arch, created at the epoch.
func build(o options) (v1.Image, error) {
	created := v1.Time{Time: time.Unix(o.epoch, 0).UTC()}
	base, err := baseImage(o.base)
	if err != nil {
		return nil, err
	}
	manifestType, err := base.MediaType()
	if err != nil {
		return nil, err
	}
	layerType := types.OCILayer
	if manifestType == types.DockerManifestSchema2 {
		layerType = types.DockerLayer
	}
	layer, err := dirLayer(o.rootfs, o.epoch, layerType)
	if err != nil {
		return nil, err
	}
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:     layer,
		MediaType: layerType,
		History: v1.History{
			Created:   created,
			CreatedBy: "podadmission build/image",
		},
	})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS = o.arch, "linux"
	cfg.Created = created
	if len(o.entrypoint) > 0 {
		// A base's command would be arguments to another program.
		cfg.Config.Entrypoint, cfg.Config.Cmd = o.entrypoint, nil
	}
	if len(o.cmd) > 0 {
		cfg.Config.Cmd = o.cmd
	}
	if o.base == "" {
		cfg.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	}
	cfg.Config.Env = setEnv(cfg.Config.Env, o.env)
	if o.user != "" {
		cfg.Config.User = o.user
	}
	if o.workdir != "" {
		cfg.Config.WorkingDir = o.workdir
	}
	if len(o.labels) > 0 && cfg.Config.Labels == nil {
		cfg.Config.Labels = map[string]string{}
	}
	for k, v := range o.labels {
		cfg.Config.Labels[k] = v
	}
	return mutate.ConfigFile(img, cfg)
}

// setEnv: env with each NAME=VALUE of set in place of that NAME's entry,
// or added after them.
func setEnv(env, set []string) []string {
	out := append([]string(nil), env...)
	for _, kv := range set {
		name, _, _ := strings.Cut(kv, "=")
		i := slices.IndexFunc(out, func(e string) bool { return strings.HasPrefix(e, name+"=") })
		if i >= 0 {
			out[i] = kv
		} else {
			out = append(out, kv)
		}
	}
	return out
}

// baseImage: an empty OCI image, or the one image of a `docker save`
// archive.
func baseImage(path string) (v1.Image, error) {
	if path == "" {
		return mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON), nil
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("-base: %w", err)
	}
	img, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		return nil, fmt.Errorf("-base %s: not a `docker save` archive of one image: %w", path, err)
	}
	if _, err := img.Manifest(); err != nil {
		return nil, fmt.Errorf("-base %s: %w", path, err)
	}
	return img, nil
}

// writeLayout writes an OCI image layout holding the image, named by the
// annotations containerd (io.containerd.image.name) and the OCI spec
// (org.opencontainers.image.ref.name) read on import.
func writeLayout(dir string, tag name.Tag, img v1.Image) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("writing %s: %w", dir, err)
	}
	// containerd names Docker Hub images docker.io/..., not index.docker.io.
	registry := tag.RegistryStr()
	if registry == name.DefaultRegistry {
		registry = "docker.io"
	}
	return p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"io.containerd.image.name":          registry + "/" + tag.RepositoryStr() + ":" + tag.TagStr(),
		"org.opencontainers.image.ref.name": tag.TagStr(),
	}))
}

// writeLayoutArchive writes the OCI image layout of writeLayout as a
// tarball at path: its files in lexical order, owned by root, directories
// 0755 and files 0644 whatever the umask, every time the epoch.
func writeLayoutArchive(path string, tag name.Tag, img v1.Image, epoch int64) error {
	dir, err := os.MkdirTemp(filepath.Dir(path), ".oci-layout-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := writeLayout(filepath.Join(dir, "oci"), tag, img); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	err = writeTar(f, filepath.Join(dir, "oci"), time.Unix(epoch, 0).UTC(), layoutMode)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}
