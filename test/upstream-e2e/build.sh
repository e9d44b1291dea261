#!/usr/bin/env bash
# Builds what running upstream's node e2e suite against this repository's
# kubelet needs, from one minor's trees (UPSTREAM, see build/lib.sh), into
# _output/upstream-e2e/1-NN/:
#
#   bin/e2e_node.test, bin/ginkgo, bin/run-local
#                     upstream's suite, the ginkgo it pins and its local
#                     runner (test/e2e_node/runner/local), from the patched
#                     tree: the suite carries the series' own e2e tests
#                     (patch 0013), and its other tests are upstream's
#   kubelet/vanilla   upstream's kubelet, from the pristine tree, built with
#                     the flags and Go of the drop-in (build/kubelet.sh, as
#                     make bench-build builds its vanilla reference)
#   kubelet/dropin    the drop-in kubelet (make kubelet)
#   images/*.tar      the images the suite runs, from source, tagged as the
#                     tree's test/utils/image/manifest.go names them
#   tools/            ociimage (build/image, the packer of make image),
#                     units, containerd-config (test/upstream-e2e/cmd) and
#                     testplugin
#
#   test/upstream-e2e/build.sh [tools|dropin|vanilla|images|suite]...   (default: all)

source "$(dirname "${BASH_SOURCE[0]}")/../../build/lib.sh"
source "${REPO_ROOT}/build/deps.sh"
cd "${REPO_ROOT}"

OUT=${OUTPUT_DIR}/upstream-e2e/${MINOR}
mkdir -p "${OUT}"/{bin,kubelet,images,tools}
[[ -e "${SRC_DIR}/.git" ]] || die "${SRC_DIR} does not exist; run make source first"

# Where the tree's device plugin tests find the sample device plugin's
# DaemonSet and pod manifests.
DEVICE_PLUGIN_MANIFESTS=test/e2e/testing-manifests/sample-device-plugin

# The tree's image reference for an ImageID of test/utils/image/manifest.go.
image_ref() {
  local id=$1 manifest=${SRC_DIR}/test/utils/image/manifest.go line reg name version
  line=$(grep -E "^\s*configs\[${id}\] = Config\{" "${manifest}") || die "${manifest#"${REPO_ROOT}"/}: no configs[${id}]"
  read -r reg name version < <(sed -E 's/.*Config\{list\.([A-Za-z0-9]+), "([^"]+)", "([^"]+)"\}.*/\1 \2 \3/' <<<"${line}")
  local regline
  regline=$(grep -E "^\s*${reg}:\s*\"" "${manifest}") || die "${manifest#"${REPO_ROOT}"/}: no registry ${reg}"
  reg=$(sed -E 's/.*"([^"]+)".*/\1/' <<<"${regline}")
  echo "${reg}/${name}:${version}"
}

build_suite() {
  log "building upstream's node e2e suite, ginkgo and the local runner (${MINOR} tree, ${GO_TOOLCHAIN})"
  CGO_ENABLED=0 upstream_go test -c -vet=off -trimpath -o "${OUT}/bin/e2e_node.test.tmp" ./test/e2e_node
  mv "${OUT}/bin/e2e_node.test.tmp" "${OUT}/bin/e2e_node.test"
  CGO_ENABLED=0 upstream_go build -trimpath -o "${OUT}/bin/ginkgo" github.com/onsi/ginkgo/v2/ginkgo
  CGO_ENABLED=0 upstream_go build -trimpath -o "${OUT}/bin/run-local" ./test/e2e_node/runner/local
  (verify_no_drift "${SRC_DIR}" "refs/tags/${UPSTREAM_VERSION}" "building upstream's node e2e suite")
}

build_vanilla() {
  local vanilla_src=${OUT}/vanilla-src
  if [[ ! -e "${vanilla_src}/.git" ]]; then
    git -C "${SRC_DIR}" worktree prune
    git -C "${SRC_DIR}" worktree add --quiet --detach "${vanilla_src}" "refs/tags/${UPSTREAM_VERSION}"
  fi
  log "building the vanilla ${UPSTREAM_VERSION} kubelet (pristine tree, the drop-in's flags)"
  SRC_DIR=${vanilla_src} KUBE_GIT_VERSION=${UPSTREAM_VERSION} \
  KUBE_GIT_COMMIT=$(git -C "${vanilla_src}" rev-parse HEAD) KUBE_GIT_TREE_STATE=clean \
  build/kubelet.sh ./cmd/kubelet "${OUT}/kubelet/vanilla"
}

