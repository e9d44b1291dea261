#!/usr/bin/env bash
# Builds the OCI image of the drop-in kubelet of one minor (UPSTREAM, see
# lib.sh) from its release tarball (make release), in the form Talos'
# machine.kubelet.image runs (make image), without a container daemon
# (build/image, go-containerregistry, the packer test/upstream-e2e uses too):
#
#   build/image.sh [OUTDIR]   OUTDIR/kubelet-<upstream>+podadmission.<N>.oci.tar   an OCI image layout, as a tarball
#                             OUTDIR/kubelet-<upstream>+podadmission.<N>.docker.tar  the same image, `docker save` format
#
# OUTDIR defaults to _output/image. The image is IMAGE_REPO (default
# podadmission/kubelet) tagged <upstream>_podadmission.<N> (a tag cannot
# hold "+"; Kubernetes' own builds write "_" for it). Its layer:
#   usr/local/bin/kubelet             the entrypoint, where Talos runs it
#   usr/local/bin/podadmctl
#   usr/local/lib/pod-admission/      the plugins (Talos mounts the host's
#                                     /usr/libexec/kubernetes over the image's)
#   usr/local/share/podadmission-kubelet/  the sample configuration, LICENSE
# IMAGE_BASE, a `docker save` (or `crane pull`) archive such as
# ghcr.io/siderolabs/kubelet of the same release, puts the layer on top of
# it, keeping the host tools it carries (mount helpers, iptables, ...);
# without it the image holds only the static binaries above.
# Reproducible: the same tarball gives the same digests and bytes.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

out_dir=${1:-${OUTPUT_DIR}/image}
version=$("${REPO_ROOT}/build/version.sh" version)
name=kubelet-${version}-linux-amd64
tarball=${OUTPUT_DIR}/release/${name}.tar.gz
ref=${IMAGE_REPO:-podadmission/kubelet}:${version//+/_}

[[ -f "${tarball}" ]] || die "${tarball} does not exist; run make release first"
(cd "$(dirname "${tarball}")" && sha256sum --check --quiet --strict "${name}.tar.gz.sha256") ||
  die "${tarball} does not match ${tarball}.sha256; run make release again"
[[ -z "${IMAGE_BASE:-}" || -f "${IMAGE_BASE}" ]] || die "IMAGE_BASE=${IMAGE_BASE}: no such file (a docker save archive of the base image)"

work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT
tar -xzf "${tarball}" -C "${work}"
release=${work}/${name}
# The tarball's time (SOURCE_DATE_EPOCH when it was made), not HEAD's: the
# same tarball gives the same bytes whatever was committed since.
epoch=$(stat -c %Y "${release}/LICENSE")
root=${work}/rootfs

log "building ${ref} in ${out_dir#"${REPO_ROOT}"/} from ${tarball#"${REPO_ROOT}"/}${IMAGE_BASE:+ on ${IMAGE_BASE}}"
while read -r src dest perm; do
  case "${dest}" in
  usr/bin/*) dest=usr/local/bin/${dest#usr/bin/} ;;
  usr/libexec/kubernetes/pod-admission/*) dest=usr/local/lib/pod-admission/${dest##*/} ;;
  etc/kubernetes/pod-admission/*) dest=usr/local/share/podadmission-kubelet/pod-admission/${dest##*/} ;;
  usr/share/podadmission-kubelet/* | usr/lib/systemd/system/*) continue ;; # the systemd drop-in and units: no systemd in the image
  *) die "install.sh --list puts ${src} at ${dest}: build/image.sh does not know where it goes in the image" ;;
  esac
  install -D -m "${perm}" "${release}/${src}" "${root}/${dest}"
done < <(bash "${release}/install.sh" --list)
install -D -m 0644 "${release}/LICENSE" "${root}/usr/local/share/podadmission-kubelet/LICENSE"
find "${root}" -type d -exec chmod 0755 {} +

tool=${work}/image
(cd "${REPO_ROOT}/build/image" && GOWORK=off CGO_ENABLED=0 go build -trimpath -o "${tool}" .)
mkdir -p "${out_dir}"
oci=${out_dir}/${name%-linux-amd64}.oci.tar
docker_tar=${out_dir}/${name%-linux-amd64}.docker.tar
digest=$("${tool}" -rootfs "${root}" -ref "${ref}" -epoch "${epoch}" ${IMAGE_BASE:+-base "${IMAGE_BASE}"} \
  -entrypoint /usr/local/bin/kubelet \
  -label "org.opencontainers.image.title=kubelet" -label "org.opencontainers.image.version=${version}" \
  -label "org.opencontainers.image.description=Kubernetes ${UPSTREAM_VERSION} kubelet with the podadmission patch series ${MINOR} (revision ${SERIES_VERSION})" \
  -oci-archive "${oci}.tmp" -docker-archive "${docker_tar}.tmp")
mv "${oci}.tmp" "${oci}"
mv "${docker_tar}.tmp" "${docker_tar}"
(cd "${out_dir}" && sha256sum "${oci##*/}" "${docker_tar##*/}" >"${name%-linux-amd64}.image.sha256")
echo "${ref}@${digest}" >"${out_dir}/${name%-linux-amd64}.image-ref"
echo "${ref}@${digest}"
cat "${out_dir}/${name%-linux-amd64}.image.sha256"
