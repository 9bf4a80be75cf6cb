#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The README's first commands on a fresh machine, as a new user runs them:
# a minbase Debian root (debootstrap), only git and make added, this
# repository cloned into it, then each TARGET run as the very first
# command in the clone, inside the root (chroot, with /proc, /sys and
# /dev mounted; QEMU runs there under TCG).
#
#   selftests/fresh-root.sh [-r RELEASE] [-d DIR] [-k] [TARGET...]
#
#   -r RELEASE  bookworm (default) or trixie
#   -d DIR      where the root goes (default /srv/rdmalog-fresh-RELEASE);
#               an existing DIR is removed first, unless -k
#   -k          keep and reuse DIR if it holds a root already (the clone
#               is always made anew)
#   TARGET      make targets, run in this order (default: demo check)
#
# Needs root and debootstrap on the host (apt-get install debootstrap).
# The mirror is the host's (the first deb.debian.org-style URI in its apt
# sources), so nothing else is reached. Each target's output goes to
# DIR/root/TARGET.log as well as to stdout; the exit status is the first
# failing target's.
set -euo pipefail

release=bookworm
dir=
keep=0
while getopts "r:d:k" opt; do
	case $opt in
	r) release=$OPTARG ;;
	d) dir=$OPTARG ;;
	k) keep=1 ;;
	*) echo "usage: $0 [-r RELEASE] [-d DIR] [-k] [TARGET...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(demo check)
dir=${dir:-/srv/rdmalog-fresh-$release}
repo=$(cd "$(dirname "$0")/.." && pwd)

[ "$(id -u)" -eq 0 ] || { echo "fresh-root: needs root" >&2; exit 1; }
command -v debootstrap >/dev/null ||
	{ echo "fresh-root: apt-get install debootstrap" >&2; exit 1; }

mirror=$(grep -rhoE '^(URIs:|deb) +https?://[^ ]*debian/?( |$)' \
	/etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
	awk '{print $2}' | head -n 1 || true)
mirror=${mirror:-http://deb.debian.org/debian}

umount_all() {
	local m
	for m in dev/pts dev sys proc; do
		mountpoint -q "$dir/$m" && umount -l "$dir/$m"
	done
	return 0
}
trap umount_all EXIT

if [ "$keep" -eq 0 ] || [ ! -x "$dir/usr/bin/apt-get" ]; then
	umount_all
	rm -rf "$dir"
	echo "fresh-root: debootstrap --variant=minbase $release $dir $mirror"
	debootstrap --variant=minbase "$release" "$dir" "$mirror" >/dev/null
	# the release's security updates, as on an installed system
	sec=${mirror%/debian}/debian-security
	cat > "$dir/etc/apt/sources.list" <<-EOF
	deb $mirror $release main
	deb $mirror $release-updates main
	deb $sec $release-security main
	EOF
fi

mount -t proc proc "$dir/proc"
mount --rbind /sys "$dir/sys"
mount --bind /dev "$dir/dev"
mount --bind /dev/pts "$dir/dev/pts"
cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true

in_root() {
	chroot "$dir" /usr/bin/env -i HOME=/root TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		LANG=C.UTF-8 /bin/bash -c "$1"
}

echo "fresh-root: apt-get install git make (nothing else)"
in_root "apt-get update -q >/dev/null && \
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	--no-install-recommends git make ca-certificates >/dev/null"

rm -rf "$dir/root/rdmalog" "$dir/root/rdmalog.git"
git clone -q --bare "$repo" "$dir/root/rdmalog.git"
in_root "git clone -q /root/rdmalog.git /root/rdmalog"

rc=0
for t in "${targets[@]}"; do
	echo "fresh-root: [$release] cd rdmalog && make $t"
	t0=$(date +%s)
	if in_root "cd /root/rdmalog && make $t" 2>&1 | tee "$dir/root/$t.log"; then
		echo "fresh-root: make $t: ok in $(($(date +%s) - t0))s"
	else
		echo "fresh-root: make $t: FAILED after $(($(date +%s) - t0))s" \
		     "(log: $dir/root/$t.log)"
		rc=1
		break
	fi
done
exit $rc