build_dropin() {
  [[ -x "${MINOR_BIN_DIR}/kubelet" ]] || die "${MINOR_BIN_DIR}/kubelet does not exist; run make kubelet first"
  ln -f "${MINOR_BIN_DIR}/kubelet" "${OUT}/kubelet/dropin"
}

build_tools() {
  go build -o "${OUT}/tools/" ./test/upstream-e2e/cmd/units ./test/upstream-e2e/cmd/containerd-config
  # The image packer of make image (a module of its own).
  (cd build/image && GOWORK=off CGO_ENABLED=0 go build -trimpath -o "${OUT}/tools/ociimage" .)
  go build -o "${OUT}/tools/testplugin" ./test/testplugin
  local n
  for n in systemd-run systemctl sudo; do
    ln -sf units "${OUT}/tools/${n}"
  done
}

# busybox_rootfs DIR: Debian's busybox-static with every applet linked in
# /bin, as the docker library busybox image has them (and at Debian's
# paths too), the nmeter stand-in, and the users and groups of the busybox
# image.
busybox_rootfs() {
  local dir=$1 deb
  mkdir -p "${dir}"/{bin,etc,root,tmp,var,home,usr/bin,usr/sbin,sbin}
  chmod 1777 "${dir}/tmp"
  chmod 0700 "${dir}/root"
  cp "${OUT}/images/busybox-static/bin/busybox" "${dir}/bin/busybox"
  local applet
  for applet in $("${dir}/bin/busybox" --list-full); do
    [[ "${applet}" == bin/busybox ]] && continue
    # -L too: the links point into the image, not at this host's files.
    [[ -e "${dir}/${applet}" || -L "${dir}/${applet}" ]] || ln -s /bin/busybox "${dir}/${applet}"
    [[ -e "${dir}/bin/${applet##*/}" || -L "${dir}/bin/${applet##*/}" ]] || ln -s busybox "${dir}/bin/${applet##*/}"
  done
  # The docker library image's busybox builds nmeter, Debian's does not:
  # the suite's lifecycle tests take their timestamps with it.
  cp "${STAND_INS}/nmeter" "${dir}/bin/nmeter"
  cat >"${dir}/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/sh
daemon:x:1:1:daemon:/usr/sbin:/bin/false
bin:x:2:2:bin:/bin:/bin/false
sys:x:3:3:sys:/dev:/bin/false
nobody:x:65534:65534:nobody:/home:/bin/false
PASSWD
  cat >"${dir}/etc/group" <<'GROUP'
root:x:0:
daemon:x:1:
bin:x:2:
sys:x:3:
nogroup:x:65534:
GROUP
  : >"${dir}/etc/hostname"
  : >"${dir}/etc/hosts"
  : >"${dir}/etc/resolv.conf"
}

# pack ID DIR OCIIMAGE-ARGS...: the image of ImageID ID from rootfs DIR.
pack() {
  local id=$1 dir=$2
  shift 2
  local ref
  ref=$(image_ref "${id}")
  pack_as "${id}" "${ref}" "${dir}" "$@"
  echo "${ref}" >"${OUT}/images/${id}.ref"
}

# pack_as NAME REF DIR OCIIMAGE-ARGS...: the image REF from rootfs DIR, as
# images/NAME.tar.
pack_as() {
  local name=$1 ref=$2 dir=$3
  shift 3
  "${OUT}/tools/ociimage" -rootfs "${dir}" -ref "${ref}" -epoch 0 -arch "$(go env GOARCH)" \
    -oci-archive "${OUT}/images/${name}.tar" "$@" >/dev/null
  log "image ${ref}"
}

