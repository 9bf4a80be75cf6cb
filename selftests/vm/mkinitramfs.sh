#!/bin/bash
# Build the initramfs for rdmalog test VMs from scratch (no initramfs-tools).
#
#   selftests/vm/mkinitramfs.sh OUT KVER [EXTRA...]
#
# OUT   output file (newc cpio), e.g. build/vm/initramfs-KVER.cpio; gzip'd
#       when its name ends in .gz (TCG takes about 1.2 s of every boot to
#       inflate that, so the harness's is not)
# KVER  kernel release whose modules are shipped (/lib/modules/KVER)
# EXTRA extra files, each "SRC[:DEST]".  DEST is the absolute guest path;
#       default /usr/bin/NAME for executables, /root/NAME otherwise.
#       ELF files get their shared libraries.
#
# Contents: busybox-static (+ applet links), dash as /bin/sh, bash, kmod
# (modprobe & co), the kernel modules below with their dependencies
# (depmod'ed), iproute2 ip/tc/rdma, rdma-core + perftest tools with the
# rxe/siw verbs providers, drbd-utils (drbdsetup, drbdadm, drbdmeta and
# their 8.4 helpers) with the drbd and brd modules, strace, the rdmalog
# agent and /init
# (selftests/vm/init.sh), and, when present, the project's build outputs:
#   rdmalog.ko          -> /lib/modules/KVER/extra/rdmalog.ko (modprobe rdmalog):
#                          build/k/KVER/rdmalog.ko or ./rdmalog.ko, the
#                          one built for KVER (vermagic)
#   siw.ko              -> /lib/modules/KVER/extra/siw.ko, the one built
#                          for KVER: build/k/KVER/siw/ or build/siw/
#   build/bin/*         -> /usr/bin/
#   build/selftests/*   -> /usr/lib/rdmalog/selftests/
# Missing optional inputs are skipped silently.
#
# Environment:
#   RDMALOG_KO        module to ship (default: the one built for KVER,
#                     above; REPO/rdmalog.ko if none is)
#   RDMALOG_EXTRA_KO  more out-of-tree .ko files for extra/ (space separated)
#   RDMALOG_EXTRA_MODULES  more in-tree module names to ship
#   RDMALOG_MODROOT   where KVER's modules are when not in /: they are
#                     taken from MODROOT/lib/modules/KVER (make
#                     check-debug: the debug kernel's, tools/debug-kernel.sh)
#   AGENT             agent binary (default REPO/build/vm/agent; it is
#                     (re)built from selftests/vm/agent.c when stale)
#   CC                compiler for the agent (default gcc)
#   FORCE=1           rebuild even if the inputs did not change
#
# The archive is reproducible (sorted, fixed mtimes/owners, gzip -n) and is
# not rebuilt when a fingerprint of all inputs (stored in OUT.stamp) is
# unchanged.
set -euo pipefail

die() { echo "mkinitramfs: $*" >&2; exit 1; }

[ $# -ge 2 ] || die "usage: $0 OUT KVER [SRC[:DEST]...]"
OUT=$1 KVER=$2
shift 2

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)

# the first of the given .ko files that was built for KVER
built_for_kver() {
	local ko
	for ko in "$@"; do
		[ -f "$ko" ] &&
			[ "$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)" = "$KVER" ] &&
			{ echo "$ko"; return 0; }
	done
	return 0
}
# soft-iWARP, built out of tree by "make siw" (Debian does not ship it)
SIW_KO=$(built_for_kver "$REPO/build/k/$KVER/siw/siw.ko" "$REPO/build/siw/siw.ko")
if [ -n "$SIW_KO" ]; then
	RDMALOG_EXTRA_KO="${RDMALOG_EXTRA_KO:-} $SIW_KO"
fi
# MODDIR: where KVER's modules are here; GMODDIR: in the guest
MODROOT=${RDMALOG_MODROOT:-}
if [ -n "$MODROOT" ]; then	# absolute: modinfo -b names files under it
	MODROOT=$(cd "$MODROOT" && pwd) || die "RDMALOG_MODROOT: no such directory"
fi
MODDIR=$MODROOT/lib/modules/$KVER
GMODDIR=/lib/modules/$KVER
MODINFO=(modinfo -k "$KVER")
if [ -n "$MODROOT" ]; then MODINFO+=(-b "$MODROOT"); fi
if [ -z "${RDMALOG_KO+set}" ]; then
	RDMALOG_KO=$(built_for_kver "$REPO/build/k/$KVER/rdmalog.ko" "$REPO/rdmalog.ko")
	RDMALOG_KO=${RDMALOG_KO:-$REPO/rdmalog.ko}
