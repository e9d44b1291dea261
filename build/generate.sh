#!/usr/bin/env bash
# Regenerates the generated Go code of this module with pinned generators.
#
#   build/generate.sh
#
# Generators run with `go run <tool>@<version>`, so the version is pinned
# here and nothing is installed. deepcopy-gen and defaulter-gen cover every
# package under pkg/apis/; each package opts in with its doc.go tags
# (+k8s:deepcopy-gen=package, +k8s:defaulter-gen=TypeMeta). Stale output is
# removed first, so a package that drops its tags loses its generated file.
# build/podtypes-gen writes the SDK's lean Pod types and their strict
# decoder (pkg/plugin/corev1) from k8s.io/api at the version go.mod pins,
# and the conversion of the SDK's Pod into k8s.io/api's (pkg/plugin/corepod).

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The code generators of the upstream release this repository patches.
CODE_GENERATOR="k8s.io/code-generator@${STAGING_VERSION}"

cd "${REPO_ROOT}"

mapfile -t api_pkgs < <(go list ./pkg/apis/...)
[[ ${#api_pkgs[@]} -gt 0 ]] || die "no packages under pkg/apis"

find pkg/apis -name 'zz_generated.deepcopy.go' -delete
find pkg/apis -name 'zz_generated.defaults.go' -delete

log "deepcopy-gen (${CODE_GENERATOR}) for ${#api_pkgs[@]} packages under pkg/apis"
go run "${CODE_GENERATOR%@*}/cmd/deepcopy-gen@${CODE_GENERATOR#*@}" \
  --go-header-file build/boilerplate.go.txt \
  --output-file zz_generated.deepcopy.go \
  "${api_pkgs[@]}"

log "defaulter-gen (${CODE_GENERATOR}) for ${#api_pkgs[@]} packages under pkg/apis"
go run "${CODE_GENERATOR%@*}/cmd/defaulter-gen@${CODE_GENERATOR#*@}" \
  --go-header-file build/boilerplate.go.txt \
  --output-file zz_generated.defaults.go \
  "${api_pkgs[@]}"

gofmt -l -w pkg/apis >/dev/null

log "podtypes-gen (k8s.io/api $(go list -m -f '{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}' k8s.io/api)) for pkg/plugin/corev1 and pkg/plugin/corepod"
find pkg/plugin/corev1 pkg/plugin/corepod -name 'zz_generated.*.go' -delete
go run ./build/podtypes-gen -header build/boilerplate.go.txt -out pkg/plugin/corev1 -convert-out pkg/plugin/corepod

# The gRPC protocol of GRPC plugins. protoc-gen-go is pinned to the
# google.golang.org/protobuf version in go.mod, so the generated code matches
# the runtime it links against; protoc-gen-go-grpc to the release
# k8s.io/cri-api ${STAGING_VERSION} is generated with, which supports the
# grpc version in go.mod. protoc prints its version into the output, so it is
# pinned too: Debian's protobuf-compiler package.
PROTOC_VERSION="3.21.12"
PROTOC_GEN_GO_GRPC_VERSION="v1.6.2"
PROTO_FILES=(pkg/apis/podadmission/grpc/v1alpha1/api.proto)

[[ "$(protoc --version 2>/dev/null)" == "libprotoc ${PROTOC_VERSION}" ]] ||
  die "protoc ${PROTOC_VERSION} is required (Debian/Ubuntu: apt-get install protobuf-compiler); found: $(protoc --version 2>&1 || echo none)"
PROTOC_GEN_GO_VERSION=$(go list -m -f '{{.Version}}' google.golang.org/protobuf)

proto_tools=$(mktemp -d)
trap 'rm -rf "${proto_tools}"' EXIT
log "protoc ${PROTOC_VERSION}, protoc-gen-go ${PROTOC_GEN_GO_VERSION}, protoc-gen-go-grpc ${PROTOC_GEN_GO_GRPC_VERSION} for ${#PROTO_FILES[@]} files"
GOBIN="${proto_tools}" go install "google.golang.org/protobuf/cmd/protoc-gen-go@${PROTOC_GEN_GO_VERSION}"
GOBIN="${proto_tools}" go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@${PROTOC_GEN_GO_GRPC_VERSION}"

find pkg/apis -name '*.pb.go' -delete
protoc \
  --plugin=protoc-gen-go="${proto_tools}/protoc-gen-go" \
  --plugin=protoc-gen-go-grpc="${proto_tools}/protoc-gen-go-grpc" \
  --go_out=paths=source_relative:. \
  --go-grpc_out=paths=source_relative:. \
  "${PROTO_FILES[@]}"