# images_stamp: what the images are built from (the tree's image sources,
# its manifest and pause, this script and the packer), so that an unchanged
# set is not built again.
images_stamp() {
  local path
  for path in test/images test/utils/image/manifest.go "${DEVICE_PLUGIN_MANIFESTS}" build/pause; do
    echo "${path} $(git -C "${SRC_DIR}" rev-parse "HEAD:${path}")"
  done
  sha256sum "${REPO_ROOT}/test/upstream-e2e/build.sh" "${REPO_ROOT}"/build/image/*.go "${REPO_ROOT}"/build/image/go.sum "${OUT}/images/busybox-static/bin/busybox" \
    "${OUT}/images/bash-static/bin/bash-static" \
    "${REPO_ROOT}/test/upstream-e2e/nmeter/nmeter.c" "${REPO_ROOT}"/test/upstream-e2e/cmd/curl/*.go
  upstream_go version
}

# fetch_deb PACKAGE FILE: Debian's PACKAGE, unpacked in images/PACKAGE,
# unless its FILE is there already.
fetch_deb() {
  local package=$1 file=$2 work=${OUT}/images/work
  [[ -x "${OUT}/images/${package}/${file}" ]] && return 0
  log "fetching Debian's ${package}"
  rm -rf "${work}" && mkdir -p "${work}"
  (cd "${work}" && { apt-get download "${package}" >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get download "${package}"; }; })
  rm -rf "${OUT}/images/${package}"
  dpkg-deb -x "${work}/${package}"_*.deb "${OUT}/images/${package}"
  [[ -x "${OUT}/images/${package}/${file}" ]] || die "Debian's ${package} has no ${file}"
}

build_images() {
  local work=${OUT}/images/work stamp
  fetch_deb busybox-static bin/busybox
  # bash, which agnhost's image has (its Dockerfile adds it with apk):
  # upstream's probing tests run /bin/bash -c in agnhost.
  fetch_deb bash-static bin/bash-static
  stamp=$(images_stamp)
  if [[ -e "${OUT}/images/stamp" && "$(cat "${OUT}/images/stamp")" == "${stamp}" ]]; then
    log "the suite's images are up to date ($(ls "${OUT}"/images/*.tar | wc -l) in ${OUT#"${REPO_ROOT}"/}/images)"
    return 0
  fi
  rm -rf "${work}" "${OUT}"/images/*.tar "${OUT}"/images/*.ref "${OUT}/images/stamp"
  mkdir -p "${work}"
  local bin=${work}/bin
  mkdir -p "${bin}"
  log "building agnhost, the sample device plugin and nonewprivs (${MINOR} tree), pause, and the stand-ins for nmeter and curl"
  CGO_ENABLED=0 upstream_go build -trimpath -ldflags "-s -w" -o "${bin}/" ./test/images/agnhost ./test/images/sample-device-plugin ./test/images/nonewprivs
  local pause_version
  pause_version=$(sed -n 's/^TAG ?= //p' "${SRC_DIR}/build/pause/Makefile")
  gcc -Os -Wall -Werror -static -DVERSION="v${pause_version}-podadmission" -o "${bin}/pause" "${SRC_DIR}/build/pause/linux/pause.c"
  strip "${bin}/pause"
  STAND_INS=${bin}
  gcc -Os -Wall -Werror -static -o "${bin}/nmeter" "${REPO_ROOT}/test/upstream-e2e/nmeter/nmeter.c"
  strip "${bin}/nmeter"
  (cd "${REPO_ROOT}" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "${bin}/curl" ./test/upstream-e2e/cmd/curl)

  # busybox: the docker library image the e2e one mirrors.
  busybox_rootfs "${work}/busybox"
  pack BusyBox "${work}/busybox" -cmd sh

  # agnhost: its Dockerfile on a busybox base instead of alpine. Of its
  # apk packages, bash is Debian's bash-static (5.2, at /bin/bash as
  # alpine's bash is) and curl is the stand-in of cmd/curl, for the
  # options the suite's tests pass. The others (bind-tools' dig,
  # netcat-openbsd's nc, iproute2, iperf, util-linux-misc, socat) and
  # coredns are missing; busybox has nc and ip applets of its own.
  local a=${work}/agnhost
  busybox_rootfs "${a}"
  cp "${bin}/agnhost" "${a}/agnhost"
  cp "${bin}/curl" "${a}/usr/bin/curl"
  rm -f "${a}/bin/bash"
  cp "${OUT}/images/bash-static/bin/bash-static" "${a}/bin/bash"
  ln -s agnhost "${a}/agnhost-2"
  mkdir -p "${a}/uploads"
  cp "${SRC_DIR}/test/images/agnhost/porter/localhost.crt" "${SRC_DIR}/test/images/agnhost/porter/localhost.key" "${a}/"
  echo "user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh" >>"${a}/etc/passwd"
  printf 'user-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\n' >>"${a}/etc/group"
  mkdir -p "${a}/home/user-defined-in-image"
  pack Agnhost "${a}" -entrypoint /agnhost -cmd pause

  local p=${work}/pause
  mkdir -p "${p}"
  cp "${bin}/pause" "${p}/pause"
  pack Pause "${p}" -entrypoint /pause -user 65535:65535

  local s=${work}/sample-device-plugin
  busybox_rootfs "${s}"
  cp "${bin}/sample-device-plugin" "${s}/sampledeviceplugin"
  pack SampleDevicePlugin "${s}" -entrypoint /sampledeviceplugin -entrypoint -alsologtostderr
  # The device plugin tests deploy the plugin from the tree's testing
  # manifests, which name the image by the version of its source
  # (test/images/sample-device-plugin/VERSION: 1.8.0 in v1.37.2), not by
  # manifest.go's (1.7): the same image under each name they use.
  local ref i=0
  for ref in $(sed -n 's/^ *- image: *\([^ ]*sample-device-plugin:[^ ]*\) *$/\1/p' "${SRC_DIR}/${DEVICE_PLUGIN_MANIFESTS}"/*.yaml | sort -u); do
    [[ "${ref}" == "$(cat "${OUT}/images/SampleDevicePlugin.ref")" ]] && continue
    i=$((i + 1))
    pack_as "SampleDevicePlugin-manifests-${i}" "${ref}" "${s}" -entrypoint /sampledeviceplugin -entrypoint -alsologtostderr
  done

  local n=${work}/nonewprivs
  busybox_rootfs "${n}"
  mkdir -p "${n}/usr/local/bin"
  cp "${bin}/nonewprivs" "${n}/usr/local/bin/nnp"
  chmod 4755 "${n}/usr/local/bin/nnp"
  pack Nonewprivs "${n}" -cmd nnp

  local r=${work}/nonroot
  busybox_rootfs "${r}"
  pack NonRoot "${r}" -user 1234 -cmd sh

  # nginx and nginx-new (nginx:1.2x-alpine upstream): the suite's static
  # and mirror pod tests run them as a container that serves HTTP on port
  # 80. Stand-ins: busybox's httpd serving nginx's welcome page from
  # nginx's document root, as nginx's image would.
  local x=${work}/nginx
  busybox_rootfs "${x}"
  mkdir -p "${x}/usr/share/nginx/html"
  echo '<!DOCTYPE html><html><head><title>Welcome to nginx!</title></head><body><h1>Welcome to nginx!</h1></body></html>' >"${x}/usr/share/nginx/html/index.html"
  pack Nginx "${x}" -cmd httpd -cmd -f -cmd -p -cmd 80 -cmd -h -cmd /usr/share/nginx/html
  pack NginxNew "${x}" -cmd httpd -cmd -f -cmd -p -cmd 80 -cmd -h -cmd /usr/share/nginx/html
  rm -rf "${work}"
  echo "${stamp}" >"${OUT}/images/stamp"
}

steps=("$@")
[[ ${#steps[@]} -gt 0 ]] || steps=(tools dropin vanilla images suite)
for step in "${steps[@]}"; do
  case "${step}" in
  suite) build_suite ;;
  dropin) build_dropin ;;
  vanilla) build_vanilla ;;
  images) build_images ;;
  tools) build_tools ;;
  *) die "unknown step ${step} (tools, dropin, vanilla, images, suite)" ;;
  esac
done
