#!/bin/sh
# rdmalog test VM: /init (PID 1) of the initramfs built by mkinitramfs.sh.
#
# Kernel command line parameters understood here (all optional):
#   rdmalog_vm.node=N       node number 1..5: hostname nodeN, eth0 198.18.0.N/24
#   rdmalog_vm.rxe=0        do not load rdma_rxe / create rxe0
#   rdmalog_vm.siw=1        soft-iWARP instead: load siw (built out of tree
#                           into the initramfs) and create siw0 on eth0
#   rdmalog_vm.modules=a,b  extra modules to modprobe before the agent starts
#   rdmalog_vm.load=1       modprobe rdmalog before the agent starts
#   rdmalog_vm.debug=1      trace this script (set -x) on the console
# (Not "rdmalog.X": the kernel hands every "rdmalog.X=" of its command line
# to the rdmalog module as parameter X when it loads.  That is also how a
# run sets real module parameters: rdmalog.PARAM=VALUE.)
#
# Everything printed here goes to the serial console (the harness scans it
# for kernel problems, so do not print words like "WARNING:" or "BUG:").
# The host talks to the guest only through rdmalog-agent (virtio-serial).

export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb

log() { echo "rdmalog-init: [$(cut -d" " -f1 /proc/uptime)] $*"; }

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr

NODE=1 RXE=1 SIW=0 LOAD=0 MODULES=
# shellcheck disable=SC2013 # words, not lines
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	rdmalog_vm.node=*)    NODE=${arg#*=} ;;
	rdmalog_vm.rxe=*)     RXE=${arg#*=} ;;
	rdmalog_vm.siw=*)     SIW=${arg#*=} ;;
	rdmalog_vm.load=*)    LOAD=${arg#*=} ;;
	rdmalog_vm.modules=*) MODULES=$(echo "${arg#*=}" | tr , ' ') ;;
	rdmalog_vm.debug=1)   set -x ;;
	esac
done
case "$NODE" in
[1-9]|[1-9][0-9]) ;;
*) log "bad rdmalog_vm.node=$NODE, using 1"; NODE=1 ;;
esac

hostname "node$NODE"
echo "node$NODE" > /etc/hostname
# shellcheck disable=SC3045 # dash has ulimit -l
ulimit -l unlimited 2>/dev/null	# verbs memory registration
echo /sbin/modprobe > /proc/sys/kernel/modprobe

# Load modules one by one so a failure names the culprit.
load() {
	for m in "$@"; do
		modprobe "$m" || log "modprobe $m failed (rc=$?)"
	done
}

# crc32c_intel before anything loads libcrc32c, which binds the best
# crc32c there is when it loads (rdmalog's crc32c_driver parameter says
# which); it fails, logged, on a CPU without SSE4.2
load crc32_generic crc32c_generic crc32c_intel virtio_pci virtio_net \
	virtio_console configfs
grep -q " /sys/kernel/config " /proc/mounts ||
	mount -t configfs configfs /sys/kernel/config 2>/dev/null
log "modules loaded"

ip link set lo up
i=0
while ! ip link show eth0 >/dev/null 2>&1 && [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
if ip link set eth0 up && ip addr add "198.18.0.$NODE/24" dev eth0; then
	log "eth0 198.18.0.$NODE/24 up"
else
	log "eth0 setup failed"
fi

# One soft RDMA device on eth0: rxe0 (RoCE v2, the default) or siw0.
if [ "$SIW" = 1 ]; then
	RXE=0 DEV=siw0 DRV=siw
elif [ "$RXE" = 1 ]; then
	DEV=rxe0 DRV=rdma_rxe
else
	DEV= DRV=
fi
if [ -n "$DEV" ]; then
	load "$DRV" rdma_cm iw_cm ib_uverbs rdma_ucm
	ok=0
	for i in 1 2 3 4 5 6 7 8 9 10; do
		if rdma link show $DEV/1 >/dev/null 2>&1; then ok=1; break; fi
		if out=$(rdma link add $DEV type "${DEV%0}" netdev eth0 2>&1); then
			ok=1; break
		fi
		log "rdma link add $DEV failed (try $i): $out"
		sleep 1
	done
	if [ $ok = 1 ]; then
		# the port turns ACTIVE once eth0 has carrier; wait a little
		i=0
		while ! rdma link show $DEV/1 2>/dev/null | grep -q 'state ACTIVE' \
		      && [ $i -lt 50 ]; do
			sleep 0.1; i=$((i + 1))
		done
		log "$(rdma link show $DEV/1 2>&1)"
	else
		log "$DEV not created"
	fi
fi

# shellcheck disable=SC2086 # a list of module names
[ -n "$MODULES" ] && load $MODULES
[ "$LOAD" = 1 ] && load rdmalog

# /dev/rdmalog-hist: the virtio-serial port whose bytes go to a file on
# the host (cluster.py: Node.hist_path)
for p in /sys/class/virtio-ports/*; do
	[ "$(cat "$p/name" 2>/dev/null)" = rdmalog.hist ] &&
		ln -sf "/dev/${p##*/}" /dev/rdmalog-hist
done

log "node$NODE up, starting agent"
cd /root || cd /
# Restart the agent if it ever dies; PID 1 must not exit.
while :; do
	/usr/sbin/rdmalog-agent
	log "agent exited (rc=$?), restarting"
	sleep 1
done