fi
AGENT=${AGENT-$REPO/build/vm/agent}
CC=${CC-gcc}
EPOCH=${SOURCE_DATE_EPOCH:-1700000000}
LIBDIR=/usr/lib/x86_64-linux-gnu

[ -d "$MODDIR/kernel" ] || die "no modules in $MODDIR"

# Kernel modules the guest needs (dependencies are added automatically).
# shellcheck disable=SC2206 # RDMALOG_EXTRA_MODULES is a list of names
# crc32c_intel: what libcrc32c binds when the CPU has SSE4.2 (TCG's -cpu
# max has it), as on a real host; crc32c_generic where it does not.
MODULES=(virtio_pci virtio_net virtio_console crc32_generic crc32c_generic
	 crc32c_intel libcrc32c rdma_rxe rdma_cm ib_uverbs rdma_ucm ib_core ib_cm iw_cm
	 configfs
	 # fault injection: netem delay/loss, ingress drop ("blackhole")
	 sch_netem sch_ingress cls_matchall act_gact
	 # make bench's "what a user would pick instead": DRBD (the
	 # kernel's own, 8.4) over TCP on RAM disks
	 drbd brd
	 ${RDMALOG_EXTRA_MODULES:-})

# Userspace programs shipped when present (first path that exists wins).
PROGRAMS=(dash bash kmod ip tc rdma strace pgrep pkill flock
	  ibv_devices ibv_devinfo ibv_rc_pingpong ibv_ud_pingpong
	  rping ucmatose udaddy rdma_client rdma_server rstream cmtime
	  ib_write_lat ib_write_bw ib_read_lat ib_read_bw ib_send_lat
	  ib_send_bw ib_atomic_lat ib_atomic_bw
	  drbdsetup drbdadm drbdmeta)
# drbd-utils 9's drbdsetup and drbdadm exec these for an 8.4 kernel module
# (what /proc/drbd says): Debian's kernels have DRBD 8.4 in-tree. fio is
# not here: its libraries (Ceph, Gluster, ICU...) add 74 MB to every guest;
# make bench ships it in its own initramfs (EXTRA, selftests/bench_alt.py).
HELPERS=(/lib/drbd/drbdsetup-84 /lib/drbd/drbdadm-84)
# Verbs providers (dlopen'ed by libibverbs, so ldd on the tools misses them).
PROVIDERS=(rxe siw)

# ---------------------------------------------------------------- agent
if [ ! -x "$AGENT" ] || [ "$HERE/agent.c" -nt "$AGENT" ]; then
	if [ "$AGENT" = "$REPO/build/vm/agent" ]; then
		mkdir -p "$(dirname "$AGENT")"
		"$CC" -static -O2 -Wall -o "$AGENT" "$HERE/agent.c" ||
			die "building the agent failed"
	fi
	[ -x "$AGENT" ] || die "agent $AGENT missing"
fi

# ---------------------------------------------------------- fingerprint
# Everything that can change the archive: this script, /init, the agent,
# project outputs, extra files, the environment knobs, and the dpkg
# database (a proxy for busybox/libs/modules/tools from Debian packages).
fingerprint() {
	{
		echo "$KVER ${MODULES[*]} ${PROGRAMS[*]} ${HELPERS[*]} $EPOCH $MODROOT"
		echo "${RDMALOG_EXTRA_KO:-} $*"
		sha256sum "$HERE/mkinitramfs.sh" "$HERE/init.sh"
		local f
		for f in "$AGENT" "$RDMALOG_KO" /var/lib/dpkg/status \
			 "$MODDIR/modules.dep" ${RDMALOG_EXTRA_KO:-}; do
			[ -e "$f" ] && stat -c '%n %s %Y' "$f"
		done
		for f in "$REPO/build/bin" "$REPO/build/selftests"; do
			[ -d "$f" ] && find "$f" -printf '%p %s %T@ %m\n' | LC_ALL=C sort
		done
		for f in "$@"; do
			f=${f%%:*}
			[ -e "$f" ] && stat -c '%n %s %Y' "$f"
		done
		true
	} 2>/dev/null | sha256sum | cut -d' ' -f1
}
STAMP=$(fingerprint "$@")
# several developers may boot VMs at once: one build at a time
mkdir -p "$(dirname "$OUT")"
exec 9>"$OUT.lock"
flock -w 300 9 || die "timed out waiting for $OUT.lock"
if [ -z "${FORCE:-}" ] && [ -s "$OUT" ] && [ -f "$OUT.stamp" ] &&
   [ "$(cat "$OUT.stamp")" = "$STAMP" ]; then
	echo "mkinitramfs: $OUT is up to date"
	exit 0
