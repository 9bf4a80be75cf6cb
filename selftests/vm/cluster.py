#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""rdmalog VM cluster harness (python3 stdlib only).

Boots 1..5 QEMU guests that share one private vde_switch (198.18.0.0/24,
node N = 198.18.0.N, MAC 52:54:00:12:34:0N, soft-RoCE device rxe0 on eth0)
and runs commands in them through rdmalog-agent (selftests/vm/agent.c) on
a virtio-serial port.

Library use::

    from cluster import Cluster
    with Cluster(2) as c:                     # boots node1, node2
        r = c[1].run("rdma link show")        # Result(rc, out, ...)
        c[2].run("modprobe rdmalog", check=True)
        job = c[1].spawn("rping -s -a 198.18.0.1 -C 1")
        c[2].run("rping -c -a 198.18.0.1 -C 1", timeout=30)
        print(job.wait(30).out)
        c[2].link(False); c[2].link(True)     # pull / replug the cable
        c[2].kill(); c[2].boot()              # crash + cold boot
        assert not c.kernel_log_problems()

CLI::

    cluster.py run [-n N] [--node K | --all] [--keep] -- 'CMD'
    cluster.py shell [-n N]
    cluster.py initrd              # just (re)build the initramfs
    cluster.py kernel              # just extract the kernel's PVH image

Exit status of "run": the command's status (max over --all), or 125 when
the harness could not produce one (boot failure, VM died, agent timeout).
Kernel problems found in the console logs are printed on stderr and turn
a zero status into 1.

Environment: RDMALOG_KVER (kernel release, default: the release's default
kernel, tools/kernels.sh, else the newest with both /boot/vmlinuz-KVER and
/lib/modules/KVER), RDMALOG_VM_ACCEL (tcg|kvm,
default tcg: nested KVM hangs on the CI machine), RDMALOG_VM_BOOT_TIMEOUT
(s, default 120), RDMALOG_VM_BOOT_STALL (s, default 120: a boot whose
console is silent that long is killed and started again, at most
RDMALOG_VM_BOOT_RETRIES times, default 2; 0 never), RDMALOG_VM_LIFETIME (s, default 3600: watchdog that kills
a QEMU running longer than that), RDMALOG_VM_MEM (default 512M),
RDMALOG_VM_SMP (vCPUs per guest, default 1: the CI host has 2 cores),
RDMALOG_VM_PVH (default 1: the kernel boots from its decompressed ELF as
a PVH guest, boot_image(); 0: from the bzImage).

