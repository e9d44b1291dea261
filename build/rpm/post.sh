# %post: podadmctl validate on the configuration; reports, never fails.
set -e
@COMMON@
reload_systemd
validate
