# The part every podadmission-kubelet package script shares (the .deb's
# maintainer scripts, the .rpm's scriptlets): build/deb/build.sh and
# build/rpm/build.sh put it in place of the @COMMON@ line of each script,
# with @MINOR@, @VERSION@ and @TOOLS@ (dpkg/apt, rpm/dnf) filled in.
# POSIX sh: it runs under dash and busybox sh.

PACKAGE=podadmission-kubelet
MINOR=@MINOR@
VERSION=@VERSION@
FORCE_FILE=/etc/kubernetes/podadmission-force-minor
CONFIG_DIR=/etc/kubernetes/pod-admission
PLUGIN_DIR=/usr/libexec/kubernetes/pod-admission
DROPIN=/usr/share/podadmission-kubelet/10-podadmission.conf
DROPIN_LINK=/etc/systemd/system/kubelet.service.d/10-podadmission.conf
# The plugin daemons' units the package ships, disabled.
PLUGIN_UNITS=pod-security-plugin-grpc.service

# minor_of OUTPUT: the minor (1.37) in a kubelet's --version output.
minor_of() {
	printf '%s\n' "$1" | sed -n 's/^Kubernetes v\([0-9][0-9]*\.[0-9][0-9]*\)\..*/\1/p' | head -n 1
}

# check_minor STOCK LATER: refuses (exit 1) to replace the stock kubelet
# STOCK when it is of another minor than this package's, unless forced;
# LATER says what happens to a kubelet package installed after this one.
check_minor() {
	stock=$1
	if [ ! -e "$stock" ]; then
		echo "$PACKAGE: there is no stock kubelet at $stock; $2"
		return 0
	fi
	out=$(timeout 30 "$stock" --version 2>&1) || out="$out (exit status $?)"
	minor=$(minor_of "$out")
	if [ "$minor" = "$MINOR" ]; then
		echo "$PACKAGE: the stock kubelet $stock is v$MINOR ($out), as this package"
		return 0
	fi
	if [ -n "$minor" ]; then
		what="a v$minor kubelet"
	else
		what="a kubelet whose --version does not say its minor"
	fi
	if [ -n "${PODADMISSION_FORCE_MINOR:-}" ] || [ -e "$FORCE_FILE" ]; then
		echo "$PACKAGE: warning: the stock kubelet $stock is $what ($out); this package is the v$MINOR kubelet $VERSION; installing anyway (forced)" >&2
		return 0
	fi
	cat >&2 <<EOM
$PACKAGE: refusing to install: the stock kubelet $stock is $what
  ($stock --version: $out),
  but this package is the v$MINOR kubelet $VERSION.
  Install the podadmission-kubelet built for the stock kubelet's minor, or, to
  replace it anyway, set PODADMISSION_FORCE_MINOR=1 for @TOOLS@ or create
  $FORCE_FILE.
EOM
	exit 1
}

# validate: podadmctl validate on the configuration directory; reports what
# to fix, never fails the installation (the gate is off until linked).
validate() {
	if out=$(/usr/bin/podadmctl validate "$CONFIG_DIR" --bin-dir "$PLUGIN_DIR" 2>&1); then
		printf '%s\n' "$out" | sed "s/^/$PACKAGE: /"
	else
		printf '%s\n' "$out" | sed "s/^/$PACKAGE: /" >&2
		echo "$PACKAGE: warning: fix the errors above in $CONFIG_DIR before the kubelet runs with the PodAdmissionPlugin gate on: it refuses to start on an invalid configuration. Check again with: podadmctl validate $CONFIG_DIR --bin-dir $PLUGIN_DIR" >&2
	fi
}

# next_steps KEPT: what is installed, where the stock kubelet is kept, the
# gate's state and how to change it.
next_steps() {
	echo "$PACKAGE: /usr/bin/kubelet is now $(/usr/bin/kubelet --version) ($VERSION); the stock kubelet is kept as $1."
	if [ -e "$DROPIN_LINK" ]; then
		echo "$PACKAGE: the PodAdmissionPlugin gate is on ($DROPIN_LINK)."
	else
		echo "$PACKAGE: the PodAdmissionPlugin gate is off; to turn it on: mkdir -p ${DROPIN_LINK%/*} && ln -s $DROPIN $DROPIN_LINK"
	fi
	echo "$PACKAGE: nothing was restarted; the new kubelet runs after: systemctl daemon-reload && systemctl restart kubelet"
}

# stock_changed FILE WHERE: the kubelet package put a new stock kubelet at
# FILE (described as WHERE); warns when it is of another minor.
stock_changed() {
	[ -e "$1" ] || return 0
	out=$(timeout 30 "$1" --version 2>&1) || true
	if [ "$(minor_of "$out")" = "$MINOR" ]; then
		echo "$PACKAGE: the stock kubelet $2 is now $out; /usr/bin/kubelet stays $VERSION"
	else
		echo "$PACKAGE: warning: the stock kubelet $2 is now $out, not v$MINOR; /usr/bin/kubelet stays the v$MINOR kubelet $VERSION: install the podadmission-kubelet built for the new minor, or remove this package to run the stock kubelet" >&2
	fi
}

# remove_dropin_link: the link that turns the gate on goes with the package
# (the stock kubelet refuses the flags it passes); anything else stays.
remove_dropin_link() {
	if [ -L "$DROPIN_LINK" ] && [ "$(readlink "$DROPIN_LINK")" = "$DROPIN" ]; then
		echo "$PACKAGE: removing $DROPIN_LINK, the link to the drop-in this package shipped"
		rm -f "$DROPIN_LINK"
	elif [ -e "$DROPIN_LINK" ]; then
		echo "$PACKAGE: warning: $DROPIN_LINK is not a link to $DROPIN; remove it yourself if it passes pod admission flags: the stock kubelet refuses them" >&2
	fi
}

# disable_plugin_units: the plugin daemons go with the package. A running
# one is stopped (its binary is about to go), and the links that enabled it
# (systemctl enable's, in a .wants or .requires directory) are removed: left
# behind, they would name a unit that no longer exists. A unit file of the
# operator's own in /etc/systemd/system is theirs, and so are its links.
disable_plugin_units() {
	for unit in $PLUGIN_UNITS; do
		[ ! -e "/etc/systemd/system/$unit" ] || continue
		if [ -d /run/systemd/system ] && systemctl is-active --quiet "$unit" 2>/dev/null; then
			echo "$PACKAGE: stopping $unit"
			systemctl stop "$unit" || true
		fi
		for link in /etc/systemd/system/*.wants/"$unit" /etc/systemd/system/*.requires/"$unit"; do
			[ -L "$link" ] || continue
			echo "$PACKAGE: removing $link, which enabled $unit"
			rm -f "$link"
		done
	done
}

# reload_systemd: a running systemd learns of the units the package added
# or removed; nothing is started or restarted.
reload_systemd() {
	if [ -d /run/systemd/system ]; then
		systemctl daemon-reload || true
	fi
}
