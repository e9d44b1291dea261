# %transfiletriggerin on /usr/bin/kubelet: a package (the kubelet package,
# installed or upgraded) wrote /usr/bin/kubelet: keep it aside, ours back.
set -e
@COMMON@
@RPM_COMMON@
take_over
