# %pre: refuse to replace a stock kubelet of another minor (forced with
# PODADMISSION_FORCE_MINOR=1 or /etc/kubernetes/podadmission-force-minor).
set -e
@COMMON@
@RPM_COMMON@
if is_ours; then
	check_minor "$STOCK" "a kubelet package installed later is kept as $STOCK"
else
	check_minor "$KUBELET" "a kubelet package installed later is kept as $STOCK"
fi