fi

STAGE=$(mktemp -d "${TMPDIR:-/tmp}/rdmalog-initramfs.XXXXXX")
TMPOUT=$(mktemp "$OUT.XXXXXX")
trap 'rm -rf "$STAGE" "$TMPOUT"' EXIT

# ------------------------------------------------------------- skeleton
# merged-/usr layout like the host, so host paths can be used verbatim
mkdir -p "$STAGE"/{usr/bin,usr/sbin,usr/lib,usr/lib64,etc,root,proc,sys,dev}
mkdir -p "$STAGE"/{tmp,run,mnt,var/tmp,var/log,usr/lib/rdmalog/selftests}
ln -s usr/bin "$STAGE/bin"
ln -s usr/sbin "$STAGE/sbin"
ln -s usr/lib "$STAGE/lib"
ln -s usr/lib64 "$STAGE/lib64"
chmod 1777 "$STAGE/tmp" "$STAGE/var/tmp"

declare -A COPIED=()

# copy SRC to guest path DEST (following symlinks), once
put() {
	local src=$1 dst=$2
	[ -n "${COPIED[$dst]:-}" ] && return 0
	COPIED[$dst]=1
	mkdir -p "$STAGE$(dirname "$dst")"
	cp -L "$src" "$STAGE$dst"
}

is_elf() { [ "$(head -c 4 "$1" 2>/dev/null | tr -d '\0')" = $'\x7fELF' ]; }

