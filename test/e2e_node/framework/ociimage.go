//go:build e2e_node

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

package framework

import (
	"archive/tar"
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path"
	"runtime"
	"slices"
	"time"
)

// imageSpec is a one-file image: a static binary as its entrypoint.
type imageSpec struct {
	// Ref is the full image reference, e.g. e2e.podadmission.local/pause:1.
	Ref string
	// Binary is the file on the host to pack as /<Entrypoint>.
	Binary     string
	Entrypoint string
}

const (
	mediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	mediaTypeLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// writeImageArchive writes an OCI image layout tarball for spec that
// ctr images import reads; no registry is reachable from these machines.
func writeImageArchive(out string, spec imageSpec) error {
	binary, err := os.ReadFile(spec.Binary)
	if err != nil {
		return fmt.Errorf("image %s: %w", spec.Ref, err)
	}

	var layerTar bytes.Buffer
	if err := writeTar(&layerTar, map[string][]byte{spec.Entrypoint: binary}, 0o755); err != nil {
		return err
	}
	var layerGz bytes.Buffer
	gz := gzip.NewWriter(&layerGz)
	if _, err := gz.Write(layerTar.Bytes()); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}

	config, err := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"config":       map[string]any{"Entrypoint": []string{"/" + spec.Entrypoint}},
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{digestOf(layerTar.Bytes())}},
	})
	if err != nil {
		return err
	}
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     mediaTypeManifest,
		"config":        descriptor{MediaType: mediaTypeConfig, Digest: digestOf(config), Size: int64(len(config))},
		"layers":        []descriptor{{MediaType: mediaTypeLayer, Digest: digestOf(layerGz.Bytes()), Size: int64(layerGz.Len())}},
	})
	if err != nil {
		return err
	}
	index, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"manifests": []descriptor{{
			MediaType: mediaTypeManifest,
			Digest:    digestOf(manifest),
			Size:      int64(len(manifest)),
			Annotations: map[string]string{
				// containerd's importer names the image after this.
				"io.containerd.image.name": spec.Ref,
			},
		}},
	})
	if err != nil {
		return err
	}

	files := map[string][]byte{
		"oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`),
		"index.json": index,
	}
	for _, blob := range [][]byte{layerGz.Bytes(), config, manifest} {
		files[path.Join("blobs/sha256", digestOf(blob)[len("sha256:"):])] = blob
	}
	var archive bytes.Buffer
	if err := writeTar(&archive, files, 0o644); err != nil {
		return err
	}
	return os.WriteFile(out, archive.Bytes(), 0o644)
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// writeTar writes files (and the directories above them) into a tar
// stream with fixed metadata, so the same input gives the same digests.
func writeTar(buf *bytes.Buffer, files map[string][]byte, mode int64) error {
	tw := tar.NewWriter(buf)
	epoch := time.Unix(0, 0)
	dirs := map[string]bool{}
	for _, name := range sortedKeys(files) {
		for dir := path.Dir(name); dir != "." && !dirs[dir]; dir = path.Dir(dir) {
			dirs[dir] = true
		}
	}
	for _, dir := range sortedKeys(dirs) {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, ModTime: epoch}); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(files) {
		data := files[name]
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: epoch}); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	return tw.Close()
}

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}
