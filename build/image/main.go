// Command image packs a root file system directory into an OCI image of the
// drop-in kubelet, without a container daemon, and writes it both as an OCI
// image layout directory and as a `docker save` archive (make image):
//
//	image -rootfs DIR -ref podadmission/kubelet:v1.37.2_podadmission.2 -epoch 1764592505 \
//	    -oci-layout OUT/oci -docker-archive OUT/image.tar [-base siderolabs-kubelet.tar]
//
// The image is the form Talos' machine.kubelet.image runs: the kubelet at
// /usr/local/bin/kubelet as the entrypoint. With -base (a `docker save` or
// `crane pull` archive of one image, such as ghcr.io/siderolabs/kubelet of
// the same release) the layer goes on top of it, so the image keeps the
// base's host tools (mount helpers, iptables, ...) and its environment.
//
// The output is reproducible: every file is owned by root, every time is
// -epoch, entries are sorted, and the layer is gzip at a fixed level, so
// the same directory gives the same digests.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	var o options
	flag.StringVar(&o.rootfs, "rootfs", "", "directory to pack as the image's layer")
	flag.StringVar(&o.ref, "ref", "", "image reference, e.g. podadmission/kubelet:v1.37.2_podadmission.2")
	flag.Int64Var(&o.epoch, "epoch", -1, "SOURCE_DATE_EPOCH: the time of every file and of the image")
	flag.StringVar(&o.base, "base", "", "optional `docker save` archive of the base image")
	flag.StringVar(&o.entrypoint, "entrypoint", "/usr/local/bin/kubelet", "the image's entrypoint")
	flag.StringVar(&o.ociLayout, "oci-layout", "", "OCI image layout directory to write")
	flag.StringVar(&o.dockerArchive, "docker-archive", "", "`docker save` archive to write")
	flag.Var(&o.labels, "label", "KEY=VALUE label of the image (repeat)")
	flag.Parse()
	digest, err := run(o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "image: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(digest)
}
