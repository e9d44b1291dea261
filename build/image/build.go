package main

import (
	"fmt"
	"os"
	"sort"
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

type labelList map[string]string

func (l *labelList) String() string {
	keys := make([]string, 0, len(*l))
	for k, v := range *l {
		keys = append(keys, k+"="+v)
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

func (l *labelList) Set(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return fmt.Errorf("-label %q: want KEY=VALUE", kv)
	}
	if *l == nil {
		*l = labelList{}
	}
	(*l)[k] = v
	return nil
}

type options struct {
	rootfs, ref, base, entrypoint string
	ociLayout, dockerArchive      string
	epoch                         int64
	labels                        labelList
}

// run builds the image and writes what was asked; it returns the image's
// manifest digest.
func run(o options) (string, error) {
	if o.rootfs == "" || o.ref == "" || o.epoch < 0 {
		return "", fmt.Errorf("-rootfs, -ref and -epoch are required")
	}
	if o.ociLayout == "" && o.dockerArchive == "" {
		return "", fmt.Errorf("nothing to write: give -oci-layout, -docker-archive or both")
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
// configuration: entrypoint, labels, linux/amd64, created at the epoch.
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
			CreatedBy: "podadmission build/image: the drop-in kubelet, podadmctl and the plugins",
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
	cfg.Architecture, cfg.OS = "amd64", "linux"
	cfg.Created = created
	cfg.Config.Entrypoint = []string{o.entrypoint}
	cfg.Config.Cmd = nil
	if o.base == "" {
		cfg.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	}
	if len(o.labels) > 0 && cfg.Config.Labels == nil {
		cfg.Config.Labels = map[string]string{}
	}
	for k, v := range o.labels {
		cfg.Config.Labels[k] = v
	}
	return mutate.ConfigFile(img, cfg)
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
