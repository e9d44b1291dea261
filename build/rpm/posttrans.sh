# %posttrans: once every package of the transaction is in place, ours is
# /usr/bin/kubelet.
set -e
@COMMON@
@RPM_COMMON@
take_over
next_steps "$STOCK"
