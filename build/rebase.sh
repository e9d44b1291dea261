#!/usr/bin/env bash
# Ports a maintained series to another upstream release:
#
#   build/rebase.sh FROM TO           e.g. 1-37 v1.36.3 (make rebase FROM=1-37 TO=v1.36.3)
#   build/rebase.sh --abort FROM TO   give up a rebase that stopped
#
# It reconstructs the pristine tree of TO (_output/1-MM/src/kubernetes),
# replays FROM's patches on it with git am -3, and exports the result to
# patches/1-MM/: the patches, SERIES_VERSION and the facts file (UPSTREAM);
# README.md's table of maintained minors follows.
# On the way it
#   - sets the feature gate's versioned spec (and the gate patch's message)
#     to TO's minor, in the patch text before it is applied;
#   - regenerates the feature lists with upstream's own generator
#     (hack/update-featuregates.sh's commands) instead of merging them; a
#     tree that cannot be built here keeps the series' own entries, with the
#     minor rewritten, and says so;
#   - replays the recorded resolutions of earlier ports,
#     patches/1-MM/from-1-NN/NNNN-*.diff: what a human changed after git am
#     -3 (a conflict resolved, a fix for TO's API), so that running it again
#     reproduces patches/1-MM byte for byte;
#   - compiles and vets the packages the series touches in TO's tree.
#
# It stops where a human is needed (a conflict, a resolution that no longer
# applies, code that does not compile on TO), naming the file, the hunk and
# the command to continue: fix the tree, then run the same make rebase again.
# Fixes found after it finished (e.g. on a TO that cannot be compiled here)
# are committed with git commit --fixup in TO's tree; the same make rebase
# then squashes them in and exports again.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "${REPO_ROOT}/build/am.sh"
source "${REPO_ROOT}/build/deps.sh"

abort=0
if [[ "${1:-}" == --abort ]]; then
  abort=1
  shift
