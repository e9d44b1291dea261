# %transfiletriggerpostun on /usr/bin/kubelet: a package owning it was
# erased. If it took /usr/bin/kubelet (ours) with it, its kubelet kept
# aside belongs to no package any more: drop it and link ours again.
set -e
@COMMON@
@RPM_COMMON@
if [ ! -e "$KUBELET" ] && [ ! -L "$KUBELET" ]; then
	rm -f "$STOCK"
	take_over
	echo "$PACKAGE: the kubelet package was removed; /usr/bin/kubelet stays $VERSION"
fi