# copy the shared libraries (and ELF interpreter) an ELF file needs
put_libs() {
	local f=$1 line lib
	is_elf "$f" || return 0
	while read -r line; do
		case "$line" in
		*"=> not found"*) echo "mkinitramfs: $f: $line" >&2 ;;
		*"=> /"*) lib=${line#*=> }; lib=${lib%% (*} ;;
		/*) lib=${line%% (*} ;;
		*) continue ;;
		esac
		[ -n "${lib:-}" ] && [ -e "$lib" ] && put "$lib" "$lib"
		lib=
	done < <(ldd "$f" 2>/dev/null || true)
	return 0
}

# copy an executable/file plus its libraries
put_bin() {
	put "$1" "$2"
	put_libs "$1"
}

# ------------------------------------------------------------- busybox
BUSYBOX=$(command -v busybox) || die "busybox not found (apt install busybox-static)"
is_elf "$BUSYBOX" && ldd "$BUSYBOX" >/dev/null 2>&1 &&
	echo "mkinitramfs: warning: $BUSYBOX is dynamic; install busybox-static" >&2
put_bin "$BUSYBOX" /usr/bin/busybox
while read -r applet; do
	applet=/${applet#/}
	[ "$applet" = /usr/bin/busybox ] && continue
	# bin -> usr/bin etc: place the link under usr/
	case "$applet" in
	/bin/*|/sbin/*) applet=/usr$applet ;;
	esac
	[ -e "$STAGE$applet" ] || [ -L "$STAGE$applet" ] && continue
	mkdir -p "$STAGE$(dirname "$applet")"
	ln -s /usr/bin/busybox "$STAGE$applet"
done < <("$BUSYBOX" --list-full)

# replace an applet link by the real program
put_prog() {
	local src=$1 dst=$2
	rm -f "$STAGE$dst"
	unset "COPIED[$dst]"
	put_bin "$src" "$dst"
}

# ------------------------------------------------------------ programs
for p in "${PROGRAMS[@]}"; do
	src=
	for d in /usr/sbin /usr/bin /sbin /bin; do
		[ -x "$d/$p" ] && { src=$d/$p; break; }
	done
	[ -n "$src" ] || { echo "mkinitramfs: note: $p not found, skipped" >&2; continue; }
	case "$src" in /sbin/*|/bin/*) dst=/usr$src ;; *) dst=$src ;; esac
	put_prog "$src" "$dst"
done
for h in "${HELPERS[@]}"; do
	if [ -x "$h" ]; then put_bin "$h" "/usr$h"; fi
done
# /bin/sh must honour PATH: busybox ash runs its own applets (ip, modprobe,
# ...) in preference to the real programs, so use dash like Debian does.
if [ -e "$STAGE/usr/bin/dash" ]; then
	rm -f "$STAGE/usr/bin/sh"
	ln -s dash "$STAGE/usr/bin/sh"
fi
if [ -e "$STAGE/usr/bin/kmod" ]; then
	for l in modprobe insmod rmmod lsmod modinfo depmod; do
		rm -f "$STAGE/usr/sbin/$l" "$STAGE/usr/bin/$l"
		ln -s /usr/bin/kmod "$STAGE/usr/sbin/$l"
	done
fi

# glibc dlopen()s libgcc_s for pthread_exit/pthread_cancel (rping needs it)
if [ -e "$LIBDIR/libgcc_s.so.1" ]; then
	put "$LIBDIR/libgcc_s.so.1" "$LIBDIR/libgcc_s.so.1"
fi

for p in "${PROVIDERS[@]}"; do
	lib=$LIBDIR/libibverbs/lib$p-rdmav34.so
	drv=/etc/libibverbs.d/$p.driver
	if [ -e "$lib" ] && [ -e "$drv" ]; then
		put_bin "$lib" "$lib"
		put "$drv" "$drv"
	fi
done

# ------------------------------------------------------------- modules
declare -A MODSEEN=()
add_module() {	# add_module NAME_OR_PATH
	local m=$1 file deps d
	[ -n "${MODSEEN[$m]:-}" ] && return 0
	MODSEEN[$m]=1
	file=$("${MODINFO[@]}" -F filename "$m" 2>/dev/null) || {
		echo "mkinitramfs: note: module $m not found for $KVER" >&2
		return 0
	}
	case "$file" in
	/*) ;;
	*) return 0 ;;	# "(builtin)"
	esac
	put "$file" "${file#"$MODROOT"}"
	deps=$("${MODINFO[@]}" -F depends "$m" 2>/dev/null || true)
	for d in ${deps//,/ }; do
		add_module "$d"
	done
}
for m in "${MODULES[@]}"; do
	add_module "$m"
done
# out-of-tree modules: extra/
for ko in "$RDMALOG_KO" ${RDMALOG_EXTRA_KO:-}; do
	[ -f "$ko" ] || continue
	vm=$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)
	[ "$vm" = "$KVER" ] ||
		echo "mkinitramfs: warning: $ko vermagic '$vm' != $KVER" >&2
	put "$ko" "$GMODDIR/extra/$(basename "$ko")"
	deps=$(modinfo -F depends "$ko" 2>/dev/null || true)
	for d in ${deps//,/ }; do
		add_module "$d"
	done
done
for f in modules.builtin modules.builtin.modinfo modules.order; do
	[ -e "$MODDIR/$f" ] && put "$MODDIR/$f" "$GMODDIR/$f"
done
depmod -b "$STAGE" "$KVER"

# ------------------------------------------------------ project outputs
if [ -d "$REPO/build/bin" ]; then
	for f in "$REPO"/build/bin/*; do
		[ -f "$f" ] && put_bin "$f" "/usr/bin/$(basename "$f")"
	done
fi
if [ -d "$REPO/build/selftests" ]; then
	while IFS= read -r -d '' f; do
		rel=${f#"$REPO/build/selftests/"}
		put_bin "$f" "/usr/lib/rdmalog/selftests/$rel"
		chmod --reference="$f" "$STAGE/usr/lib/rdmalog/selftests/$rel"
	done < <(find "$REPO/build/selftests" -type f -print0)
fi

for spec in "$@"; do
	src=${spec%%:*}
	if [ "$src" = "$spec" ]; then
		if [ -x "$src" ]; then dst=/usr/bin/$(basename "$src")
		else dst=/root/$(basename "$src"); fi
	else
		dst=${spec#*:}
	fi
	[ -e "$src" ] || die "extra file $src not found"
	put_bin "$src" "$dst"
done

# ------------------------------------------------------- agent and init
put "$AGENT" /usr/sbin/rdmalog-agent
put "$HERE/init.sh" /init
chmod 0755 "$STAGE/init" "$STAGE/usr/sbin/rdmalog-agent"

# ----------------------------------------------------------------- /etc
cat > "$STAGE/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
cat > "$STAGE/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
EOF
echo "hosts: files" > "$STAGE/etc/nsswitch.conf"
{
	echo "127.0.0.1 localhost"
	for n in 1 2 3 4 5; do echo "198.18.0.$n node$n"; done
} > "$STAGE/etc/hosts"
touch "$STAGE/etc/fstab"

# -------------------------------------------------------------- archive
find "$STAGE" -exec touch -h -d "@$EPOCH" {} +
(
	cd "$STAGE"
	find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort |
		cpio --quiet -o -H newc -R 0:0 --reproducible
) | case $OUT in
*.gz)	gzip -n -6 ;;
*)	cat ;;
esac > "$TMPOUT"
chmod 0644 "$TMPOUT"
mv -f "$TMPOUT" "$OUT"	# atomic rename: running QEMUs keep the old file
echo "$STAMP" > "$OUT.stamp"
echo "mkinitramfs: wrote $OUT ($(du -h "$OUT" | cut -f1))"
