# %preun on erase ($1 = 0): the stock kubelet back, the gate's link gone,
# the plugin daemons stopped and no longer enabled.
# An upgrade of this package ($1 = 1) changes neither.
set -e
@COMMON@
@RPM_COMMON@
if [ "$1" = 0 ]; then
	give_back
	remove_dropin_link
	disable_plugin_units
fi
