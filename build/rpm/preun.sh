# %preun on erase ($1 = 0): the stock kubelet back, the gate's link gone.
# An upgrade of this package ($1 = 1) changes neither.
set -e
@COMMON@
@RPM_COMMON@
if [ "$1" = 0 ]; then
	give_back
	remove_dropin_link
fi
