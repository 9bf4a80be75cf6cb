#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The kernels rdmalog builds for and boots its test VMs with.
#
#   tools/kernels.sh default      the release's default kernel: the one
#                                 Debian's linux-image-amd64 depends on
#                                 (6.1 on Debian 12, 6.12 on Debian 13),
#                                 when its headers are installed; else the
#                                 newest kernel with headers
#   tools/kernels.sh extra [KVER] the newest kernel of every series
#                                 (major.minor) newer than KVER's (default:
#                                 the default kernel) that has headers, an
#                                 image and modules: on Debian 12 with
#                                 "make deps", its 6.12
#
# Prints kernel releases (uname -r style), nothing when there is none.
# Used by the Makefile and selftests/vm/cluster.py; reads only what is
# installed, so it gives the same answer before and after "make deps" only
# when nothing was installed in between.
set -eu

headers() {	# kernels with headers, oldest first
	for b in /lib/modules/*/build; do
		[ -d "$b" ] && basename "$(dirname "$b")"
	done | sort -V
}

series() { echo "$1" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p'; }

default() {
	k=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
		sed -n 's/^linux-image-\([^ ,]*\).*/\1/p') || k=
	if [ -n "$k" ] && [ -d "/lib/modules/$k/build" ]; then
		echo "$k"
	else
		headers | tail -n 1
	fi
}

extra() {
	base=$(series "${1:-$(default)}")
	[ -n "$base" ] || return 0
	headers | while read -r k; do
		if [ ! -f "/boot/vmlinuz-$k" ] || [ ! -d "/lib/modules/$k/kernel" ]; then
			continue
		fi
		s=$(series "$k")
		# only series newer than the base one
		newest=$(printf '%s\n%s\n' "$base" "$s" | sort -V | tail -n 1)
		if [ "$s" != "$base" ] && [ "$newest" = "$s" ]; then
			echo "$s $k"
		fi
	done | sort -V | awk '{ last[$1] = $2; if (!($1 in seen)) { seen[$1] = 1; order[n++] = $1 } }
		END { for (i = 0; i < n; i++) print last[order[i]] }'
}

case "${1:-}" in
default) default ;;
extra) extra "${2:-}" ;;
*) echo "usage: $0 default | extra [KVER]" >&2; exit 2 ;;
esac
