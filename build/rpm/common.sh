# The .rpm's own part of every scriptlet (after build/pkgscripts/common.sh):
# rpm has no dpkg-divert, so the package ships its kubelet as OURS and
# makes /usr/bin/kubelet a symbolic link to it, keeping the stock kubelet
# that the kubelet package installed there as STOCK (a rename: the same
# inode, bytes, mode and owner). The kubelet package keeps writing its
# binary to /usr/bin/kubelet (rpm renames a new file over the link), and
# this package's file triggers (on /usr/bin/, see triggerin.sh) take it
# aside again.

KUBELET=/usr/bin/kubelet
OURS=/usr/libexec/podadmission-kubelet/kubelet
STOCK=/usr/libexec/podadmission-kubelet/kubelet.stock

is_ours() {
	[ -L "$KUBELET" ] && [ "$(readlink "$KUBELET")" = "$OURS" ]
}

# take_over: /usr/bin/kubelet becomes the link to ours; a stock kubelet
# there is kept as STOCK, replacing the one kept before (the kubelet
# package upgraded it). Idempotent; /usr/bin/kubelet never goes missing.
take_over() {
	is_ours && return 0
	if [ -e "$KUBELET" ] || [ -L "$KUBELET" ]; then
		rm -f "$STOCK"
		ln "$KUBELET" "$STOCK" 2>/dev/null || cp -p "$KUBELET" "$STOCK"
		echo "$PACKAGE: keeping the stock kubelet $KUBELET as $STOCK"
		stock_changed "$STOCK" "kept as $STOCK"
	fi
	ln -sfn "$OURS" "$KUBELET.podadmission-new"
	mv -f "$KUBELET.podadmission-new" "$KUBELET"
}

# give_back: the stock kubelet back at /usr/bin/kubelet, byte for byte, or
# no /usr/bin/kubelet if there was none; what is not ours is left alone.
give_back() {
	is_ours || return 0
	if [ -e "$STOCK" ]; then
		mv -f "$STOCK" "$KUBELET"
		echo "$PACKAGE: /usr/bin/kubelet is the stock kubelet again; nothing was restarted: systemctl daemon-reload && systemctl restart kubelet"
	else
		rm -f "$KUBELET"
		echo "$PACKAGE: removed /usr/bin/kubelet: there was no stock kubelet to put back"
	fi
}
