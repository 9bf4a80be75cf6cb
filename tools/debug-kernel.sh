#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the debug kernel "make check-debug" boots its guests with: a small
# configuration of Debian's linux-source (x86_64_defconfig plus the
# fragment below: virtio, soft-RoCE and soft-iWARP, rdma_cm, the qdiscs the
# fault injection uses) with KASAN, lockdep (PROVE_LOCKING),
# DEBUG_ATOMIC_SLEEP, DEBUG_LIST, DEBUG_OBJECTS and kmemleak.
#
#   tools/debug-kernel.sh build SERIES OUT   build (cached) into OUT
#   tools/debug-kernel.sh release OUT        the built kernel's release
#
# OUT (build/debug-SERIES) gets:
#   obj/                 the build tree (KDIR for rdmalog.ko and siw.ko)
#   root/lib/modules/R/  its modules (RDMALOG_MODROOT for mkinitramfs.sh)
#   bzImage              the kernel the guests boot
#   release              R, e.g. 6.1.158-rdmalog-debug
#   stamp                what was built: the tarball's size and time and
#                        this script's hash; a build is redone only when
#                        either changed (about 11 minutes on 2 CPUs)
# Nothing is installed on the host; the sources are extracted under OUT
# and never copied into the repository.
set -euo pipefail

die() { echo "debug-kernel: $*" >&2; exit 1; }

fragment() {
	cat <<'EOF'
CONFIG_LOCALVERSION="-rdmalog-debug"
CONFIG_LOCALVERSION_AUTO=n
CONFIG_MODULES=y
CONFIG_MODULE_UNLOAD=y
CONFIG_MODULE_SIG=n
CONFIG_DEBUG_INFO_NONE=y
CONFIG_DEBUG_INFO_BTF=n
CONFIG_BLK_DEV_INITRD=y
CONFIG_DEVTMPFS=y
CONFIG_DEVTMPFS_MOUNT=y
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y
CONFIG_VIRTIO=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_NET=y
CONFIG_VIRTIO_CONSOLE=y
CONFIG_HW_RANDOM_VIRTIO=y
CONFIG_IPV6=y
CONFIG_CONFIGFS_FS=y
CONFIG_USERFAULTFD=y
CONFIG_CRYPTO_CRC32=m
CONFIG_CRYPTO_CRC32C=m
CONFIG_LIBCRC32C=m
CONFIG_CRYPTO_HMAC=y
CONFIG_CRYPTO_SHA256=y
CONFIG_NET_SCHED=y
CONFIG_NET_SCH_NETEM=m
CONFIG_NET_SCH_INGRESS=m
CONFIG_NET_CLS_MATCHALL=m
CONFIG_NET_CLS_ACT=y
CONFIG_NET_ACT_GACT=m
CONFIG_INFINIBAND=m
CONFIG_INFINIBAND_USER_MAD=m
CONFIG_INFINIBAND_USER_ACCESS=m
CONFIG_INFINIBAND_ADDR_TRANS=y
CONFIG_RDMA_RXE=m
CONFIG_RDMA_SIW=m
CONFIG_KASAN=y
CONFIG_KASAN_GENERIC=y
CONFIG_KASAN_INLINE=y
CONFIG_PROVE_LOCKING=y
CONFIG_DEBUG_ATOMIC_SLEEP=y
CONFIG_DEBUG_LIST=y
CONFIG_DEBUG_OBJECTS=y
CONFIG_DEBUG_OBJECTS_FREE=y
CONFIG_DEBUG_OBJECTS_TIMERS=y
CONFIG_DEBUG_OBJECTS_WORK=y
CONFIG_DEBUG_OBJECTS_RCU_HEAD=y
CONFIG_DEBUG_KMEMLEAK=y
CONFIG_DEBUG_KMEMLEAK_MEM_POOL_SIZE=16000
CONFIG_DEBUG_KMEMLEAK_AUTO_SCAN=y
CONFIG_SLUB_DEBUG=y
CONFIG_DETECT_HUNG_TASK=y
CONFIG_SOFTLOCKUP_DETECTOR=y
CONFIG_DRM=n
CONFIG_SOUND=n
CONFIG_USB_SUPPORT=n
CONFIG_WLAN=n
CONFIG_WIRELESS=n
CONFIG_NETFILTER=n
CONFIG_EXT4_FS=n
CONFIG_HID=n
CONFIG_INPUT_MOUSE=n
CONFIG_AGP=n
EOF
}

stamp_of() {	# stamp_of TARBALL
	{
		stat -c '%s %Y' "$1"
		sha256sum < "${BASH_SOURCE[0]}"
	} | sha256sum | cut -d' ' -f1
}

build() {
	local series=$1 out=$2 tarball top stamp jobs rel
	tarball=/usr/src/linux-source-$series.tar.xz
	[ -f "$tarball" ] || die "$tarball missing: run 'make deps'"
	mkdir -p "$out"
	out=$(cd "$out" && pwd)
	stamp=$(stamp_of "$tarball")
	if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$stamp" ] &&
	   [ -f "$out/bzImage" ] && [ -f "$out/release" ]; then
		echo "debug-kernel: $(cat "$out/release") is up to date ($out)"
		return 0
	fi
	rm -rf "$out/obj" "$out/root" "$out/bzImage" "$out/release" "$out/stamp"
	top=$(basename "$tarball" .tar.xz)
	echo "debug-kernel: extracting $tarball"
	mkdir -p "$out/obj"
	tar -xJf "$tarball" --strip-components=1 -C "$out/obj" "$top"
	fragment > "$out/obj/rdmalog-debug.config"
	jobs=$(nproc 2>/dev/null || echo 1)
	(
		cd "$out/obj"
		make -s x86_64_defconfig
		scripts/kconfig/merge_config.sh -m .config \
			rdmalog-debug.config >/dev/null
		make -s olddefconfig
		# what was asked for and did not stick (a dependency missing)
		local want got bad=0
		while IFS= read -r want; do
			case "$want" in CONFIG_*=n) continue ;; esac
			got=$(grep -E "^${want%%=*}=" .config || true)
			# a module built in is as good
			if [ "$got" != "$want" ] &&
			   [ "$got" != "${want%=m}=y" ]; then
				echo "debug-kernel: asked $want, got '${got:-unset}'" >&2
				bad=1
			fi
		done < rdmalog-debug.config
		[ "$bad" = 0 ] || exit 1
		echo "debug-kernel: building bzImage and modules with -j$jobs"
		make -s -j"$jobs" bzImage modules
		make -s INSTALL_MOD_PATH="$out/root" INSTALL_MOD_STRIP=1 \
			modules_install
	) || die "the build failed (in $out/obj)"
	cp "$out/obj/arch/x86/boot/bzImage" "$out/bzImage"
	rel=$(make -s -C "$out/obj" kernelrelease)
	echo "$rel" > "$out/release"
	echo "$stamp" > "$out/stamp"
	echo "debug-kernel: built $rel in $out"
}

case "${1:-}" in
build)	[ $# -eq 3 ] || die "usage: $0 build SERIES OUT"
	build "$2" "$3" ;;
release) [ $# -eq 2 ] || die "usage: $0 release OUT"
	cat "$2/release" ;;
*)	die "usage: $0 build SERIES OUT | release OUT" ;;
esac