fi
[[ $# -eq 2 ]] || die "usage: build/rebase.sh [--abort] FROM TO   (e.g. 1-37 v1.36.3)"
FROM=$1 TO=$2
[[ "${FROM}" =~ ^[0-9]+-[0-9]+$ && -f "${PATCHES_DIR}/${FROM}/UPSTREAM" ]] ||
  die "FROM=${FROM}: expected a maintained series (one of: $(all_minors | paste -sd' '))"
[[ "${TO}" =~ ^v1\.[0-9]+\.[0-9]+(-(alpha|beta|rc)\.[0-9]+)?$ ]] || die "TO=${TO}: expected an upstream release like v1.36.3"
TO_MINOR=$(minor_of "${TO}")
TO_DIR=${PATCHES_DIR}/${TO_MINOR}
TREE=${OUTPUT_DIR}/${TO_MINOR}/src/kubernetes
STATE=${TREE}/.git/podadmission-rebase
COMMAND="make rebase FROM=${FROM} TO=${TO}"
RESOLUTIONS=${TO_DIR}/from-${FROM}
# Files upstream generates, and the script that generates them.
GENERATED=(
  test/compatibility_lifecycle/reference/versioned_feature_list.yaml
  test/compatibility_lifecycle/reference/feature_list.md
)
GENERATOR=hack/update-featuregates.sh

git_tree() { git -C "${TREE}" "$@"; }
rel() { echo "${1#"${REPO_ROOT}"/}"; }

# The environment lib.sh gives the target minor (once its facts exist).
to_env() { UPSTREAM=${TO_MINOR} "$@"; }

if [[ "${abort}" == 1 ]]; then
  [[ -d "${STATE}" ]] || die "no make rebase in progress in $(rel "${TREE}")"
  git_tree am --abort >/dev/null 2>&1 || true
  git_tree rebase --abort >/dev/null 2>&1 || true
  rm -rf "${STATE}"
  log "gave up the rebase; $(rel "${TREE}") is at $(git_tree log -1 --format='%h %s'), patches/${TO_MINOR} is unchanged"
  exit 0
fi

# ---------------------------------------------------------------------------
# Facts of the target release, from the proxy.

# download_report TOOLCHAIN MODULE@VERSION...: go mod download -json, one
# "path<TAB>version<TAB>error" line per module (error empty when served).
download_report() {
  (cd /tmp && GOFLAGS=-mod=mod GOTOOLCHAIN=$1 go mod download -json "${@:2}" || true) | modinfo fields -e Path Version Error
}

# write_facts: patches/1-MM/UPSTREAM for TO, from what the proxy serves.
write_facts() {
  log "facts of ${TO} from the Go module proxy"
  local kube_dir go_version
  kube_dir=$(GOTOOLCHAIN=auto module_download "k8s.io/kubernetes@${TO}" Dir) || exit 1
  [[ -f "${kube_dir}/go.mod" ]] || die "k8s.io/kubernetes@${TO} has no go.mod (${kube_dir})"
  go_version=$(tr -d '[:space:]' <"${kube_dir}/.go-version")
  [[ "${go_version}" =~ ^1\.[0-9]+(\.[0-9]+)?$ ]] || die "k8s.io/kubernetes@${TO}/.go-version says '${go_version}', not a Go release"
  local toolchain=go${go_version} staging_version
  staging_version=$(staging_version "${TO}")

  local staging required
  staging=$(staging_modules "${kube_dir}" | paste -sd' ')
  required=$(gomod_pins "${kube_dir}/go.mod")
  local wanted=() name path version
  for name in ${staging}; do
    wanted+=("k8s.io/${name}@${staging_version}")
  done
  while read -r path version; do
    [[ "${path}" == go || "${path}" == toolchain || "${version}" == v0.0.0 ]] && continue
    wanted+=("${path}@${version}")
  done <<<"${required}"
  local report unserved=() refused=() error
  report=$(download_report "${toolchain}" "${wanted[@]}") || die "cannot tell which modules of k8s.io/kubernetes@${TO} the proxy serves"
  while IFS=$'\t' read -r path version error; do
    [[ -z "${error}" ]] && continue
    if [[ "${path}" == k8s.io/* && " ${staging} " == *" ${path#k8s.io/} "* && "${version}" == "${staging_version}" ]]; then
      unserved+=("${path#k8s.io/}")
      # Only a staging module the tree requires keeps it from building.
      grep -q "^${path} v0.0.0\$" <<<"${required}" || continue
    fi
    refused+=("${path}@${version}")
  done <<<"${report}"

  mkdir -p "${TO_DIR}"
  cat >"${TO_DIR}/UPSTREAM" <<EOF
# Facts about the upstream release of this series (see build/lib.sh).
version=${TO}
toolchain=${toolchain}
unserved_staging=$(printf '%s\n' "${unserved[@]}" | sed '/^$/d' | LC_ALL=C sort | paste -sd' ')
proxy_refuses=$(printf '%s\n' "${refused[@]}" | sed '/^$/d' | LC_ALL=C sort | paste -sd' ')
EOF
  [[ -f "${TO_DIR}/SERIES_VERSION" ]] || echo 1 >"${TO_DIR}/SERIES_VERSION"
  log "$(rel "${TO_DIR}/UPSTREAM"): toolchain ${toolchain}; unserved staging: ${unserved[*]:-none}; refused: ${refused[*]:-none}"
}

# ---------------------------------------------------------------------------
# The patch text as it is applied to TO.

from_dotted=${FROM/-/.}
to_dotted=${TO_MINOR/-/.}

is_generated() {
  local g
  for g in "${GENERATED[@]}"; do
    [[ "$1" == "${g}" ]] && return 0
  done
  return 1
}

# touches_generated PATCH: whether PATCH changes a generated file.
touches_generated() {
  local f
  for f in $(sed -n 's#^diff --git a/\(.*\) b/.*#\1#p' "$1"); do
    is_generated "${f}" && return 0
  done
  return 1
}

# prepare PATCH OUT KEEP_GENERATED: PATCH as it is applied to TO. The gate's
# versioned spec, and the gate patch's message, name TO's minor; the diff of
# go.mod is left out (apply_gomod_ops makes its changes), and so are the
# diffs of generated files (they are regenerated), unless KEEP_GENERATED,
# when the minor is rewritten on the lines the patch adds to them.
prepare() {
  local patch=$1 out=$2 keep=$3
  awk -v gate="${FEATURE_GATE}" -v from="${from_dotted}" -v to="${to_dotted}" -v keep="${keep}" -v generated="${GENERATED[*]}" '
    # s with the FROM minor as a word of its own (1.37, not v1.37.2 or
    # 11.37) rewritten to TO.
    function minor(s,   out, m) {
      out = ""
      while (match(s, "(^|[^0-9.v])" fre "([^0-9.]|[.][^0-9]|$)")) {
        m = substr(s, RSTART, RLENGTH); sub(fre, to, m)
        out = out substr(s, 1, RSTART - 1) m; s = substr(s, RSTART + RLENGTH)
      }
      return out s
    }
    BEGIN {
      fre = from; gsub(/[.]/, "[.]", fre)
      n = split(generated, g, " "); for (i = 1; i <= n; i++) gen["a/" g[i]] = 1; header = 1
    }
    header && /^---$/ { header = 0 }
    header { msg[++lines] = $0; next }
    /^diff --git / { file = $3; skip = file == "a/go.mod" || ((file in gen) && !keep); in_gate = 0 }
    skip { next }
    file == "a/pkg/features/kube_features.go" && $0 == "+\t" gate ": {" { in_gate = 1; gate_patch = 1 }
    in_gate && /^\+\t},?$/ { in_gate = 0 }
    in_gate && /^\+\t\t\{Version: version\.MustParse\("/ { sub("MustParse[(]\"" fre "\"[)]", "MustParse(\"" to "\")") }
    (file in gen) && /^\+/ { $0 = minor($0) }
    { body[++blines] = $0 }
    END {
      for (i = 1; i <= lines; i++) print (gate_patch ? minor(msg[i]) : msg[i])
      for (i = 1; i <= blines; i++) print body[i]
    }
  ' "${patch}" >"${out}"
}

# gomod_ops PATCH: the changes PATCH makes to go.mod, one a line:
#   require PATH VERSION [// indirect] | droprequire PATH
#   replace OLD => NEW                 | dropreplace OLD
# and "unknown LINE" for any other change.
gomod_ops() {
  awk '
    /^diff --git / { in_mod = ($3 == "a/go.mod"); next }
    !in_mod { next }
    /^(---|\+\+\+|index) / { next }
    /^@@ / { block = ""; if ($0 ~ /@@ (require|replace) \($/) block = $NF == "(" ? $(NF - 1) : ""; next }
    /^[ +-](require|replace) \($/ { block = ($0 ~ /require/) ? "require" : "replace"; next }
    /^[ +-]\)$/ { block = ""; next }
    /^ / { next }
    {
      sign = substr($0, 1, 1); text = substr($0, 2); sub(/^\t/, "", text)
      if (text == "") next
      if (block == "" && text ~ /^(require|replace) /) { block1 = $0; sub(/^[+-](require|replace) /, "", text); blk = substr(block1, 2, 7) } else blk = block
      if (blk == "require" && text ~ /^[^ ]+ v[^ ]+( \/\/ indirect)?$/) { print (sign == "+" ? "require " text : "droprequire " substr(text, 1, index(text, " ") - 1)); next }
      if (blk == "replace" && text ~ / => /) { print (sign == "+" ? "replace " text : "dropreplace " substr(text, 1, index(text, " =>") - 1)); next }
      print "unknown " $0
    }
  ' "$1"
}

# apply_gomod_op GOMOD OP...: one gomod_ops line applied to GOMOD, keeping
# its layout: a new requirement goes into the first require block (an
# indirect one into the first block of indirect ones), a new replacement
# into the replace block, each in sorted place.
apply_gomod_op() {
  local gomod=$1 op=$2
  shift 2
  awk -v op="${op}" -v arg="$*" '
    { line[NR] = $0 }
    function key(s, kind) { sub(/^\t/, "", s); return kind == "replace" ? substr(s, 1, index(s, " =>") - 1) : substr(s, 1, index(s " ", " ") - 1) }
    END {
      kind = (op ~ /require$/) ? "require" : "replace"
      k = (op ~ /^drop/) ? arg : key("\t" arg, kind)
      nb = 0
      for (i = 1; i <= NR; i++) if (line[i] == kind " (") {
        nb++; bs[nb] = i
        for (j = i + 1; j <= NR && line[j] != ")"; j++) if (line[j] ~ /\/\/ indirect$/) ind[nb] = 1
        be[nb] = j
      }
      at = 0; replace_at = 0
      for (b = 1; b <= nb; b++) for (i = bs[b] + 1; i < be[b]; i++) if (key(line[i], kind) == k) replace_at = i
      if (op ~ /^drop/) { if (replace_at) delete line[replace_at]; at = -1 }
      else if (replace_at) { line[replace_at] = "\t" arg; at = -1 }
      else if (nb == 0) { extra = kind " " arg }
      else {
        t = 1
        if (arg ~ /\/\/ indirect$/) for (b = nb; b >= 1; b--) if (ind[b]) t = b
        at = be[t]
        for (i = bs[t] + 1; i < be[t]; i++) if (key(line[i], kind) > k) { at = i; break }
      }
      for (i = 1; i <= NR; i++) {
        if (i == at) print "\t" arg
        if (i in line) print line[i]
      }
      if (extra != "") print "\n" extra
    }
  ' "${gomod}" >"${gomod}.tmp"
  mv "${gomod}.tmp" "${gomod}"
}

# apply_gomod_ops DIR PATCH: PATCH's go.mod changes made in DIR's go.mod
# (and staged), instead of merging its go.mod hunks.
apply_gomod_ops() {
  local dir=$1 ops op rest
  ops=$(gomod_ops "$2")
  [[ -n "${ops}" ]] || return 0
  if grep -q '^unknown ' <<<"${ops}"; then
    die "$(basename "$2") changes go.mod beyond require and replace lines, which make rebase cannot port: $(sed -n 's/^unknown //p' <<<"${ops}" | head -n 3 | paste -sd' ')"
  fi
  while read -r op rest; do
    # shellcheck disable=SC2086 # the words of the go.mod line
    apply_gomod_op "${dir}/go.mod" "${op}" ${rest}
  done <<<"${ops}"
  git -C "${dir}" add go.mod
}

# from_series_objects: FROM's series applied once in a scratch worktree of
# FROM's pristine tree, so that its repository has every blob the patches'
# index lines name (a patch's preimage may be an earlier patch's result).
from_series_objects() {
  local from_tree=${OUTPUT_DIR}/${FROM}/src/kubernetes scratch=${OUTPUT_DIR}/${FROM}/rebase-from patch
  git -C "${from_tree}" worktree remove --force "${scratch}" >/dev/null 2>&1 || rm -rf "${scratch}"
  git -C "${from_tree}" worktree prune
  git -C "${from_tree}" worktree add -q --detach "${scratch}" "refs/tags/$(sed -n 's/^version=//p' "${PATCHES_DIR}/${FROM}/UPSTREAM")"
  for patch in "${STATE}"/from/*.patch; do
    am_one "${scratch}" "${patch}" || die "patches/${FROM} does not apply on its own upstream (make verify-patches UPSTREAM=${FROM})"
  done
  git -C "${from_tree}" worktree remove --force "${scratch}"
}

# copy_preimages PATCH: the blobs PATCH's index lines name, from FROM's
# tree, so that git am -3 can merge.
copy_preimages() {
  local from_tree=${OUTPUT_DIR}/${FROM}/src/kubernetes blob
  for blob in $(sed -n 's/^index \([0-9a-f]\{40\}\)\.\.[0-9a-f]\{40\}.*/\1/p' "$1" | sort -u); do
    [[ "${blob}" =~ ^0+$ ]] && continue
    git_tree cat-file -e "${blob}" 2>/dev/null && continue
    git -C "${from_tree}" cat-file blob "${blob}" | git_tree hash-object -w --stdin >/dev/null
  done
}

# ---------------------------------------------------------------------------
# Stops for a human.

# conflict_report PATCH: each conflicted file with its conflicting lines in
# the tree and the hunks of PATCH that conflict there (those whose added
# lines are on the patch's side of a conflict).
conflict_report() {
  local patch=$1 file
  for file in $(git_tree diff --name-only --diff-filter=U); do
    local lines hunks
    lines=$(awk '/^<<<<<<< / { s = NR } /^>>>>>>> / && s { printf "%s%d-%d", sep, s, NR; sep = ", "; s = 0 }' "${TREE}/${file}")
    hunks=$(awk -v f="a/${file}" '
      FNR == 1 { pass++ }
      pass == 1 && /^=======$/ { theirs = 1; next }
      pass == 1 && /^>>>>>>> / { theirs = 0; next }
      pass == 1 { if (theirs) ours[$0] = 1; next }
      function done_hunk() { if (hunk != "" && added > 0 && found * 2 >= added) print "      " hunk; hunk = ""; added = found = 0 }
      /^diff --git / { done_hunk(); in_file = ($3 == f); next }
      in_file && /^@@ / { done_hunk(); hunk = $0; next }
      in_file && /^\+/ && !/^\+\+\+ / {
        t = substr($0, 2); gsub(/^[ \t]+|[ \t]+$/, "", t)
        if (length(t) > 2) { added++; if (substr($0, 2) in ours) found++ }
      }
      END { done_hunk() }
    ' "${TREE}/${file}" "${patch}")
    echo "  ${file}: conflict at lines ${lines:-?} of the tree, from the hunk"
    echo "${hunks:-      (see git -C $(rel "${TREE}") diff ${file})}"
  done
}

stop_for_human() {
  echo "$1" >&2
  cat >&2 <<EOF

The rebase stopped where a human is needed. In $(rel "${TREE}"):
  $2
then run again:
  ${COMMAND}
(to give up: ${COMMAND} ABORT=1)
EOF
  exit 1
}

# ---------------------------------------------------------------------------
# One patch.

# regenerate: runs upstream's generator of the feature lists in the tree.
regenerate() {
  local cmds
  cmds=$(sed -n 's/^go run \(.*\)$/\1/p' "${TREE}/${GENERATOR}")
  [[ -n "${cmds}" ]] || die "${GENERATOR} of ${TO} has no 'go run' commands to run"
  local cmd
  while IFS= read -r cmd; do
    log "  ${GENERATOR}: go run ${cmd}"
    # shellcheck disable=SC2086 # the generator's own words
    tree_go "${TREE}" run ${cmd} >&2
  done <<<"${cmds}"
  verify_no_drift "${TREE}" "refs/tags/${TO}" "${GENERATOR}"
  local other
  other=$(git_tree status --porcelain --untracked-files=normal | cut -c4- | while read -r f; do is_generated "${f}" || echo "${f}"; done)
  [[ -z "${other}" ]] || die "${GENERATOR} changed more than the feature lists: ${other//$'\n'/ }"
}

# finish_patch NAME: the feature lists, regenerated for TO, amend the
# commit of patch NAME.
finish_patch() {
  local name=$1
  [[ -f "${STATE}/generated-${name}" ]] || return 0
  if [[ -n "${PROXY_BLOCKED}" ]]; then
    log "  ${name}: feature lists not regenerated (${TO} cannot be built here: the proxy refuses ${PROXY_BLOCKED}); they carry the series' entries with ${from_dotted} rewritten to ${to_dotted}"
    return 0
  fi
  regenerate
  git_tree add -- "${GENERATED[@]}"
  if ! git_tree diff --cached --quiet; then
    GIT_COMMITTER_DATE=$(git_tree log -1 --format=%aD) git_tree commit -q --amend --no-edit
  fi
}

# mechanical DIR NAME: what replaying patch NAME does in DIR without a
# human: git am -3 of the prepared patch, then its go.mod changes (amended
# into the commit when git am made one). Fails when git am stopped; its
# output is in DIR's .git/podadmission-am.out.
mechanical() {
  local dir=$1 name=$2 gitdir
  gitdir=$(git -C "${dir}" rev-parse --absolute-git-dir)
  if git -C "${dir}" am -3 --quiet --committer-date-is-author-date --keep-cr "${STATE}/prepared-${name}" >"${gitdir}/podadmission-am.out" 2>&1; then
    apply_gomod_ops "${dir}" "${STATE}/from/${name}"
    if ! git -C "${dir}" diff --cached --quiet; then
      GIT_COMMITTER_DATE=$(git -C "${dir}" log -1 --format=%aD) git -C "${dir}" commit -q --amend --no-edit
    fi
    return 0
  fi
  apply_gomod_ops "${dir}" "${STATE}/from/${name}"
  return 1
}

# apply_patch NAME: the mechanical replay of FROM's patch NAME, then its
# recorded resolution if there is one.
apply_patch() {
  local name=$1 patch=${STATE}/from/$1 prepared=${STATE}/prepared-$1 out keep=0
  touches_generated "${patch}" && touch "${STATE}/generated-${name}"
  [[ -n "${PROXY_BLOCKED}" ]] && keep=1
  prepare "${patch}" "${prepared}" "${keep}"
  copy_preimages "${prepared}"
  echo "${name}" >"${STATE}/current"
  local resolution=${RESOLUTIONS}/${name%.patch}.diff
  if mechanical "${TREE}" "${name}"; then
    if [[ -f "${resolution}" ]]; then
      apply_resolution "${name}" "${resolution}" amend
      log "  ${name}: applied, with $(rel "${resolution}")"
    else
      log "  ${name}: applied"
    fi
    return 0
  fi
  if [[ -n "$(git_tree diff --name-only --diff-filter=U)" && -f "${resolution}" ]]; then
    apply_resolution "${name}" "${resolution}" continue
    log "  ${name}: conflicts resolved by $(rel "${resolution}")"
    return 0
  fi
  if [[ -z "$(git_tree diff --name-only --diff-filter=U)" ]]; then
    out=$(cat "${TREE}/.git/podadmission-am.out")
    git_tree am --abort >/dev/null 2>&1 || true
    die "$(rel "${PATCHES_DIR}/${FROM}/${name}") does not apply on ${TO} even with a 3-way merge:"$'\n'"${out}"
  fi
  stop_for_human "error: $(rel "${PATCHES_DIR}/${FROM}/${name}") does not apply on ${TO}; git am -3 left conflicts:
$(conflict_report "${prepared}")" \
    "resolve them (edit, fix what ${TO}'s API needs, git add FILE...)"
}

# apply_resolution NAME DIFF MODE: applies a recorded resolution to the
# working tree and commits it: MODE amend (git am succeeded) or continue
# (git am stopped with conflicts).
apply_resolution() {
  local name=$1 diff=$2 mode=$3 out
  if ! out=$(git_tree apply --whitespace=nowarn "${diff}" 2>&1); then
    stop_for_human "error: the recorded resolution $(rel "${diff}") no longer applies to ${name} (${FROM}'s patch or ${TO} changed):
${out}
$([[ "${mode}" == continue ]] && conflict_report "${STATE}/prepared-${name}")" \
      "make the tree right for ${name} by hand (the old resolution shows what was done), git add FILE..."
  fi
  finish_human_edit "${name}" "${mode}"
}

# finish_human_edit NAME MODE: commits what is in the working tree as the
# commit of patch NAME, once no conflict is left.
finish_human_edit() {
  local name=$1 mode=$2 markers
  markers=$(git_tree diff --name-only HEAD | while read -r f; do
    [[ -f "${TREE}/${f}" ]] && grep -lE '^(<<<<<<<|>>>>>>>) ' "${TREE}/${f}" 2>/dev/null
  done || true)
  [[ -z "${markers}" ]] || stop_for_human "error: conflict markers are left in ${markers//$'\n'/ } (${name})" "remove them, git add FILE..."
  git_tree add -A
  if [[ "${mode}" == continue ]]; then
    git_tree am --continue --quiet >/dev/null
  elif ! git_tree diff --cached --quiet; then
    GIT_COMMITTER_DATE=$(git_tree log -1 --format=%aD) git_tree commit -q --amend --no-edit
  fi
}

# resume: the patch a stopped rebase was on, finished from what the human
# left in the tree (resolved conflicts, edits, or a commit).
resume() {
  local name
  name=$(cat "${STATE}/current" 2>/dev/null || true)
  [[ -n "${name}" ]] || return 0
  if [[ -d "${TREE}/.git/rebase-apply" ]]; then
    local unmerged
    unmerged=$(git_tree diff --name-only --diff-filter=U)
    [[ -z "${unmerged}" ]] || stop_for_human "error: ${name}: still unmerged: ${unmerged//$'\n'/ }" "resolve them, git add FILE..."
    finish_human_edit "${name}" continue
  elif [[ "$(git_tree log -1 --format=%s)" == "$(sed -n 's/^Subject: \[PATCH\] //p' "${STATE}/prepared-${name}" | head -n1)"* ]]; then
    finish_human_edit "${name}" amend
  else
    die "${name} was being applied, but $(rel "${TREE}") has neither a git am in progress nor its commit on top; give up with ${COMMAND} ABORT=1"
  fi
  log "  ${name}: finished by hand"
  finish_patch "${name}"
  rm -f "${STATE}/current"
  touch "${STATE}/done-${name}"
}

# ---------------------------------------------------------------------------
# After the last patch.

# compile_check: the packages the series touches build and vet in TO's
# tree, with this module staged.
compile_check() {
  if grep -qE '^(fixup|squash|amend)! ' <<<"$(git_tree log --format=%s "refs/tags/${TO}..HEAD")"; then
    log "squashing the fixup commits"
    GIT_SEQUENCE_EDITOR=: GIT_EDITOR=: git_tree rebase -q -i --autosquash --committer-date-is-author-date "refs/tags/${TO}" >&2 ||
      stop_for_human "error: git rebase --autosquash stopped (above)" "finish it with git rebase --continue"
  fi
  if [[ -n "${PROXY_BLOCKED}" ]]; then
    log "not compiled: ${TO} cannot be built here (the proxy refuses ${PROXY_BLOCKED}); review the series in $(rel "${TREE}") (git log ${TO}..), commit fixes with git commit --fixup=<commit> and run ${COMMAND} again"
    return 0
  fi
  to_env "${REPO_ROOT}/build/source.sh" stage >/dev/null
  local pkgs
  pkgs=$(git_tree diff --name-only "refs/tags/${TO}" HEAD -- '*.go' | xargs -r -n1 dirname | LC_ALL=C sort -u | sed 's#^#./#')
  log "compiling and vetting the packages the series touches on ${TO}: $(paste -sd' ' <<<"${pkgs}")"
  local out
  # shellcheck disable=SC2086
  if ! out=$(tree_go "${TREE}" vet ${pkgs} 2>&1); then
    git_tree checkout -q -- go.mod go.sum 2>/dev/null || true
    stop_for_human "error: the series does not build or vet on ${TO}:
$(grep -v '^#' <<<"${out}" | head -n 30)" \
      "fix it, commit each fix with git commit --fixup=<the commit it belongs to> (git log --oneline ${TO}..)"
  fi
  verify_no_drift "${TREE}" "refs/tags/${TO}" "go vet in the rebased tree"
}

# export_series: the patches, their recorded resolutions, SERIES_VERSION.
export_series() {
  export_patches "${TREE}" "refs/tags/${TO}" "${TO_DIR}"
  record_resolutions
  local before now version
  before=$(cat "${STATE}/old-series")
  now=$(UPSTREAM=${TO_MINOR} bash -c 'source "$0"; series_hash' "${REPO_ROOT}/build/lib.sh")
  version=$(cat "${STATE}/old-series-version")
  # A new series, or one for another upstream release, starts at 1; the
  # same release with other patches is the next revision.
  if [[ "$(cat "${STATE}/old-version")" != "${TO}" || -z "${before}" ]]; then
    version=1
  elif [[ "${before}" != "${now}" ]]; then
    version=$((version + 1))
  fi
  echo "${version}" >"${TO_DIR}/SERIES_VERSION"
  echo "$(git_tree rev-parse HEAD) ${now}" >"${TREE}/.git/podadmission-series"
  # The tree changed behind make's back: its binaries are out of date.
  rm -f "${OUTPUT_DIR}/${TO_MINOR}/stamps/source"
}

# record_resolutions: for every patch, what the final commit changed after
# git am -3 of FROM's patch on the final commit before it (conflicts
# resolved, fixes for TO's API), without the regenerated files.
record_resolutions() {
  local scratch=${OUTPUT_DIR}/${TO_MINOR}/rebase-replay
  git_tree worktree remove --force "${scratch}" >/dev/null 2>&1 || rm -rf "${scratch}"
  git_tree worktree prune
  git_tree worktree add -q --detach "${scratch}" "refs/tags/${TO}"
  rm -rf "${RESOLUTIONS}.tmp"
  mkdir -p "${RESOLUTIONS}.tmp"
  local commits name i=0 exclude=()
  mapfile -t commits < <(git_tree rev-list --reverse "refs/tags/${TO}..HEAD")
  local g
  for g in "${GENERATED[@]}"; do
    exclude+=(":(exclude)${g}")
  done
  for name in $(cat "${STATE}/series"); do
    local final=${commits[${i}]} mechanical
    mechanical "${scratch}" "${name}" || true
    git -C "${scratch}" add -A
    mechanical=$(git -C "${scratch}" write-tree)
    git -C "${scratch}" am --abort >/dev/null 2>&1 || true
    git -C "${scratch}" diff --no-ext-diff --no-color "${mechanical}" "${final}" -- . "${exclude[@]}" >"${RESOLUTIONS}.tmp/${name%.patch}.diff"
    [[ -s "${RESOLUTIONS}.tmp/${name%.patch}.diff" ]] || rm "${RESOLUTIONS}.tmp/${name%.patch}.diff"
    git -C "${scratch}" checkout -q --detach "${final}"
    i=$((i + 1))
  done
  git_tree worktree remove --force "${scratch}"
  rm -rf "${RESOLUTIONS}"
  if [[ -n "$(ls -A "${RESOLUTIONS}.tmp")" ]]; then
    mv "${RESOLUTIONS}.tmp" "${RESOLUTIONS}"
    log "recorded resolutions: $(ls "${RESOLUTIONS}" | paste -sd' ')"
  else
    rmdir "${RESOLUTIONS}.tmp"
  fi
}

# ---------------------------------------------------------------------------

# Fixup commits on top of the series a rebase just exported: squash them in
# and export again, with the same state.
if [[ ! -d "${STATE}" && -d "${STATE}-done" && "$(cat "${STATE}-done/command")" == "${COMMAND}" ]] &&
  [[ -f "${TREE}/.git/podadmission-series" ]]; then
  exported=$(cut -d' ' -f1 "${TREE}/.git/podadmission-series")
  if [[ "$(git_tree rev-parse HEAD)" != "${exported}" ]] && git_tree merge-base --is-ancestor "${exported}" HEAD &&
    ! grep -qvE '^(fixup|squash|amend)! ' <<<"$(git_tree log --format=%s "${exported}..HEAD")"; then
    log "squashing the fixup commits on top of the exported series into it"
    mv "${STATE}-done" "${STATE}"
  fi
fi

if [[ ! -d "${STATE}" ]]; then
  # A new rebase: FROM's tree for the merge bases, TO's facts and pristine
  # tree, and a snapshot of FROM's series.
  UPSTREAM=${FROM} "${REPO_ROOT}/build/source.sh" pristine >/dev/null
  old_version=$(sed -n 's/^version=//p' "${TO_DIR}/UPSTREAM" 2>/dev/null || true)
  old_series_version=$(cat "${TO_DIR}/SERIES_VERSION" 2>/dev/null || echo 0)
  old_series=""
  if compgen -G "${TO_DIR}/*.patch" >/dev/null; then
    old_series=$(UPSTREAM=${TO_MINOR} bash -c 'source "$0"; series_hash' "${REPO_ROOT}/build/lib.sh")
  fi
  if [[ -e "${TREE}" ]]; then
    git_tree rev-parse -q --verify "refs/tags/${TO}" >/dev/null ||
      die "$(rel "${TREE}") is the tree of $(git_tree describe --tags --abbrev=0 2>/dev/null || echo another release), not ${TO}; export or drop its work (make patches UPSTREAM=${TO_MINOR}), remove it and run ${COMMAND} again"
    refuse_to_lose_work "${TREE}" "${TREE}/.git/podadmission-series" "${TO_DIR}"
  fi
  write_facts
  to_env "${REPO_ROOT}/build/source.sh" pristine >/dev/null
  mkdir -p "${STATE}/from"
  echo "${COMMAND}" >"${STATE}/command"
  echo "${old_version}" >"${STATE}/old-version"
  echo "${old_series_version}" >"${STATE}/old-series-version"
  echo "${old_series}" >"${STATE}/old-series"
  (UPSTREAM=${FROM} bash -c 'source "$0"; series_patches' "${REPO_ROOT}/build/lib.sh") | while read -r p; do
    cp "${p}" "${STATE}/from/"
    basename "${p}"
  done >"${STATE}/series"
  [[ -s "${STATE}/series" ]] || die "patches/${FROM} has no patches"
  from_series_objects
  git_tree checkout -q -B podadmission "refs/tags/${TO}"
  rm -f "${TREE}/.git/podadmission-series"
  log "replaying $(wc -l <"${STATE}/series") patches of patches/${FROM} on ${TO} ($(rel "${TREE}"))"
else
  [[ "$(cat "${STATE}/command")" == "${COMMAND}" ]] ||
    die "$(rel "${TREE}") has another rebase in progress: $(cat "${STATE}/command") (give it up with ABORT=1)"
  log "continuing ${COMMAND}"
fi

PROXY_BLOCKED=$(sed -n 's/^proxy_refuses=//p' "${TO_DIR}/UPSTREAM")
# Every go command from here on runs in TO's tree, with TO's Go.
GO_TOOLCHAIN=$(sed -n 's/^toolchain=//p' "${TO_DIR}/UPSTREAM")

resume
for name in $(cat "${STATE}/series"); do
  [[ -f "${STATE}/done-${name}" ]] && continue
  apply_patch "${name}"
  finish_patch "${name}"
  rm -f "${STATE}/current"
  touch "${STATE}/done-${name}"
done
compile_check
export_series
# Kept so that fixup commits made after the export can be squashed in.
rm -rf "${STATE}-done"
mv "${STATE}" "${STATE}-done"
"${REPO_ROOT}/build/minors-table.sh" --write
to_env "${REPO_ROOT}/build/verify-patches.sh"
log "patches/${TO_MINOR}: $(ls "${TO_DIR}"/*.patch | wc -l) patches on ${TO}, revision $(cat "${TO_DIR}/SERIES_VERSION")"
git -C "${REPO_ROOT}" status --short -- "$(rel "${TO_DIR}")" >&2
