#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what rdmalog needs to build, lint and test, from Debian's
# packages only. Idempotent: packages already present are left alone and
# apt is not touched at all when nothing is missing. Every entry point
# (make demo, make check, make deps, .ci/run) runs this first.
set -euo pipefail

# The release's own kernel (what rdmalog.ko builds against and the QEMU
# test cluster boots by default) and its linux-source (kselftest headers,
# checkpatch.pl and siw, extracted at build time). Debian 12 also gets its
# Linux 6.12 from the security archive (the metapackages follow the
# newest ABI), for the 6.12 build, lint and smoke tests of "make check".
. /etc/os-release
case "${VERSION_ID:-}" in
12)	kernel_pkgs=(linux-image-amd64 linux-headers-amd64 linux-source-6.1
		     linux-image-6.12-amd64 linux-headers-6.12-amd64
		     linux-source-6.12) ;;
13)	kernel_pkgs=(linux-image-amd64 linux-headers-amd64 linux-source-6.12) ;;
*)	echo "deps: Debian ${VERSION_ID:-?} unknown, assuming 12's kernels" >&2
	kernel_pkgs=(linux-image-amd64 linux-headers-amd64 linux-source-6.1) ;;
esac

pkgs=(
	"${kernel_pkgs[@]}"
	build-essential
	bc flex bison libelf-dev kmod cpio gzip xz-utils
	zstd			# Linux 6.12's image: the guests' PVH kernel
	libssl-dev		# make check-debug: the debug kernel
	pkg-config
	libnl-3-dev libnl-genl-3-dev	# rdmalogctl and the netlink tests
	libc6-dev		# static guest agent
	qemu-system-x86		# the VMs
	vde2			# the isolated L2 switch between them
	busybox-static		# the guest userland
	iproute2		# 'rdma' tool inside the guest
	rdma-core ibverbs-utils rdmacm-utils ibverbs-providers perftest
	libibverbs-dev librdmacm-dev	# selftests/rogue_peer
	sparse			# make lint
	dkms
	python3			# harness and test runner (stdlib only)
	gnuplot-nox		# benchmark plots
	# make bench's "what a user would pick instead": DRBD (the kernel's
	# drbd.ko driven by drbd-utils) measured with fio, in the guests
	drbd-utils fio
)

missing=()
for p in "${pkgs[@]}"; do
	case "$p" in \#*) continue ;; esac
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

if [ "${#missing[@]}" -eq 0 ]; then
	echo "deps: all ${#pkgs[@]} packages present"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages: ${missing[*]}" >&2
	echo "deps: run 'sudo make deps' (or install them with apt-get)" >&2
	exit 1
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
