# %transfiletriggerin on /usr/bin/: rpm matches an "in" trigger's prefix
# against directory names, so it cannot name /usr/bin/kubelet itself; its
# standard input lists the files of /usr/bin/ the transaction installed.
# When the kubelet package (installed or upgraded) wrote /usr/bin/kubelet,
# keep that kubelet aside and link ours back; any other file is not ours.
set -e
@COMMON@
@RPM_COMMON@
written=
while read -r file; do
	[ "$file" != "$KUBELET" ] || written=1
done
[ -z "$written" ] || take_over
