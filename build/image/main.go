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

// Command image packs a root file system directory into an OCI image without
// a container daemon or a registry (go-containerregistry), and writes it as
// an OCI image layout directory, as that layout in a tarball, and as a
// `docker save` archive. It is the one image packer of this repository:
// make image packs the drop-in kubelet for Talos' machine.kubelet.image
// with it (build/image.sh), and test/upstream-e2e/build.sh the images
// upstream's node e2e suite runs, built from source.
//
//	image -rootfs DIR -ref podadmission/kubelet:v1.37.2_podadmission.2 -epoch 1764592505 \
//	    -entrypoint /usr/local/bin/kubelet [-cmd ARG]... [-env NAME=VALUE]... [-user UID[:GID]] \
//	    [-workdir DIR] [-label KEY=VALUE]... [-arch amd64] [-base siderolabs-kubelet.tar] \
//	    [-oci-layout OUT/oci] [-oci-archive OUT/image.oci.tar] [-docker-archive OUT/image.tar]
//
// With -base (a `docker save` or `crane pull` archive of one image, such as
// ghcr.io/siderolabs/kubelet of the same release) the layer goes on top of
// it, so the image keeps the base's host tools (mount helpers, iptables,
// ...) and its environment.
//
// The output is reproducible: every file is owned by root with its mode
// (setuid, setgid and sticky bits included), every time is -epoch, entries
// are sorted, and the layer is gzip at a fixed level, so the same directory
// gives the same digests and bytes.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	var o options
	flag.StringVar(&o.rootfs, "rootfs", "", "directory to pack as the image's layer")
	flag.StringVar(&o.ref, "ref", "", "image reference, REPOSITORY:TAG, e.g. podadmission/kubelet:v1.37.2_podadmission.2")
	flag.Int64Var(&o.epoch, "epoch", -1, "SOURCE_DATE_EPOCH: the time of every file and of the image")
	flag.StringVar(&o.base, "base", "", "optional `docker save` archive of the base image")
	flag.Var(&o.entrypoint, "entrypoint", "one argument of the image's entrypoint (repeat)")
	flag.Var(&o.cmd, "cmd", "one argument of the image's default command (repeat)")
	flag.Var(&o.env, "env", "NAME=VALUE added to the image's environment (repeat)")
	flag.StringVar(&o.user, "user", "", "the image's default user, UID[:GID]")
	flag.StringVar(&o.workdir, "workdir", "", "the image's working directory")
	flag.StringVar(&o.arch, "arch", "amd64", "the architecture of the binaries in -rootfs (GOARCH)")
	flag.Var(&o.labels, "label", "KEY=VALUE label of the image (repeat)")
	flag.StringVar(&o.ociLayout, "oci-layout", "", "OCI image layout directory to write")
	flag.StringVar(&o.ociArchive, "oci-archive", "", "tarball of an OCI image layout to write (what `ctr images import` reads)")
	flag.StringVar(&o.dockerArchive, "docker-archive", "", "`docker save` archive to write")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "image: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	digest, err := run(o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "image: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(digest)
}
