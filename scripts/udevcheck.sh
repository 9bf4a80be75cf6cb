#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# udevcheck: systemd-sysusers makes the group rdmalog from
# udev/rdmalog.sysusers (in a scratch root), and udev parses
# udev/60-rdmalog.rules and the rule gives a misc device the group
# rdmalog and mode 0660. /dev/rdmalog exists only with
# the module loaded (never on a build host), so "udevadm test" runs the
# rule, with KERNEL=="rdmalog" changed to KERNEL=="fuse", on the fuse misc
# device, inside a private mount namespace whose /run, /dev and
# /etc/group are scratch copies: nothing on the host is changed, and the
# group need not exist. Needs root, unshare(1) and udevadm(8); says
# "skipped" and exits 0 without them.
set -uo pipefail
cd "$(dirname "$0")/.."
rule=${RULE:-udev/60-rdmalog.rules}
# The gid udev should find: the host's group, else the scratch one.
gid=$(getent group rdmalog | cut -d: -f3)
gid=${gid:-999}
dev=/sys/class/misc/fuse

skip() {
	echo "udevcheck: skipped: $*"
	exit 0
}

[ "$(id -u)" -eq 0 ] || skip "needs root (a mount namespace)"

if command -v systemd-sysusers >/dev/null; then
	root=$(mktemp -d)
	trap 'rm -rf "$root"' EXIT
	mkdir -p "$root/etc"
	systemd-sysusers --root="$root" "$(realpath udev/rdmalog.sysusers)" >/dev/null 2>&1 &&
		grep -q '^rdmalog:x:[0-9]*:$' "$root/etc/group" ||
		{ echo "udevcheck: systemd-sysusers makes no group rdmalog from udev/rdmalog.sysusers" >&2; exit 1; }
	echo "udevcheck: udev/rdmalog.sysusers makes $(grep '^rdmalog:' "$root/etc/group")"
else
	echo "udevcheck: no systemd-sysusers: udev/rdmalog.sysusers not checked"
fi

command -v udevadm >/dev/null || skip "no udevadm"
command -v unshare >/dev/null || skip "no unshare"
[ -e "$dev" ] || skip "no $dev to run the rule on"
grep -qE '^KERNEL=="rdmalog", SUBSYSTEM=="misc",' "$rule" ||
	{ echo "udevcheck: $rule does not match KERNEL==\"rdmalog\" in misc" >&2; exit 1; }

out=$(unshare -m --propagation private bash -c '
	set -e
	rule=$1
	scratch=$(mktemp -d)
	cp /etc/group "$scratch/group"
	grep -q "^rdmalog:" "$scratch/group" || echo "rdmalog:x:$2:" >> "$scratch/group"
	mount --bind "$scratch/group" /etc/group
	mount -t tmpfs tmpfs /run
	mkdir -p /run/udev/rules.d
	sed "s/KERNEL==\"rdmalog\"/KERNEL==\"fuse\"/" "$rule" > /run/udev/rules.d/60-rdmalog.rules
	mount -t tmpfs tmpfs /dev
	mknod -m 0666 /dev/null c 1 3
	udevadm test --action=add /sys/class/misc/fuse 2>&1
' udevcheck "$(realpath "$rule")" "$gid") || { echo "$out" >&2; echo "udevcheck: udevadm test failed" >&2; exit 1; }

lines=$(grep '60-rdmalog.rules' <<<"$out")
echo "$lines" | sed 's/^/udevcheck:   /'
bad=0
if grep -qiE 'invalid|unknown|error|ignoring' <<<"$lines"; then
	echo "udevcheck: udev complains about $rule" >&2
	bad=1
fi
grep -qE "60-rdmalog.rules:[0-9]+ GROUP $gid\$" <<<"$lines" ||
	{ echo "udevcheck: the rule does not set GROUP rdmalog" >&2; bad=1; }
grep -qE '60-rdmalog.rules:[0-9]+ MODE 0660$' <<<"$lines" ||
	{ echo "udevcheck: the rule does not set MODE 0660" >&2; bad=1; }
[ "$bad" -eq 0 ] && echo "udevcheck: $rule parses and sets group rdmalog, mode 0660"
exit "$bad"
