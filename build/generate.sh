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
  --go-header-file /dev/null \
  --output-file zz_generated.deepcopy.go \
  "${api_pkgs[@]}"

log "defaulter-gen (${CODE_GENERATOR}) for ${#api_pkgs[@]} packages under pkg/apis"
go run "${CODE_GENERATOR%@*}/cmd/defaulter-gen@${CODE_GENERATOR#*@}" \
  --go-header-file /dev/null \
  --output-file zz_generated.defaults.go \
  "${api_pkgs[@]}"

gofmt -l -w pkg/apis >/dev/null