Workdir layout: sw/ (vde switch), nodeN.console (serial console, all boots
appended, each started by a "=== rdmalog-harness: nodeN boot K ===" line),
nodeN.qemu.log (QEMU's own stderr), nodeN.agent / nodeN.qmp (sockets).
"""

import argparse
import atexit
import glob
import itertools
import json
import logging
import lzma
import os
import re
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MAX_NODES = 5
SUBNET = "198.18.0"

log = logging.getLogger("rdmalog.vm")


# --------------------------------------------------------------- errors

class VMError(Exception):
    """The harness could not do what was asked (not a command failure)."""


class BootError(VMError):
    """A node did not come up (its console tail is in the message)."""


class NodeDied(VMError):
    """A node's QEMU exited while something was waiting on it."""


class AgentTimeout(VMError):
    """The agent did not answer in time (guest hung or overloaded)."""


class CommandFailed(Exception):
    """run(check=True) saw a non-zero status; .result has the details."""

    def __init__(self, result):
        self.result = result
        super().__init__(
            f"{result.node}: command failed (rc={result.rc}"
            f"{', timed out' if result.timed_out else ''}): {result.cmd}\n"
            f"{_tail(result.out, 30)}")


def _exit_reason(status):
    if status == 0:     # -no-reboot: a guest reboot/panic ends QEMU cleanly
        return "status 0: guest panicked, rebooted or powered off"
    if status is not None and status < 0:
        return f"QEMU killed by signal {-status}"
    return f"status {status}"


def _tail(text, lines):
    return "\n".join(text.rstrip("\n").split("\n")[-lines:])


class Result:
    """Outcome of one command in a guest.

    rc: exit status, 128+signo if killed by a signal, 124 if the timeout
    fired (timed_out is then True).  out: stdout and stderr merged, as
    text (raw: the bytes).  elapsed: seconds measured in the guest.
    """

    def __init__(self, node, cmd, rc, raw, timed_out=False, killed=False,
                 elapsed=0.0):
        self.node, self.cmd, self.rc, self.raw = node, cmd, rc, raw
        self.timed_out, self.killed, self.elapsed = timed_out, killed, elapsed

    @property
    def out(self):
        return self.raw.decode("utf-8", "replace")

    @property
    def ok(self):
        return self.rc == 0 and not self.timed_out

    def check(self):
        if not self.ok:
            raise CommandFailed(self)
        return self

    def __repr__(self):
        return (f"Result(node={self.node}, rc={self.rc}, "
                f"timed_out={self.timed_out}, out={_tail(self.out, 5)!r})")


# ------------------------------------------------------- process helpers

# QEMU and vde_switch are started from one long-lived thread so that their
# parent-death signal (setpriv --pdeathsig, which fires when the *thread*
# that forked them ends) only triggers when this process dies.
_launcher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vm-launch")
_live_procs = set()
_live_lock = threading.Lock()


def _launch(argv, **kw):
    def start():
        p = subprocess.Popen(["setpriv", "--pdeathsig", "KILL", "--"] + argv,
                             start_new_session=True, **kw)
        with _live_lock:
            _live_procs.add(p)
        return p
    return _launcher.submit(start).result()


def _kill_proc(p, sig=signal.SIGKILL, wait=10):
    """Kill a process started by _launch (its whole session/group)."""
    if p is None:
        return
    if p.poll() is None:
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass
        try:
            p.wait(wait)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(wait)
    with _live_lock:
        _live_procs.discard(p)


@atexit.register
def _kill_leftovers():
    with _live_lock:
        procs = list(_live_procs)
    for p in procs:
        _kill_proc(p)


def default_kver():
    """RDMALOG_KVER, else the release's default kernel (tools/kernels.sh:
    6.1 on Debian 12 even with its 6.12 installed), else the newest kernel
    with an image and modules."""
    kver = os.environ.get("RDMALOG_KVER")
    if kver:
        return kver
    try:
        kver = subprocess.run(
            [os.path.join(REPO, "tools", "kernels.sh"), "default"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        kver = ""
    if kver and os.path.exists(f"/boot/vmlinuz-{kver}") and \
            os.path.isdir(f"/lib/modules/{kver}/kernel"):
        return kver
    cands = [os.path.basename(p)[len("vmlinuz-"):]
             for p in glob.glob("/boot/vmlinuz-*")]
    cands = [k for k in cands if os.path.isdir(f"/lib/modules/{k}/kernel")]
    if not cands:
        raise VMError("no kernel with modules found (set RDMALOG_KVER)")
    return sorted(cands, key=lambda k: [int(x) if x.isdigit() else x
                                        for x in re.split(r"(\d+)", k)])[-1]


def build_initrd(kver, out=None, extra=()):
    """Run mkinitramfs.sh (a no-op when nothing changed); return the path
    (default: build/vm/initramfs-KVER.cpio, one per kernel, with the
    rdmalog.ko and siw.ko built for that kernel; not compressed: TCG
    took 1.2 s of every boot to inflate it)."""
    out = out or os.path.join(REPO, "build", "vm",
                              f"initramfs-{kver}.cpio")
    cmd = [os.path.join(HERE, "mkinitramfs.sh"), out, kver] + list(extra)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=300)
    text = r.stdout.decode(errors="replace").strip()
    if r.returncode:
        raise VMError(f"mkinitramfs failed (rc={r.returncode}):\n{text}")
    log.debug("%s", text)
    return out


# ------------------------------------------------------------ boot image

# XEN_ELFNOTE_PHYS32_ENTRY: the 32-bit entry point of a kernel that boots
# as a PVH guest, which QEMU enters directly from -kernel (its pvh.bin
# option ROM) when given the kernel as an ELF file
_PVH_NOTE = 18


def _has_pvh_note(elf):
    """Whether elf (an ELF64 image's bytes) has a Xen PHYS32_ENTRY note."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2:          # ELFCLASS64
        return False
    phoff, = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    for i in range(phnum):
        ptype, = struct.unpack_from("<I", elf, phoff + i * phentsize)
        if ptype != 4:                                  # PT_NOTE
            continue
        off, = struct.unpack_from("<Q", elf, phoff + i * phentsize + 8)
        size, = struct.unpack_from("<Q", elf, phoff + i * phentsize + 32)
        pos, end = off, off + size
        while pos + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", elf, pos)
            name = elf[pos + 12:pos + 12 + namesz]
            if name == b"Xen\0" and ntype == _PVH_NOTE:
                return True
            pos += 12 + (namesz + 3) // 4 * 4 + (descsz + 3) // 4 * 4
    return False


def _bzimage_payload(data):
    """The compressed kernel inside a bzImage, decompressed (an ELF), or
    None: the setup header says where it is (payload_offset, from the
    start of the protected-mode code); xz and gzip in Python, zstd (Linux
    6.12 on Debian) through zstd(1)."""
    if data[0x202:0x206] != b"HdrS":
        return None
    setup_sects = data[0x1f1] or 4
    off, length = struct.unpack_from("<II", data, 0x248)
    start = (setup_sects + 1) * 512 + off
    blob = data[start:start + length]
    if blob.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMADecompressor().decompress(blob)
    if blob.startswith(b"\x1f\x8b"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(blob)
    if blob.startswith(b"\x28\xb5\x2f\xfd") and shutil.which("zstd"):
        # the kernel appends its size after the frame: zstd would call
        # that trailing garbage
        r = subprocess.run(["zstd", "-dcq"], input=blob[:-4],
                           stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, timeout=120)
        return r.stdout if r.returncode == 0 else None
    return None


def boot_image(image, out_dir=None):
    """What QEMU's -kernel gets for the kernel image (a bzImage): its
    decompressed ELF (build/vm/vmlinux-NAME, cached, keyed by the image's
    path, size and mtime) when that has a PVH entry note, else the image
    itself. Booting the ELF as a PVH guest skips SeaBIOS's real-mode
    loader and the kernel's own decompression: under TCG the first
    kernel line comes 0.6 s after QEMU starts instead of 5.4 s (Debian's
    6.1 image, this machine). RDMALOG_VM_PVH=0 boots the image as is."""
    if os.environ.get("RDMALOG_VM_PVH", "1") == "0":
        return image
    st = os.stat(image)
    key = f"{os.path.abspath(image)} {st.st_size} {st.st_mtime_ns}\n"
    out_dir = out_dir or os.path.join(REPO, "build", "vm")
    name = os.path.basename(image)
    name = name[len("vmlinuz-"):] if name.startswith("vmlinuz-") else name
    out = os.path.join(out_dir, f"vmlinux-{name}")
    try:
        with open(out + ".stamp") as f:
            stamp = f.read()
        if stamp == key:
            return out
        if stamp == "none " + key:
            return image
    except OSError:
        pass
    os.makedirs(out_dir, exist_ok=True)
    with open(image, "rb") as f:
        data = f.read()
    try:
        elf = _bzimage_payload(data)
    except (lzma.LZMAError, zlib.error, EOFError, OSError,
            subprocess.SubprocessError, struct.error) as e:
        log.debug("%s: no payload: %s", image, e)
        elf = None
    ok = bool(elf) and _has_pvh_note(elf)
    # written whole, then renamed: a QEMU of another lane may be reading
    tmp = f"{out}.{os.getpid()}.tmp"
    if ok:
        with open(tmp, "wb") as f:
            f.write(elf)
        os.replace(tmp, out)
    with open(tmp, "w") as f:
        f.write(key if ok else "none " + key)
    os.replace(tmp, out + ".stamp")
    log.debug("%s: %s", image, f"boots as PVH from {out}" if ok else
              "no PVH entry: booted as is")
    return out if ok else image


# ------------------------------------------------------------ agent link

_HDR = struct.Struct("<4sBBHII")
_MAGIC = b"RLAG"
_MAX_PAYLOAD = 64 << 20


class Job:
    """A request in flight (returned by Node.spawn)."""

    def __init__(self, node, cmd, rid, agent):
        self.node, self.cmd, self.id, self._agent = node, cmd, rid, agent
        self._buf = bytearray()
        self._done = threading.Event()
        self._result = None
        self._error = None

    # called from the agent reader thread
    def _output(self, data):
        self._buf += data

    def _finish(self, result=None, error=None):
        self._result, self._error = result, error
        self._done.set()

    def done(self):
        return self._done.is_set()

    def output(self):
        """Output received so far (text)."""
        return bytes(self._buf).decode("utf-8", "replace")

    def kill(self, sig=signal.SIGKILL):
        """Signal the job's process group (also its leftover children)."""
        self._agent.send(b"K", self.id, struct.pack("<I", int(sig)))

    def wait(self, timeout=60):
        """Wait for the job and return its Result.

        Raises AgentTimeout if it is still running after timeout seconds
        (the job keeps running: kill() it if needed), NodeDied if its VM
        went away.
        """
        if not self._done.wait(timeout):
            raise AgentTimeout(f"{self.node}: {self.cmd!r} still running "
                               f"after {timeout}s")
        if self._error:
            raise self._error
        return self._result


class _Agent:
    """Framed connection to rdmalog-agent over the virtio-serial socket."""

    def __init__(self, node_name, sock):
        self.node = node_name
        self.sock = sock
        self.ids = itertools.count(1)
        self.jobs = {}
        self.pongs = {}
        self.lock = threading.Lock()      # jobs/pongs
        self.wlock = threading.Lock()     # socket writes
        self.closed = None                # exception once the link is gone
        self.on_eof = None
        self.reader = threading.Thread(target=self._read_loop, daemon=True,
                                       name=f"agent-{node_name}")
        self.reader.start()

    def send(self, typ, rid, payload=b""):
        with self.wlock:
            self.sock.sendall(_HDR.pack(_MAGIC, typ[0], 0, 0, rid,
                                        len(payload)) + payload)

    def exec(self, cmd, timeout, stdin):
        rid = next(self.ids)
        c = cmd.encode()
        data = stdin.encode() if isinstance(stdin, str) else (stdin or b"")
        job = Job(self.node, cmd, rid, self)
        with self.lock:
            if self.closed:
                raise self.closed
            self.jobs[rid] = job
        payload = struct.pack("<II", int(timeout * 1000), len(c)) + c + data
        if len(payload) > _MAX_PAYLOAD:
            raise ValueError("request too large (stdin > 64 MiB)")
        try:
            self.send(b"X", rid, payload)
        except OSError as e:
            raise NodeDied(f"{self.node}: agent connection lost: {e}")
        return job

    def ping(self, wait):
        """True if the agent answered a ping within wait seconds."""
        rid = next(self.ids)
        ev = threading.Event()
        with self.lock:
            self.pongs[rid] = ev
        try:
            self.send(b"P", rid)
            return ev.wait(wait)
        finally:
            with self.lock:
                self.pongs.pop(rid, None)

    def fail_all(self, exc):
        with self.lock:
            if not self.closed:
                self.closed = exc
            jobs, self.jobs = list(self.jobs.values()), {}
        for j in jobs:
            j._finish(error=exc)

    def close(self, exc=None):
        self.fail_all(exc or NodeDied(f"{self.node}: connection closed"))
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

    def _dispatch(self, typ, rid, payload):
        with self.lock:
            job = self.jobs.get(rid)
            if typ in (ord("R"), ord("E")):
                self.jobs.pop(rid, None)
            pong = self.pongs.get(rid) if typ == ord("p") else None
        if pong:
            pong.set()
        if job is None:
            return          # stale id (e.g. from before a reconnect)
        if typ == ord("O"):
            job._output(payload)
        elif typ == ord("R"):
            rc, flags, _status, ms = struct.unpack("<iIiI", payload[:16])
            if flags & 1:
                rc = 124
            job._finish(Result(self.node, job.cmd, rc, bytes(job._buf),
                               timed_out=bool(flags & 1),
                               killed=bool(flags & 2), elapsed=ms / 1000))
        elif typ == ord("E"):
            job._finish(error=VMError(f"{self.node}: agent: "
                                      f"{payload.decode(errors='replace')}"))

    def _read_loop(self):
        buf = bytearray()
        try:
            while True:
                data = self.sock.recv(1 << 16)
                if not data:
                    break
                buf += data
                off = 0
                while len(buf) - off >= _HDR.size:
                    magic, typ, _f, _r, rid, ln = _HDR.unpack_from(buf, off)
                    if magic != _MAGIC or ln > _MAX_PAYLOAD:
                        off += 1            # resynchronise
                        continue
                    if len(buf) - off < _HDR.size + ln:
                        break
                    start = off + _HDR.size
                    self._dispatch(typ, rid, bytes(buf[start:start + ln]))
                    off = start + ln
                del buf[:off]
        except OSError:
            pass
        if self.on_eof:
            self.on_eof(self)
        self.fail_all(NodeDied(f"{self.node}: agent connection closed"))


# ------------------------------------------------------------------ node

class Node:
    """One guest.  Create through Cluster; index is 1-based."""

    def __init__(self, cluster, index):
        self.cluster = cluster
        self.index = index
        self.name = f"node{index}"
        self.ip = f"{SUBNET}.{index}"
        self.mac = f"52:54:00:12:34:{index:02x}"
        d = cluster.workdir
        self.console_path = os.path.join(d, f"{self.name}.console")
        self.qemu_log_path = os.path.join(d, f"{self.name}.qemu.log")
        self.agent_path = os.path.join(d, f"{self.name}.agent")
        # the guest's /dev/rdmalog-hist, appended to across boots: what a
        # guest writes there is in this file before its write() returns,
        # so a killed VM loses none of it (the history checker's writers)
        self.hist_path = os.path.join(d, f"{self.name}.hist")
        self.qmp_path = os.path.join(d, f"{self.name}.qmp")
        self.proc = None
        self.agent = None
        self.boots = 0
        self.boot_offset = 0          # console offset where this boot starts
        self.started_at = 0.0
        self.expect_running = False
        self.exit_status = None       # set when QEMU exited unexpectedly
        self.deaths = []              # [(boot, status)] unexpected exits
        self.append = ""
        self._lock = threading.RLock()

    def __repr__(self):
        return f"<Node {self.name} {'up' if self.alive else 'down'}>"

    # ---- lifecycle
    @property
    def alive(self):
        """QEMU is running and was not killed on purpose."""
        return self.proc is not None and self.proc.poll() is None

    def _qemu_argv(self):
        c = self.cluster
        if c.accel == "kvm":
            accel = ["-accel", "kvm", "-cpu", "host"]
        else:
            accel = ["-accel", "tcg", "-cpu", "max"]
        cmdline = " ".join(filter(None, [
            "console=ttyS0 panic=-1 panic_on_warn=1 oops=panic",
            "softlockup_panic=1 hung_task_panic=1 mitigations=off",
            # not "rdmalog.*": those are parameters of the rdmalog module
            f"rdmalog_vm.node={self.index} rdmalog_vm.nodes={c.n}",
            os.environ.get("RDMALOG_VM_APPEND", ""),
            c.append, self.append]))
        return [
            "qemu-system-x86_64", "-name", self.name,
            "-nodefaults", "-no-reboot", "-display", "none",
            "-machine", "pc", *accel, "-m", c.mem, "-smp", str(c.smp),
            "-kernel", c.kernel, "-initrd", c.initrd, "-append", cmdline,
            "-chardev",
            f"file,id=con0,path={self.console_path},append=on",
            "-serial", "chardev:con0",
            "-netdev", f"vde,id=n0,sock={c.switch_dir}",
            "-device", f"virtio-net-pci,netdev=n0,id=nic0,mac={self.mac}",
            "-qmp", f"unix:{self.qmp_path},server=on,wait=off",
            "-device", "virtio-serial-pci,id=vser0",
            "-chardev", f"socket,id=ag,path={self.agent_path},"
                        "server=on,wait=off",
            "-device", "virtserialport,chardev=ag,name=rdmalog.agent",
            "-chardev", f"file,id=hist,path={self.hist_path},append=on",
            "-device", "virtserialport,chardev=hist,name=rdmalog.hist",
        ]

    def start(self, append=None):
        """Start QEMU (does not wait for the guest; see wait_ready)."""
        with self._lock:
            if self.alive:
                raise VMError(f"{self.name} is already running")
            if append is not None:
                self.append = append
            self._drop_agent()
            for p in (self.agent_path, self.qmp_path):
                if os.path.exists(p):
                    os.unlink(p)
            self.boots += 1
            with open(self.console_path, "a") as f:
                f.write(f"\n=== rdmalog-harness: {self.name} boot "
                        f"{self.boots} at {time.strftime('%H:%M:%S')} ===\n")
                self.boot_offset = f.tell()
            self.exit_status = None
            qlog = open(self.qemu_log_path, "a")
            try:
                argv = self._qemu_argv()
                log.debug("%s: %s", self.name, shlex.join(argv))
                self.proc = _launch(argv, stdin=subprocess.DEVNULL,
                                    stdout=qlog, stderr=qlog)
            finally:
                qlog.close()
            self.started_at = time.monotonic()
            self.expect_running = True

    def _console_size(self):
        try:
            return os.path.getsize(self.console_path)
        except OSError:
            return 0

    def wait_ready(self, timeout=None):
        """Wait until the guest agent answers; BootError on failure.
        A boot whose console stays silent for the cluster's boot_stall
        seconds before the agent answers is killed and started again, at
        most boot_retries times, each said on stderr and in the console
        (the debug kernel hung so in TCG, in its self tests early in
        boot, on a loaded host)."""
        timeout = timeout or self.cluster.boot_timeout
        deadline = time.monotonic() + timeout
        retries = self.cluster.boot_retries
        size, moved = self._console_size(), time.monotonic()
        while True:
            if not self.alive:
                raise BootError(f"{self.name}: QEMU exited during boot "
                                f"(status {self.proc and self.proc.poll()})"
                                f"{self._diag()}")
            if time.monotonic() > deadline:
                raise BootError(f"{self.name}: agent did not answer within "
                                f"{timeout}s{self._diag()}")
            now, cur = time.monotonic(), self._console_size()
            if cur != size:
                size, moved = cur, now
            elif (self.cluster.boot_stall and retries > 0 and
                  now - moved > self.cluster.boot_stall):
                retries -= 1
                log.warning("%s: boot %d: console silent for %.0fs before "
                            "the agent answered: starting it again",
                            self.name, self.boots, now - moved)
                self.kill()
                with open(self.console_path, "a") as f:
                    f.write(f"\n=== rdmalog-harness: {self.name} boot "
                            f"{self.boots} stalled (console silent for "
                            f"{now - moved:.0f}s): killed ===\n")
                self.start()
                deadline = time.monotonic() + timeout
                size, moved = self._console_size(), time.monotonic()
                continue
            if self.agent is None:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    s.connect(self.agent_path)
                except OSError:
                    s.close()
                    time.sleep(0.2)
                    continue
                self.agent = _Agent(self.name, s)
                self.agent.on_eof = self._agent_eof
            if self.agent.closed:
                self._drop_agent()
                time.sleep(0.2)
                continue
            if self.agent.ping(2):
                log.info("%s: up after %.1fs (boot %d)", self.name,
                         time.monotonic() - self.started_at, self.boots)
                return

    def boot(self, timeout=None, append=None):
        """(Re)start a stopped node with the same identity and wait for it."""
        self.start(append=append)
        self.wait_ready(timeout)

    def kill(self):
        """SIGKILL the node's QEMU (a crash/power loss, as seen by peers)."""
        with self._lock:
            self.expect_running = False
            _kill_proc(self.proc)
            self._drop_agent(NodeDied(f"{self.name} was killed"))

    def poweroff(self, timeout=60):
        """Orderly-ish stop: 'poweroff -f' in the guest, then wait."""
        with self._lock:
            self.expect_running = False
        if self.agent and not self.agent.closed:
            try:
                self.agent.exec("sync; poweroff -f", 10, None)
            except VMError:
                pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
        self.kill()

    def reboot(self, timeout=None):
        self.kill()
        self.boot(timeout)

    def _drop_agent(self, exc=None):
        if self.agent:
            self.agent.on_eof = None
            self.agent.close(exc)
            self.agent = None

    def _agent_eof(self, agent):
        # QEMU closes the socket when it exits; give it a moment so the
        # failure can say why.
        if self.proc:
            try:
                self.proc.wait(2)
            except subprocess.TimeoutExpired:
                pass
        self._check_died()
        agent.fail_all(NodeDied(f"{self.name}: agent connection closed"
                                f"{self._diag()}"))

    def _check_died(self):
        """Record an unexpected QEMU exit (called by the monitor)."""
        with self._lock:
            if (self.expect_running and self.proc is not None
                    and self.proc.poll() is not None):
                self.expect_running = False
                self.exit_status = self.proc.poll()
                self.deaths.append((self.boots, self.exit_status))
                why = _exit_reason(self.exit_status)
                log.warning("%s: QEMU exited unexpectedly (%s)",
                            self.name, why)
                if self.agent:
                    self.agent.fail_all(NodeDied(
                        f"{self.name}: QEMU exited unexpectedly ({why})"
                        f"{self._diag()}"))
                return True
        return False

    def _diag(self, lines=40):
        text = self.console_text()
        qlog = ""
        try:
            with open(self.qemu_log_path, errors="replace") as f:
                qlog = f.read().strip()
        except OSError:
            pass
        out = f"\n--- {self.name} console (last {lines} lines) ---\n" + \
            _tail(text, lines)
        if qlog:
            out += f"\n--- {self.name} qemu log ---\n" + _tail(qlog, 10)
        return out

    # ---- commands
    def _agent_or_raise(self):
        a = self.agent
        if a is None or not self.alive:
            raise NodeDied(f"{self.name} is not running")
        return a

    def spawn(self, cmd, timeout=None, stdin=None):
        """Start cmd in the background; returns a Job (wait/kill/output).

        timeout (seconds, None = no limit) is enforced in the guest by
        SIGKILL of the job's process group.
        """
        log.debug("%s& %s", self.name, cmd)
        return self._agent_or_raise().exec(cmd, timeout or 0, stdin)

    def run(self, cmd, timeout=60, stdin=None, check=False):
        """Run cmd with /bin/sh -c in the guest; returns a Result.

        stdout and stderr are merged.  After timeout seconds the command's
        process group is killed (rc 124, timed_out).  Background jobs
        ("cmd &") outlive the command; redirect their output or use spawn().
        Raises NodeDied if the VM dies and AgentTimeout if the guest does
        not answer at all; with check=True, CommandFailed on rc != 0.
        """
        if not timeout or timeout <= 0:
            raise ValueError("run() needs a positive timeout")
        log.debug("%s$ %s", self.name, cmd)
        job = self._agent_or_raise().exec(cmd, timeout, stdin)
        try:
            res = job.wait(timeout + self.cluster.host_grace)
        except AgentTimeout:
            job.kill()
            try:
                res = job.wait(5)
            except AgentTimeout:
                raise AgentTimeout(
                    f"{self.name}: no answer from the agent {timeout}s + "
                    f"{self.cluster.host_grace}s after {cmd!r}{self._diag()}")
        log.debug("%s: rc=%s %s", self.name, res.rc, _tail(res.out, 10))
        if check:
            res.check()
        return res

    def wait_until(self, cmd, timeout=60, interval=0.5):
        """Re-run cmd until it succeeds; returns the Result.

        Raises AgentTimeout with the last output when it never succeeds.
        """
        deadline = time.monotonic() + timeout
        while True:
            left = max(deadline - time.monotonic(), 1)
            r = self.run(cmd, timeout=min(left, 30))
            if r.ok:
                return r
            if time.monotonic() >= deadline:
                raise AgentTimeout(f"{self.name}: {cmd!r} did not succeed "
                                   f"within {timeout}s; last rc={r.rc}:\n"
                                   f"{_tail(r.out, 20)}")
            time.sleep(interval)

    def put(self, data, remote, mode=None):
        """Write bytes/str (or the contents of a local file given as a
        path-like object) to remote path in the guest."""
        if isinstance(data, os.PathLike):
            with open(data, "rb") as f:
                data = f.read()
        cmd = f"mkdir -p {shlex.quote(os.path.dirname(remote) or '/')} && " \
              f"cat > {shlex.quote(remote)}"
        if mode is not None:
            cmd += f" && chmod {mode:o} {shlex.quote(remote)}"
        self.run(cmd, timeout=120, stdin=data, check=True)

    def get(self, remote):
        """Contents of a guest file as bytes."""
        return self.run(f"cat {shlex.quote(remote)}", timeout=120,
                        check=True).raw

    # ---- faults
    def qmp(self, command, **arguments):
        """Run one QMP command on this node's QEMU; returns 'return'."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(10)
            s.connect(self.qmp_path)
            f = s.makefile("rwb")

            def call(cmd, args=None):
                msg = {"execute": cmd}
                if args:
                    msg["arguments"] = args
                f.write(json.dumps(msg).encode() + b"\n")
                f.flush()
                while True:
                    line = f.readline()
                    if not line:
                        raise VMError(f"{self.name}: QMP connection closed")
                    reply = json.loads(line)
                    if "return" in reply:
                        return reply["return"]
                    if "error" in reply:
                        raise VMError(f"{self.name}: QMP {cmd}: "
                                      f"{reply['error']}")
                    # else an asynchronous event: skip
            f.readline()                        # greeting
            call("qmp_capabilities")
            return call(command, arguments)

    def link(self, up):
        """Plug (True) or pull (False) the node's network cable.

        QMP set_link on the netdev: frames are dropped both ways and the
        guest sees carrier loss (rxe0's port goes DOWN, comes back ACTIVE).
        """
        self.qmp("set_link", name="n0", up=bool(up))

    def blackhole(self, on):
        """Silently drop all of the node's eth0 traffic (carrier stays up)
        with tc in the guest: a partition the guest cannot see."""
        if on:
            self.run("tc qdisc add dev eth0 root netem loss 100% && "
                     "tc qdisc add dev eth0 ingress && "
                     "tc filter add dev eth0 parent ffff: matchall "
                     "action drop", timeout=30, check=True)
        else:
            self.run("tc qdisc del dev eth0 root; tc qdisc del dev eth0 "
                     "ingress; true", timeout=30, check=True)

    # ---- logs
    def console_text(self, all_boots=False):
        """Serial console of the current boot (or of all boots)."""
        try:
            with open(self.console_path, "rb") as f:
                if not all_boots:
                    f.seek(self.boot_offset)
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""


# ------------------------------------------------------------- problems

# Kernel log lines that fail a test.
PROBLEM_PATTERNS = [
    r"Oops", r"BUG:", r"WARNING:", r"hung task", r"blocked for more than",
    r"soft lockup", r"hard LOCKUP", r"list_del corruption",
    r"list_add corruption", r"refcount_t:", r"Kernel panic",
    r"general protection fault", r"KASAN", r"UBSAN", r"kernel BUG",
    r"rcu: INFO: .* detected stall",
    # SLUB's own reports have no colon ("BUG kmalloc-64 (Not tainted):")
    r"^BUG \S+ \(", r"page allocation failure", r"invoked oom-killer",
    r"Out of memory", r"left at exit",
    # the debug kernel's (make check-debug): kmemleak, lockdep
    r"suspected memory leak", r"INFO: trying to register non-static key",
    # The guest's NIC stopped sending (6.1: netdev_crit, no WARNING).  Seen
    # once (2026-12-04, 3-node primary soak): virtio-net's TX queue 0 on one
    # guest stalled for 52 s until rxe's QP destroy warned on the QP
    # references its unsent skbs held.  Reported at its first line, so the
    # verdict names the stall and not what it led to.
    r"NETDEV WATCHDOG",
]
_PROBLEM_RE = re.compile("|".join(PROBLEM_PATTERNS))

# Faults of the emulator, not of any kernel code: QEMU 7.2's TCG has been
# seen (6.12 guest, 2026-12-01) to deliver a single-step #DB in kernel mode
# in the middle of kmem_cache_alloc, with reserved EFLAGS bits set in the
# interrupted frame (0x41b42b02): nothing in the guest sets TF there, so
# exc_debug_kernel() warns and panic_on_warn takes the guest down.  A test
# whose only problems are such a line and its consequences on the same
# node (the panic, QEMU's exit) is run once more on fresh VMs (run.py);
# any other line still fails it.
#
# Soft-RoCE's completer (rxe_comp.c, the same in 6.1 and 6.12) warns when
# it ends a work request in error with its status still "success", which
# check_ack()'s paths that return COMPST_ERROR without a status reach from
# the wire: for instance a READ response MIDDLE or LAST arriving after a
# retry reset the expected opcode (a response delayed past the retransmit
# timer, as netem, a blackhole or a pause make), or an atomic acknowledge
# whose PSN meets a request that is no atomic. That is rxe's defect under
# delay and loss, in the driver a RoCE HCA replaces; the module's requests
# there are plain READs and compare-and-swaps. Seen in make check on
# 2026-12-04 (6.12 guests, rxe_comp.c:827, history runs with netem, flaps
# and kills), from rxe's own worker (rxe_completer <- rxe_sender <-
# do_task on rxe_wq, nothing of the module's on the stack). After the
# warning rxe fails the request and moves the queue pair to error, which
# the module sees as a connection ending; every other warning still stops
# the guest (panic_on_warn) and fails the test.
EMULATOR_ARTIFACTS = [
    r"WARNING: CPU: \d+ PID: \d+ at arch/x86/kernel/traps\.c:\d+ "
    r"exc_debug_kernel",
    r"WARNING: CPU: \d+ PID: \d+ at drivers/infiniband/sw/rxe/rxe_comp\.c:"
    r"\d+ rxe_completer\+",
]
_ARTIFACT_RE = re.compile("|".join(EMULATOR_ARTIFACTS))
# what follows an artifact on its node under panic_on_warn
_ARTIFACT_AFTERMATH_RE = re.compile(
    r"Kernel panic - not syncing: kernel: panic_on_warn set|"
    r"QEMU exited unexpectedly")


def emulator_artifact(problems):
    """The artifact line when problems ("nodeN boot K: LINE", as from
    kernel_log_problems()) are an emulator artifact and its aftermath on
    that node only; else None."""
    hits = [p for p in problems if _ARTIFACT_RE.search(p)]
    if not hits:
        return None
    nodes = {p.split()[0] for p in hits}
    for p in problems:
        if p in hits:
            continue
        if p.split()[0] not in nodes or \
                not _ARTIFACT_AFTERMATH_RE.search(p):
            return None
    return hits[0]
_BOOT_RE = re.compile(r"^=== rdmalog-harness: (\S+) boot (\d+)")


# ---------------------------------------------------------------- cluster

class Cluster:
    """n guests on one private switch; a context manager.

    Cluster(n, workdir=None, kernel=None, initrd=None, mem="512M",
            accel=None, boot_timeout=None, append="", keep=False,
            start=True, ignore=(), smp=1)

    workdir: created if missing and kept; by default a fresh /tmp dir that
    is removed on close unless keep=True.  initrd: default
    build/vm/initramfs-KVER.cpio, (re)built by mkinitramfs.sh if stale.
    append: extra kernel command line for every node.  ignore: regexes of
    console lines not to report as problems.  start=False: create the
    switch and nodes but boot nothing (call boot_all()).
    """

    def __init__(self, n, workdir=None, kernel=None, initrd=None,
                 mem=None, accel=None, boot_timeout=None, append="",
                 keep=False, start=True, ignore=(), kver=None, smp=None):
        if not 1 <= n <= MAX_NODES:
            raise ValueError(f"1..{MAX_NODES} nodes, not {n}")
        self.n = n
        self.kver = kver or default_kver()
        # RDMALOG_VM_KERNEL: another image of kver (make check-debug)
        self.kernel = kernel or os.environ.get("RDMALOG_VM_KERNEL") or \
            f"/boot/vmlinuz-{self.kver}"
        self.mem = mem or os.environ.get("RDMALOG_VM_MEM", "512M")
        self.smp = int(smp or os.environ.get("RDMALOG_VM_SMP", 1))
        self.accel = accel or os.environ.get("RDMALOG_VM_ACCEL", "tcg")
        self.boot_timeout = float(boot_timeout or os.environ.get(
            "RDMALOG_VM_BOOT_TIMEOUT", 120))
        self.lifetime = float(os.environ.get("RDMALOG_VM_LIFETIME", 3600))
        # a boot whose console is silent this long is started again (0:
        # never), at most boot_retries times
        self.boot_stall = float(os.environ.get("RDMALOG_VM_BOOT_STALL", 120))
        self.boot_retries = int(os.environ.get("RDMALOG_VM_BOOT_RETRIES", 2))
        self.host_grace = 30 if self.accel == "tcg" else 10
        self.append = append
        self.ignore = [re.compile(r) for r in ignore]
        self.initrd = initrd or build_initrd(self.kver)
        for f in (self.kernel, self.initrd):
            if not os.path.exists(f):
                raise VMError(f"{f} not found")
        self.kernel = boot_image(self.kernel)
        self._own_workdir = workdir is None
        self.keep = keep
        if workdir is None:
            workdir = tempfile.mkdtemp(prefix="rdmalog-vm-", dir="/tmp")
        os.makedirs(workdir, exist_ok=True)
        self.workdir = os.path.abspath(workdir)
        self.switch_dir = os.path.join(self.workdir, "sw")
        if len(self.switch_dir) + 20 > 107:
            raise VMError(f"workdir path too long for unix sockets: "
                          f"{self.workdir}")
        self.switch = None
        self.nodes = [Node(self, i) for i in range(1, n + 1)]
        self._reported = set()
        self._closed = False
        self._stop = threading.Event()
        self._monitor = None
        self._old_handlers = {}
        try:
            self._start_switch()
            self._monitor = threading.Thread(target=self._monitor_loop,
                                             daemon=True, name="vm-monitor")
            self._monitor.start()
            if start:
                self.boot_all()
        except BaseException:
            self.close()
            raise

    # ---- access
    def __getitem__(self, i):
        """cluster[1] is node1."""
        if not 1 <= i <= self.n:
            raise IndexError(f"no node{i} (1..{self.n})")
        return self.nodes[i - 1]

    def node(self, i):
        return self[i]

    def __iter__(self):
        return iter(self.nodes)

    def __len__(self):
        return self.n

    # ---- lifecycle
    def _start_switch(self):
        # Foreground vde_switch: it exits on EOF on stdin, i.e. when we
        # (the only holder of the pipe) exit in any way.
        self.switch = _launch(["vde_switch", "-s", self.switch_dir],
                              stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not os.path.exists(os.path.join(self.switch_dir, "ctl")):
            if self.switch.poll() is not None or time.monotonic() > deadline:
                raise VMError("vde_switch did not start")
            time.sleep(0.05)

    def boot_all(self, timeout=None):
        """Start every stopped node in parallel and wait for all agents."""
        todo = [nd for nd in self.nodes if not nd.alive]
        for nd in todo:
            nd.start()
        errors = []

        def wait(nd):
            try:
                nd.wait_ready(timeout)
            except VMError as e:
                errors.append(e)
        threads = [threading.Thread(target=wait, args=(nd,)) for nd in todo]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise BootError("\n".join(str(e) for e in errors))

    def _monitor_loop(self):
        """Watchdog: notice unexpected QEMU exits, enforce max lifetime."""
        while not self._stop.wait(0.5):
            for nd in self.nodes:
                nd._check_died()
                if (nd.alive and nd.expect_running and
                        time.monotonic() - nd.started_at > self.lifetime):
                    log.error("%s: lifetime of %ss exceeded, killing",
                              nd.name, self.lifetime)
                    nd.kill()

    def close(self):
        """Kill all QEMUs and the switch; remove the workdir unless kept."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        for nd in self.nodes if hasattr(self, "nodes") else []:
            nd.kill()
        if self.switch:
            try:
                self.switch.stdin.close()
            except OSError:
                pass
            _kill_proc(self.switch, signal.SIGTERM, wait=5)
        if self._monitor:
            self._monitor.join(5)
        if self._own_workdir and not self.keep:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self):
        # SIGTERM/SIGHUP unwind like Ctrl-C so that close() runs.
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGHUP):
                self._old_handlers[sig] = signal.signal(sig, _raise_exit)
        return self

    def __exit__(self, *exc):
        self.close()
        for sig, h in self._old_handlers.items():
            signal.signal(sig, h)
        return False

    # ---- helpers
    def run_all(self, cmd, timeout=60, check=False):
        """Run cmd on every running node in parallel; list of Results."""
        jobs = [nd.spawn(cmd, timeout) for nd in self.nodes if nd.alive]
        res = [j.wait(timeout + self.host_grace) for j in jobs]
        if check:
            for r in res:
                r.check()
        return res

    def kernel_log_problems(self, new_only=False):
        """Problem lines of every node's console (all boots) plus
        unexpected QEMU exits, as "nodeN boot K: LINE" strings.

        new_only=True returns only problems not returned by an earlier
        new_only call (for per-test checks).
        """
        out = []
        for nd in self.nodes:
            nd._check_died()
            boot = 0
            for line in nd.console_text(all_boots=True).splitlines():
                m = _BOOT_RE.match(line)
                if m:
                    boot = int(m.group(2))
                    continue
                if (_PROBLEM_RE.search(line) and
                        not any(r.search(line) for r in self.ignore)):
                    out.append(f"{nd.name} boot {boot}: {line.strip()}")
            for boot, status in nd.deaths:
                out.append(f"{nd.name} boot {boot}: QEMU exited unexpectedly "
                           f"({_exit_reason(status)})")
        if new_only:
            # keep duplicates of identical lines distinct by position
            res, seen = [], {}
            for p in out:
                k = (p, seen.get(p, 0))
                seen[p] = k[1] + 1
                if k not in self._reported:
                    self._reported.add(k)
                    res.append(p)
            return res
        return out


def _raise_exit(signum, frame):
    raise SystemExit(128 + signum)


# -------------------------------------------------------------------- CLI

def _cli_run(args):
    cmd = " ".join(args.cmd)
    if not cmd:
        print("cluster.py run: no command given", file=sys.stderr)
        return 2
    with Cluster(args.nodes, workdir=args.workdir, keep=args.keep,
                 append=args.append, mem=args.mem) as c:
        if args.all:
            targets = c.nodes
        else:
            targets = [c[args.node]]
        jobs = [(nd, nd.spawn(cmd, args.timeout)) for nd in targets]
        rc = 0
        for nd, job in jobs:
            res = job.wait(args.timeout + c.host_grace)
            if args.all:
                sys.stdout.write(f"===== {nd.name}: rc={res.rc}"
                                 f"{' (timed out)' if res.timed_out else ''}"
                                 " =====\n")
                sys.stdout.flush()
            sys.stdout.buffer.write(res.raw)
            sys.stdout.flush()
            rc = max(rc, res.rc)
            if res.timed_out:
                print(f"{nd.name}: command timed out after {args.timeout}s",
                      file=sys.stderr)
        probs = c.kernel_log_problems()
        if probs:
            print("KERNEL PROBLEMS:\n  " + "\n  ".join(probs),
                  file=sys.stderr)
            rc = rc or 1
        if args.keep:
            print(f"workdir kept: {c.workdir}", file=sys.stderr)
        return rc


SHELL_HELP = """commands:
  run N CMD | N CMD      run CMD on nodeN (N may be 'all')
  spawn N CMD            start CMD in the background on nodeN
  jobs / wait ID         list background jobs / wait for one and show it
  kill N | boot N        SIGKILL nodeN's QEMU / boot it again
  link N up|down         plug/pull nodeN's cable (QMP set_link)
  console N [LINES]      tail of nodeN's console
  problems               kernel log problems found so far
  workdir | help | quit"""


def _cli_shell(args):
    try:
        import readline  # noqa: F401  (line editing for input())
    except ImportError:
        pass
    with Cluster(args.nodes, workdir=args.workdir, keep=args.keep,
                 append=args.append, mem=args.mem) as c:
        print(f"{c.n} node(s) up; workdir {c.workdir}\n{SHELL_HELP}")
        jobs = {}
        while True:
            try:
                line = input("rdmalog-vm> ").strip()
            except EOFError:
                print()
                break
            if not line:
                continue
            word, _, rest = line.partition(" ")
            if word.isdigit() or word == "all":
                word, rest = "run", line
            try:
                if word in ("quit", "exit", "q"):
                    break
                elif word == "help":
                    print(SHELL_HELP)
                elif word == "workdir":
                    print(c.workdir)
                elif word == "problems":
                    print("\n".join(c.kernel_log_problems()) or "none")
                elif word in ("run", "spawn"):
                    who, _, cmd = rest.partition(" ")
                    nodes = c.nodes if who == "all" else [c[int(who)]]
                    for nd in nodes:
                        if word == "spawn":
                            jobs[len(jobs) + 1] = (nd.name, nd.spawn(cmd))
                            print(f"job {len(jobs)} on {nd.name}")
                            continue
                        r = nd.run(cmd, timeout=args.timeout)
                        if len(nodes) > 1:
                            print(f"===== {nd.name} =====")
                        sys.stdout.write(r.out)
                        if r.rc:
                            to = " timed out" if r.timed_out else ""
                            print(f"[rc={r.rc}{to}]")
                elif word == "jobs":
                    for jid, (nn, j) in jobs.items():
                        print(f"{jid} {nn} {'done' if j.done() else 'running'}"
                              f" {j.cmd}")
                elif word == "wait":
                    r = jobs[int(rest)][1].wait(args.timeout)
                    sys.stdout.write(r.out)
                    print(f"[rc={r.rc}]")
                elif word == "kill":
                    c[int(rest)].kill()
                elif word == "boot":
                    c[int(rest)].boot()
                elif word == "link":
                    n, _, state = rest.partition(" ")
                    c[int(n)].link(state.strip() == "up")
                elif word == "console":
                    n, _, k = rest.partition(" ")
                    print(_tail(c[int(n)].console_text(), int(k or 30)))
                else:
                    print(f"unknown command {word!r}; try help")
            except (VMError, ValueError, IndexError, KeyError) as e:
                print(f"error: {e!r}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="boot rdmalog test VMs and run commands in them")
    sub = ap.add_subparsers(dest="action", required=True)
    for name in ("run", "shell"):
        p = sub.add_parser(name)
        p.add_argument("-n", "--nodes", type=int, default=None,
                       help="number of VMs (default: 1 for run, 2 for shell)")
        p.add_argument("--workdir", help="keep logs/sockets here")
        p.add_argument("--keep", action="store_true",
                       help="do not delete the temporary workdir")
        p.add_argument("--append", default="",
                       help="extra kernel command line, e.g. "
                       "'rdmalog_vm.load=1' (modprobe rdmalog at boot) or "
                       "'rdmalog.PARAM=VAL' (a module parameter)")
        p.add_argument("--load", action="store_true",
                       help="modprobe rdmalog at boot (rdmalog_vm.load=1)")
        p.add_argument("--mem", default=None, help="memory per VM (512M)")
        p.add_argument("--timeout", type=float, default=600,
                       help="per-command timeout in seconds (600)")
        p.add_argument("-v", "--verbose", action="store_true")
        if name == "run":
            g = p.add_mutually_exclusive_group()
            g.add_argument("--node", type=int, default=1)
            g.add_argument("--all", action="store_true")
            p.add_argument("cmd", nargs=argparse.REMAINDER)
    p = sub.add_parser("initrd", help="build the initramfs if stale")
    p.add_argument("-v", "--verbose", action="store_true")
    p = sub.add_parser("kernel", help="extract the kernel's PVH boot image "
                       "(build/vm/vmlinux-KVER) if stale; print what boots")
    p.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)

    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr)
    if args.action == "initrd":
        print(build_initrd(default_kver()))
        return 0
    if args.action == "kernel":
        print(boot_image(os.environ.get("RDMALOG_VM_KERNEL") or
                         f"/boot/vmlinuz-{default_kver()}"))
        return 0
    if args.nodes is None:
        args.nodes = 1 if args.action == "run" else 2
    if args.load:
        args.append = (args.append + " rdmalog_vm.load=1").strip()
    if args.action == "run":
        if args.cmd and args.cmd[0] == "--":
            args.cmd = args.cmd[1:]
        if not args.all and not 1 <= args.node <= args.nodes:
            ap.error(f"--node {args.node} outside 1..{args.nodes}")
    signal.signal(signal.SIGTERM, _raise_exit)
    signal.signal(signal.SIGHUP, _raise_exit)
    try:
        return _cli_run(args) if args.action == "run" else _cli_shell(args)
    except VMError as e:
        print(f"cluster.py: {e}", file=sys.stderr)
        return 125
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
