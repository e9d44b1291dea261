# shellcheck shell=bash
# render_script TEMPLATE TOOLS: prints a package script template with its
# @COMMON@ line replaced by build/pkgscripts/common.sh and @MINOR@,
# @VERSION@, @TOOLS@ filled in from PKG_MINOR, PKG_VERSION and TOOLS (the
# package tools an operator forces a minor through: "dpkg/apt", "rpm/dnf").
# Sourced by build/deb/build.sh and build/rpm/build.sh.
render_script() {
  local template=$1 tools=$2
  sed -e "/^@COMMON@\$/{r ${REPO_ROOT}/build/pkgscripts/common.sh" -e 'd}' "${template}" |
    sed -e "s/@MINOR@/${PKG_MINOR}/g" -e "s/@VERSION@/${PKG_VERSION}/g" -e "s#@TOOLS@#${tools}#g"
}
