#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The history checker: writers on every node, faults on the backups,
then a check of what every node holds against what the writers were told.

    python3 selftests/history.py [--duration SECONDS|30m] [--seed N]
                                 [--nodes 3|5] [--catchup] [--keep] [-v]

(make soak DURATION=... runs it; the suite selftests/suites/history.py runs
a short one under make check.)  Three VMs (--nodes 5: five), node 1
primary, durability quorum (a majority of the nodes, the primary included).  selftests/hist_writer.c writers run on every node (on a backup
their write()s are forwarded to the primary) and stream their history to
the host: every attempt ("W"), every acknowledged append with its LSN and
the hash of its bytes ("A"), every failure with its errno ("F").  Meanwhile
a fault schedule, random but replayed exactly by the same seed
(RDMALOG_HISTORY_SEED or --seed; printed first), runs one fault at a time
on a backup or several; the primary is left alone (commit timeout 3 s, peer
timeout 5 s):

  cut     pull a backup's cable for 1-8 s, plug it back
  flap    3-8 quick cable pulls (0.1-1 s down, 0.1-1 s up)
  kill    SIGKILL a backup's VM, boot it, load the module, apply the
          cluster file: it rejoins with an empty log
  reload  SIGKILL the backup's writers, rmmod, modprobe, apply: the same
          on a live VM
  trim    let the writers fill the primary's ring (they block), then trim
  quorum  the cables of enough backups out that the primary has no
          quorum, for longer than the commit timeout half of the time
  blackhole  every frame of a backup dropped in the guest, carrier up
  pause   QMP stop/cont of a backup's VM, for longer than the peer
          timeout half of the time
  netem   packet loss and delay on a backup's interface
  catchup a backup reloaded behind the trims, then, while it catches up,
          a trim and a cut of its cable

With --primary-faults (failover auto) the primary is faulted too, each
ending in a leader change: pkill, preload, ppause, pblackhole (its VM
killed, its module reloaded, its VM paused or its frames dropped past
twice the peer timeout), pswitch (a switchover to a backup, under
load), proll (every node reloaded in turn, the primary last), pdouble
(five nodes: the primary and a backup killed together);
Documentation/testing.rst has the details.

Each fault is checked to have taken effect by the primary's counters
(disconnects, commit timeouts, joins, trims); the run goes on past its
duration until every kind but flap and netem took effect at least once.

After each fault the checker waits (bounded) until the backup is back in
replication (the primary's peer entry "replicating"), and fails with a
message saying where the backup is when it does not come back.  Before
every trim it reads the range about to be trimmed on every node, so that
every record is checked somewhere before it goes.

Catch-up: a backup that rejoins behind the primary's first retained LSN
needs catch-up (RDMA READ of the missing range, or a restart of its log
at the primary's first LSN).  By default (--catchup,
RDMALOG_HISTORY_CATCHUP=1) the faults come in any order and trims go up to
the primary's commit point: the "every backup caught up" step demands
catch-up.  With --no-catchup / RDMALOG_HISTORY_CATCHUP=0 the schedule puts
every kill and reload before the first trim, and trims only what every
backup already holds, so that no backup is ever left behind.

At the end the writers are stopped, the cluster must settle (every backup
replicating, every node's commit LSN the primary's next LSN), and then:

* every acknowledged record is at its LSN, with the same length and hash,
  on every node that retains that LSN (and was read before every trim);
* the nodes agree record by record on every LSN both retain;
* the primary's log is gapless from LSN 1 to its commit point, each
  backup's from its first retained LSN to the same commit point;
* every record is a writer's record (self-describing payload, bytes
  checked in the guest) that the writer attempted (or had in flight when
  it died), none appears twice, and none whose write() failed with an
  error that means "not in the log" (Documentation/device.rst: all but
  ENOTCONN and EINTR);
* acknowledged LSNs are unique and grow per writer.

Printed: faults injected (by kind), appends acknowledged/failed/unknown,
records verified, records lost/altered (must be 0).
"""

import argparse
import os
import random
import re
import shlex
import signal
import sys
import threading
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "vm"))

import rlnode                    # noqa: E402
from cluster import VMError      # noqa: E402

WRITER = "/usr/lib/rdmalog/selftests/hist_writer"
PORT = "/dev/rdmalog-hist"      # init.sh: the history port
PORT_LOCK = "/run/rdmalog-hist.lock"    # hist_writer.c: PORT_LOCK
CONF = "/etc/rdmalog.conf"
# write() errors after which the record may be in the log
# (Documentation/device.rst): ENOTCONN, on a backup only; EINTR is only
# ever seen by a writer that is not dying, and then nothing was appended
UNKNOWN = {"ENOTCONN"}
# with leader changes (Documentation/device.rst, failure-model.rst): a
# record whose write() timed out, whose primary stepped down under it, or
# whose primary's log went down under it, on any node, may have reached
# a backup that the new primary adopts
UNKNOWN_LEADER_CHANGE = {"ENOTCONN", "ETIMEDOUT", "ENETDOWN"}
MASK = (1 << 64) - 1
HIST_MIN_LEN, HIST_INLINE = 24, 200
WAIT = 180              # bound of every "wait until" (rejoin, catch-up)
# faults on the primary (--primary-faults: failover auto): each ends in a
# leader change, and the old primary rejoins as a backup
PRIMARY_KINDS = ("pkill", "preload", "ppause", "pblackhole", "pswitch",
                 "proll", "pdouble")
# primary kinds that need five nodes or more (two nodes lost at once)
FIVE_ONLY = ("pdouble",)
KINDS = ("cut", "flap", "kill", "reload", "trim", "quorum", "blip",
         "blackhole", "pause", "netem", "catchup") + PRIMARY_KINDS
RESTARTS = ("kill", "reload", "catchup")
# primary faults after which the old primary starts again with an empty log
PRIMARY_RESTARTS = ("pkill", "preload", "proll", "pdouble")
# kinds only drawn when backups must catch up (they restart behind trims)
CATCHUP_ONLY = ("catchup",)
# kinds the run needs at least one of that took effect; flap and netem
# are losses RC should ride through, and a blip (the quorum lost for
# less than the commit timeout) one that commits wait out: their effects
# are only counted
REQUIRED = ("cut", "kill", "reload", "trim", "quorum", "blackhole", "pause",
            "catchup") + PRIMARY_KINDS
# the primary's counters that show a fault's effect
EFFECT_COUNTERS = ("disconnects", "heartbeat_timeouts", "joins", "trims",
                   "commit_timeouts", "truncated_records")
OVERTIME = 300          # the most a run goes on looking for them
# a trim fault waits this long at most for the ring to fill to its mark
# (the writers' rate under TCG: often not reached; a longer wait made the
# trim faults a third of a short run, the ring filling all the same)
TRIM_FILL_WAIT = 10
# the cluster file's timers (ms), which the faults are drawn around
# the guests' timers, times RDMALOG_TIMEOUT_SCALE (make check-debug): the
# faults are timed by them
COMMIT_TIMEOUT, PEER_TIMEOUT = rlnode.scaled(3000), rlnode.scaled(5000)


class CheckFailed(AssertionError):
    pass


def splitmix64(x):
    x = (x + 0x9e3779b97f4a7c15) & MASK
    x = ((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9) & MASK
    x = ((x ^ (x >> 27)) * 0x94d049bb133111eb) & MASK
    return x ^ (x >> 31)


def hist_len(seed, wid, seq, maxlen):
    """Length of record seq of writer wid (hist_writer.c: hist_len())."""
    r = splitmix64((seed ^ (wid << 40) ^ seq) & MASK)
    if maxlen <= HIST_INLINE or not r & 1:
        top = min(maxlen, HIST_INLINE)
        return HIST_MIN_LEN + (r >> 1) % (top - HIST_MIN_LEN + 1)
    return HIST_INLINE + 1 + (r >> 1) % (maxlen - HIST_INLINE)


def parse_duration(s):
    m = re.fullmatch(r"(\d+)([smh]?)", str(s).strip())
    if not m:
        raise ValueError(f"bad duration {s!r} (SECONDS, or e.g. 30m, 2h)")
    return int(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def job_lines(job):
    """(line, fields) of every whole non-empty line of a job's output (a
    last line without its newline was cut by the loss of its VM)."""
    return text_lines(job.output())


def text_lines(text):
    lines = text.split("\n")
    if not text.endswith("\n"):
        lines = lines[:-1]
    return [(ln, ln.split()) for ln in lines if ln.split()]


class Writer:
    """One hist_writer process on one node, and its history."""

    def __init__(self, node, wid, seed, maxlen):
        self.node, self.wid, self.seed, self.maxlen = node, wid, seed, maxlen
        # the history also through the VM's history port (cluster.py:
        # Node.hist_path), which a killed VM cannot take with it
        self.port = getattr(node, "hist_path", None)
        self.complete = bool(self.port)     # no line lost with the VM
        # exec: the job is the writer, not a shell around it, so that
        # stop() waits for the writer's own end (a forwarded write waits
        # for its answer through a SIGTERM: device.rst, -EINTR)
        self.job = node.spawn(f"exec {WRITER} -w {wid} -s {seed} -m {maxlen} "
                              f"-o /tmp/hist.{wid}"
                              + (f" -H {PORT}" if self.port else ""))
        self.lost_vm = False
        self.termed = self.killed = False
        self.on_primary = node.index == 1

    def stop(self, sig=signal.SIGTERM, wait=90, say=None):
        """Signal the writer and wait for it; when it is still there after
        wait seconds, say where it is stuck (/proc/PID/stack) and SIGKILL
        it.  Returns the seconds it took."""
        t0 = time.monotonic()
        if self.job.done():
            return 0
        self.termed = self.termed or sig == signal.SIGTERM
        self.killed = self.killed or sig == signal.SIGKILL
        try:
            self.job.kill(sig)
            self.job.wait(wait)
        except VMError:
            if not self.job.done():
                if say:
                    self.stuck(say, f"{wait}s after signal {int(sig)}")
                self.job.kill(signal.SIGKILL)
                try:
                    self.job.wait(60)
                except VMError:
                    pass
        return time.monotonic() - t0

    def exit_status(self):
        """How the job ended, in words, for a problem report."""
        if not self.job.done():
            return "still running"
        try:
            r = self.job.wait(0)
        except VMError as e:
            return f"no exit status: {e}"
        return f"rc {r.rc}" + (" (timed out)" if r.timed_out else "")

    def stuck(self, say, why):
        r = self.node.run(
            f"for p in $(pgrep -f 'hist_writer -w {self.wid} '); do "
            "grep -E '^(State|SigPnd|ShdPnd)' /proc/$p/status; "
            "cat /proc/$p/stack; done", timeout=30)
        say(f"writer {self.wid} on {self.node.name} still running {why}:"
            f" {' | '.join(r.out.split(chr(10)))}")

    def history_text(self):
        """The writer's history: from the history port when it has one
        (complete even when the VM was killed), else its output."""
        if not self.port:
            return self.job.output()
        tag = f"H {self.seed}:{self.wid} "
        try:
            with open(self.port, "rb") as f:
                data = f.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return "".join(ln[len(tag):] + "\n" for ln in data.split("\n")
                       if ln.startswith(tag))

    def events(self):
        """Parsed history: {"attempts": {seq: (len, hash)}, "acks": {seq:
        (lsn, len, hash)}, "fails": {seq: errname}, "last": max seq seen,
        "ended": bool}."""
        h = {"attempts": {}, "acks": {}, "fails": {}, "last": -1,
             "ended": False, "bad": []}
        for ln, f in text_lines(self.history_text()):
            try:
                if f[0] == "W":
                    seq = int(f[1])
                    h["attempts"][seq] = (int(f[2]), f[3])
                    h["last"] = max(h["last"], seq)
                elif f[0] == "A":
                    h["acks"][int(f[1])] = (int(f[2]), int(f[3]), f[4])
                elif f[0] == "F":
                    h["fails"][int(f[1])] = f[2]
                elif f[0] == "E":
                    h["ended"] = True
                elif f[0] == "B":
                    pass
                else:
                    h["bad"].append(ln)
            except (IndexError, ValueError):
                h["bad"].append(ln)
        return h


class Follower:
    """One hist_writer -F on one node: every record it read and every
    state it saw, for the checks in History.verify()."""

    def __init__(self, node):
        self.node = node
        self.job = node.spawn(f"exec {WRITER} -F")
        self.lost_vm = False

    def stop(self):
        if not self.job.done():
            self.job.kill(signal.SIGTERM)
            try:
                self.job.wait(60)
            except VMError:
                self.job.kill(signal.SIGKILL)

    def check(self, prim, final_first, problems):
        """prim: the primary's records (lsn: (len, hash, ...)), all read
        before any trim; final_first: its first LSN at the end."""
        name = getattr(self.node, "name", self.node)
        seen = 0
        nxt = first = commit = None
        for ln, f in job_lines(self.job):
            try:
                if f[0] == "R":
                    lsn, ln_, hsh = int(f[1]), int(f[2]), f[3]
                    seen += 1
                    if nxt is not None and lsn != nxt:
                        problems.append(f"{name} follower: read LSN {lsn} "
                                        f"after {nxt - 1}, no jump between")
                    nxt = lsn + 1
                    rec = prim.get(lsn)
                    if rec is None or rec[:2] != (ln_, hsh):
                        problems.append(
                            f"{name} follower: read {ln_}/{hsh} at LSN {lsn},"
                            f" the primary's record there is {rec}")
                elif f[0] == "S":
                    fi, co = int(f[1]), int(f[2])
                    if first is not None and (fi < first or co < commit):
                        problems.append(
                            f"{name} follower: first/commit went back from "
                            f"{first}/{commit} to {fi}/{co}")
                    if fi > final_first:
                        problems.append(
                            f"{name} follower: first LSN {fi} above the "
                            f"primary's ({final_first} at the end)")
                    first, commit = fi, co
                elif f[0] == "J":
                    nxt = int(f[1])
                elif f[0] == "N":
                    nxt = first = commit = None     # a new log, from its start
                elif f[0] in ("E", "ERR"):
                    if f[0] == "ERR":
                        problems.append(f"{name} follower: {ln}")
                else:
                    problems.append(f"{name} follower: bad line {ln!r}")
            except (IndexError, ValueError):
                problems.append(f"{name} follower: bad line {ln!r}")
        return seen


class History:
    """One run of the checker on a 3-node cluster c (already booted)."""

    def __init__(self, c, seed=None, duration=120, catchup=None,
                 capacity="4M", maxlen=4096, writers=2, log=print,
                 settle=WAIT, nodes=3, primary_faults=None, kinds=None):
        if seed is None:
            env = os.environ.get("RDMALOG_HISTORY_SEED")
            seed = int(env) if env else random.SystemRandom().randrange(
                1, 1 << 31)
        if catchup is None:
            catchup = os.environ.get("RDMALOG_HISTORY_CATCHUP", "1") \
                not in ("", "0", "no")
        if primary_faults is None:
            primary_faults = os.environ.get("RDMALOG_HISTORY_PRIMARY", "0") \
                not in ("", "0", "no")
        self.c, self.seed, self.duration = c, seed, duration
        # node 1 the primary first, the others its backups; with primary
        # faults the primary changes (self.prim); a quorum is a majority
        # of the nodes, the primary included
        self.n = len(c.nodes) if c else nodes
        self.all = tuple(range(1, self.n + 1))
        self.prim = 1
        self.primary_faults = primary_faults
        self.unknown = UNKNOWN_LEADER_CHANGE if primary_faults else UNKNOWN
        self.quorum_backups = self.n // 2
        self.catchup, self.capacity, self.maxlen = catchup, capacity, maxlen
        self.nwriters, self.settle = writers, settle
        # without catch-up: faults before the first trim (kills/reloads)
        self.restarts = 5 + min(duration, 1800) // 90
        self.rng = random.Random(seed)
        self.rng_faults = random.Random(seed + 1)   # choices inside faults
        # RDMALOG_HISTORY_KINDS: only these kinds (a shorter smoke run)
        only = kinds or os.environ.get("RDMALOG_HISTORY_KINDS", "").split()
        # RDMALOG_HISTORY_SKIP: kinds left out of a run given no kinds
        # (make check: those its run on the other kernel has)
        skip = [] if kinds else \
            os.environ.get("RDMALOG_HISTORY_SKIP", "").split()
        bad = [k for k in only + skip if k not in KINDS]
        if bad:
            raise ValueError(f"RDMALOG_HISTORY_KINDS/_SKIP: no kind {bad}")
        self.kinds = [k for k in KINDS if (catchup or k not in CATCHUP_ONLY)
                      and (primary_faults or k not in PRIMARY_KINDS)
                      and (self.n >= 5 or k not in FIVE_ONLY)
                      and (not only or k in only) and k not in skip]
        if not self.kinds:
            raise ValueError("RDMALOG_HISTORY_KINDS: no kind left")
        self.required = [k for k in REQUIRED if k in self.kinds]
        # every line of the run stamped with the seconds since it began
        t_start = time.monotonic()
        self.say = lambda m: log(f"{time.monotonic() - t_start:6.1f}s {m}")
        self.conf = rlnode.cluster_file(capacity, cluster=46,
                                        max_record="64K",
                                        nodes=self.all,
                                        timeout=COMMIT_TIMEOUT,
                                        peer_timeout=PEER_TIMEOUT,
                                        scale=False,
                                        failover="auto" if primary_faults
                                        else "manual")
        # (epoch, node) of every UP or ROLE event that said primary
        # (rdmalogctl -j monitor on every node; primary faults only)
        self.monitors = []         # (node, job)
        self.roles = []
        self.writers = []          # every Writer ever started
        self.followers = []        # every Follower ever started
        self.next_wid = {n: 100 * n for n in self.all}
        self.faults = {k: 0 for k in KINDS}
        # faults seen to take effect, by the primary's counters (effect())
        self.effective = {k: 0 for k in KINDS}
        self.effects = {}          # counter: its total over all faults
        self.trimmed = False       # the primary trimmed at least once
        self.dumps = {n: {} for n in self.all}    # node: {lsn: rec}
        self.dumped_to = {n: 1 for n in self.all}
        self.problems = []
        self.t0 = time.monotonic()
        # where the run's history is saved (history.json; --check DIR)
        self.save_dir = getattr(c, "workdir", None)
        # QEMU exits nobody asked for, so far: a wait gives up on a dead VM
        self.deaths = {nd.name: len(nd.deaths) for nd in (c.nodes if c else ())}

    # ---- cluster plumbing
    @property
    def backups(self):
        return tuple(n for n in self.all if n != self.prim)

    def node_up(self, n):
        nd = self.c[n]
        nd.run("lsmod | grep -q '^rdmalog ' || modprobe rdmalog",
               timeout=120, check=True)
        if self.primary_faults:
            self.stop_monitors(n)
            self.monitors.append((n, nd.spawn("exec rdmalogctl -j monitor")))
        rlnode.apply(nd, self.conf, CONF)

    def stop_monitors(self, n):
        for m, job in self.monitors:
            if m == n and not job.done():
                job.kill(signal.SIGTERM)
                try:
                    job.wait(30)
                except VMError:
                    job.kill(signal.SIGKILL)

    def collect_roles(self):
        """Every claim to lead that the monitors saw: (epoch, node)."""
        import json
        self.roles = []
        for n, job in self.monitors:
            for ln, _ in job_lines(job):
                try:
                    ev = json.loads(ln)
                except ValueError:
                    continue
                if ev.get("event") in ("up", "role") and \
                        ev.get("role") == "primary":
                    self.roles.append((int(ev.get("epoch", 0)), n))

    def status(self, n):
        return rlnode.status(self.c[n])

    def peer(self, n):
        """The primary's peer entry for backup n."""
        return rlnode.peers(self.c[self.prim]).get(n, {})

    def start_writers(self, n):
        for _ in range(self.nwriters):
            wid = self.next_wid[n]
            self.next_wid[n] += 1
            self.writers.append(Writer(self.c[n], wid, self.seed,
                                       self.maxlen))

    def start_follower(self, n):
        self.followers.append(Follower(self.c[n]))

    def node_followers(self, n):
        return [f for f in self.followers
                if f.node is self.c[n] and not f.job.done()]

    def node_writers(self, n):
        return [w for w in self.writers
                if w.node is self.c[n] and not w.job.done()]

    def wait(self, fn, what, timeout=None):
        deadline = time.monotonic() + (timeout or WAIT)
        last = None
        while True:
            last = fn()
            if last is True:
                return
            for nd in self.c.nodes:
                if len(nd.deaths) > self.deaths[nd.name]:
                    raise CheckFailed(f"{nd.name} died (its QEMU exited: "
                                      f"{nd.deaths[-1]}) while waiting for "
                                      f"{what}: {last}")
            if time.monotonic() >= deadline:
                raise CheckFailed(f"timed out after {timeout or WAIT}s "
                                  f"waiting for {what}: {last}")
            time.sleep(1)

    def rejoined(self, n):
        """True once the primary replicates to backup n, else where it is."""
        p = self.peer(n)
        if p.get("state") == "connected" and p.get("replicating"):
            return True
        st = self.status(self.prim)["log"]
        return (f"node{self.prim} sees node{n} {p.get('state')} "
                f"replicating={p.get('replicating')} msg={p.get('msg')!r} "
                f"(node{n} reported first/commit/next "
                f"{p.get('first_lsn')}/{p.get('commit_lsn')}/"
                f"{p.get('next_lsn')}; node{self.prim} has {st['first_lsn']}/"
                f"{st['commit_lsn']}/{st['next_lsn']})"
                + ("" if self.catchup or not self.trimmed else
                   "; the primary has trimmed and catch-up is not enabled"))

    def wait_may_elect(self, p):
        """A fault of primary p ends in a leader change only if the others
        may vote: a node whose module or VM restarted (a backup fault, or
        the test before) votes only once it learned the epoch (three peer
        timeouts and two seconds after it came up, then a majority of its
        peers heard: leader-change.rst, "Terms")."""
        def learned():
            for n in self.all:
                if n != p and \
                        self.status(n)["election"]["learned"] is not True:
                    return f"node{n} may not vote yet"
            return True
        self.wait(learned, "every node but the primary may vote")

    def wait_new_join(self, p, n, before):
        """After backup n restarted: primary p's view of it may be its
        connection from before the restart until the peer timeout
        (connected, replicating), so rejoined() could pass on it; wait
        until p took n's new connection (its joins counter moved), or,
        with primary faults, another node leads."""
        j0 = before[p].get("joins", 0)

        def joined():
            if rlnode.stats(self.c[p]).get("joins", 0) > j0:
                return True
            if self.primary_faults:
                now = self.primary_now()
                if now is not None and now[0] != p:
                    return True
            return f"node{p} still counts {j0} joins"
        self.wait(joined, f"node{p} to take node{n}'s new connection")

    def wait_rejoined(self, n):
        self.wait(lambda: self.rejoined(n),
                  f"node{n} to rejoin replication (caught up)")

    def follow_primary(self):
        """With primary faults, any fault may change the leader (a cut
        of two backups of three leaves them a majority of their own):
        self.prim becomes whichever node leads the highest epoch."""
        if not self.primary_faults:
            return True
        now = self.primary_now()
        if now is None:
            return "no node says it leads"
        if now[0] != self.prim:
            self.say(f"  node{now[0]} leads epoch {now[1]} now (was "
                     f"node{self.prim})")
            self.prim = now[0]
        return True

    def wait_all_rejoined(self):
        """Every backup of the primary (of now) replicating again."""
        def all_in():
            r = self.follow_primary()
            if r is not True:
                return r
            for b in self.backups:
                r = self.rejoined(b)
                if r is not True:
                    return r
            return True
        self.wait(all_in, "every backup to rejoin replication (caught up)")

    # ---- faults
    def f_cut(self, n, p):
        t = p["cut"]
        self.say(f"fault cut node{n} for {t:.1f}s")
        self.c[n].link(False)
        time.sleep(t)
        self.c[n].link(True)

    def f_flap(self, n, p):
        times = p["flap"]
        k = len(times)
        self.say(f"fault flap node{n} {k} times")
        for down, up in times:
            self.c[n].link(False)
            time.sleep(down)
            self.c[n].link(True)
            time.sleep(up)

    def f_kill(self, n, p):
        self.say(f"fault kill node{n} (SIGKILL of its VM, boot, apply)")
        for w in self.node_writers(n):      # before: kill() ends the jobs
            w.lost_vm = True
        for f in self.node_followers(n):
            f.lost_vm = True
        self.c[n].kill()
        self.c[n].boot()
        self.node_up(n)
        self.start_follower(n)
        self.start_writers(n)

    def f_reload(self, n, p):
        self.say(f"fault reload node{n} (SIGKILL writers, rmmod, modprobe, "
                 "apply)")
        t0 = time.monotonic()
        ws = self.node_writers(n)
        for w in ws:
            w.stop(signal.SIGKILL, wait=20, say=self.say)
        for f in self.node_followers(n):    # it holds the device open
            f.stop()
        t1 = time.monotonic()
        nd = self.c[n]
        nd.wait_until("rdmalogctl node down 2>/dev/null; rmmod rdmalog",
                      timeout=60, interval=1)
        t2 = time.monotonic()
        self.node_up(n)
        self.say(f"  {len(ws)} writers gone in {t1 - t0:.1f}s, module out in "
                 f"{t2 - t1:.1f}s, back up in {time.monotonic() - t2:.1f}s")
        self.start_follower(n)
        self.start_writers(n)

    def f_catchup(self, n, p):
        """Faults while a backup catches up: the backup reloaded behind the
        primary's trims (it restarts its log and pulls), then, while it
        pulls, a trim on the primary and a cut of its cable."""
        if not self.trimmed and self.f_trim(n, p) is False:
            return False
        self.say(f"fault catchup node{n}: reload, then a trim and a "
                 f"{p['short']:.1f}s cut while it catches up")
        self.f_reload(n, p)
        to = self.safe_trim_point(p["keep"])
        if to is not None:
            self.trim_to(to, skip=(n,))
            self.say(f"  trimmed to LSN {to} while node{n} catches up")
        self.c[n].link(False)
        time.sleep(p["short"])
        self.c[n].link(True)

    def f_quorum(self, n, p, kind="quorum"):
        """The cables of enough backups out together that the primary has
        no quorum (both of two, three of four), for less or for more than
        the commit timeout (then the primary's writers time out, and what
        was uncommitted is removed)."""
        t = p["quorum"]
        self.make_room(p["keep"])
        k = len(self.backups) - self.quorum_backups + 1
        away = sorted(self.rng_faults.sample(self.backups, k))
        self.say(f"fault {kind}: node{'s' if k > 1 else ''} "
                 + ", ".join(map(str, away)) + f" cut for {t:.1f}s "
                 f"(commit timeout {COMMIT_TIMEOUT / 1000:.0f}s)")
        for b in away:
            self.c[b].link(False)
        time.sleep(t)
        for b in away:
            self.c[b].link(True)

    def f_blip(self, n, p):
        """The quorum lost for less than the commit timeout."""
        self.f_quorum(n, dict(p, quorum=p["blip"]), "blip")

    def f_blackhole(self, n, p):
        t = p["cut"]
        self.say(f"fault blackhole node{n} for {t:.1f}s (carrier up, "
                 "every frame dropped)")
        self.c[n].blackhole(True)
        try:
            time.sleep(t)
        finally:
            self.c[n].blackhole(False)

    def f_pause(self, n, p):
        t = p["pause"]
        self.say(f"fault pause node{n}'s VM for {t:.1f}s (QMP stop/cont; "
                 f"peer timeout {PEER_TIMEOUT / 1000:.0f}s)")
        self.c[n].qmp("stop")
        try:
            time.sleep(t)
        finally:
            self.c[n].qmp("cont")

    def f_netem(self, n, p):
        t, loss, delay = p["cut"], p["loss"], p["delay"]
        self.say(f"fault netem on node{n} for {t:.1f}s: {loss:.1f}% loss, "
                 f"{delay} ms delay")
        nd = self.c[n]
        nd.run(f"tc qdisc add dev eth0 root netem loss {loss:.1f}% "
               f"delay {delay}ms", timeout=30, check=True)
        try:
            time.sleep(t)
            r = nd.run("tc qdisc show dev eth0", timeout=30)
            if "netem" not in r.out:
                raise CheckFailed(f"node{n}: netem not in place: {r.out}")
        finally:
            nd.run("tc qdisc del dev eth0 root; true", timeout=30)

    def f_pkill(self, n, p):
        self.say(f"fault pkill: the primary node{self.prim}")
        self.f_kill(self.prim, p)

    def f_preload(self, n, p):
        self.say(f"fault preload: the primary node{self.prim}")
        self.stop_monitors(self.prim)
        self.f_reload(self.prim, p)

    def f_ppause(self, n, p):
        self.say(f"fault ppause: the primary node{self.prim}, its writers "
                 "running (the stale leader)")
        # writers that wait for space would write nothing stale
        self.make_room(p["keep"])
        self.f_pause(self.prim, dict(p, pause=p["leader"]))

    def f_pblackhole(self, n, p):
        self.say(f"fault pblackhole: the primary node{self.prim}, its "
                 "writers running")
        self.make_room(p["keep"])
        self.f_blackhole(self.prim, dict(p, cut=p["leader"]))

    def f_pswitch(self, n, p):
        """A planned switchover under load: the primary hands the log
        over to backup n (rdmalogctl node switchover); it must work."""
        P = self.prim
        # a node reloaded a moment ago may not vote or stand yet (it
        # waits out the candidacies of before its load): an operator's
        # switchover would be refused; wait as the operator would
        for k in (P, n):
            self.wait(lambda: self.status(k)["election"]["learned"] is True
                      or f"node{k} may not vote yet",
                      f"node{k} to have learned (may vote)")
        self.say(f"fault pswitch: node{P} hands the log over to node{n} "
                 "(switchover, writers running)")
        t0 = time.monotonic()
        r = self.c[P].run(f"rdmalogctl node switchover {n}", timeout=120)
        if r.rc != 0:
            raise CheckFailed(f"switchover from node{P} to node{n} failed "
                              f"(rc {r.rc}): {r.out.strip()}")
        self.say(f"  switched over in {time.monotonic() - t0:.1f}s")

    def f_proll(self, n, p):
        """A rolling restart: every node's module reloaded one by one,
        each back in replication before the next, the primary last."""
        P = self.prim
        self.say(f"fault proll: every node reloaded in turn, the primary "
                 f"node{P} last")
        for b in self.backups:
            self.f_reload(b, p)
            self.forget(b)
            self.wait_all_rejoined()
        if self.prim != P:
            raise CheckFailed(f"node{self.prim} leads while node{P}'s "
                              "backups were reloaded")
        self.stop_monitors(P)
        self.f_reload(P, p)

    def f_pdouble(self, n, p):
        """Two nodes lost at once (five nodes: three remain, a
        majority): the primary's VM and backup n's killed together."""
        P = self.prim
        self.say(f"fault pdouble: the VMs of the primary node{P} and of "
                 f"node{n} killed together")
        for m in (P, n):
            for w in self.node_writers(m):
                w.lost_vm = True
            for f in self.node_followers(m):
                f.lost_vm = True
        for m in (P, n):
            self.c[m].kill()
        for m in (P, n):
            self.c[m].boot()
        for m in (P, n):
            self.node_up(m)
            self.forget(m)
            self.start_follower(m)
            self.start_writers(m)

    def primary_now(self):
        """(node, epoch) of the node that says it leads, of the highest
        epoch, or None."""
        best = None
        for n in self.all:
            try:
                st = self.status(n)
            except (AssertionError, VMError):
                continue
            if st["node"]["role"] == "primary" and st["node"].get("up", 1):
                e = st["log"]["epoch"]
                if best is None or e > best[1]:
                    best = (n, e)
        return best

    def wait_leader_change(self, old, old_epoch):
        """After a primary fault: another node leads, in a later epoch."""
        def changed():
            now = self.primary_now()
            if now and now[0] != old and now[1] > old_epoch:
                return True
            return f"primary now {now}, was node{old} epoch {old_epoch}"
        self.wait(changed, f"a new primary after node{old} (epoch "
                  f"{old_epoch})")
        self.prim, epoch = self.primary_now()
        self.say(f"  node{self.prim} leads epoch {epoch} (was node{old}, "
                 f"epoch {old_epoch})")

    def safe_trim_point(self, keep):
        """Where the primary may trim to now: in the no-catch-up mode,
        below what both backups hold (and only while both replicate)."""
        st = self.status(self.prim)["log"]
        to = st["commit_lsn"]
        if not self.catchup:
            for n in self.backups:
                p = self.peer(n)
                if not (p.get("state") == "connected" and
                        p.get("replicating")):
                    return None
                to = min(to, self.status(n)["log"]["commit_lsn"])
        return to - keep if to - keep > st["first_lsn"] else None

    def f_trim(self, n, p):
        cap = self.status(self.prim)["log"]
        fill = p["fill"]
        self.say(f"fault trim: wait for the ring to fill to {fill:.0%} "
                 f"(at most {TRIM_FILL_WAIT} s), then trim")
        full = False
        deadline = time.monotonic() + TRIM_FILL_WAIT
        while time.monotonic() < deadline:
            cap = self.status(self.prim)["log"]
            if cap["used"] >= fill * cap["capacity"]:
                full = True
                break
            time.sleep(1)
        to = self.safe_trim_point(p["keep"])
        if to is None:
            self.say("  nothing to trim safely now")
            return False
        self.trim_to(to)
        how = "filled to" if full else \
            f"not filled to in {TRIM_FILL_WAIT} s:"
        self.say(f"  trimmed to LSN {to} (ring {cap['used']}/"
                 f"{cap['capacity']} bytes, {how} {fill:.0%})")
        return True

    def trim_to(self, to, skip=()):
        """Trim the primary to LSN to, every record below it read first on
        every node but those in skip: a backup that lags is waited for,
        and fails the run if it never holds the range."""
        for b in self.backups:
            if b not in skip:
                self.wait(lambda b=b: self.holds(b, to),
                          f"node{b} to hold the records below the trim "
                          f"point {to}")
        for m in self.all:
            if m not in skip:
                self.dump(m, to)
        self.c[self.prim].run(f"rdmalogctl log trim {to}", timeout=60,
                              check=True)
        first = self.status(self.prim)["log"]["first_lsn"]
        if first != to:
            raise CheckFailed(f"trimmed to {to}, but node{self.prim}'s "
                              f"first LSN is {first}")
        self.trimmed = True

    def make_room(self, keep):
        """A ring more than half full is trimmed first: a fault aimed at
        the commit path needs writers that are not waiting for space."""
        st = self.status(self.prim)["log"]
        if st["used"] * 2 <= st["capacity"]:
            return
        to = self.safe_trim_point(keep)
        if to is not None:
            self.trim_to(to)
            self.say(f"  room made first: trimmed to LSN {to} (ring "
                     f"{st['used']}/{st['capacity']} bytes)")

    def holds(self, n, to):
        lg = self.status(n)["log"]
        if lg["commit_lsn"] >= to:
            return True
        return (f"node{n} first/commit/next {lg['first_lsn']}/"
                f"{lg['commit_lsn']}/{lg['next_lsn']}")

    # ---- reading the logs
    def dump(self, n, to=0):
        """Read node n's records from where the last dump stopped up to
        LSN to (0: its commit point) into self.dumps[n]."""
        frm = self.dumped_to[n]
        r = self.c[n].run(f"{WRITER} -D -f {frm} -t {to}", timeout=600)
        lines = r.out.splitlines()
        if r.rc or not lines or not lines[0].startswith("S "):
            raise CheckFailed(f"node{n}: reading its log failed (rc {r.rc}):"
                              f" {r.out[-500:]}")
        first, commit, nxt = map(int, lines[0].split()[1:])
        if to and commit < to:
            raise CheckFailed(f"node{n}: asked to read up to LSN {to}, its "
                              f"commit point is {commit}")
        for ln in lines[1:]:
            f = ln.split()
            if f[0] == "R":
                rec = (int(f[2]), f[3], int(f[4]), int(f[5]))
            elif f[0] == "X":
                rec = (int(f[2]), f[3], "X", f[4])
            elif f[0] == "P":
                rec = (int(f[2]), f[3], "P", int(f[4]))
            elif f[0] == "T":
                # nothing trims while the checker reads: the range it
                # was asked for went away under it
                self.problems.append(f"node{n}: LSN {f[1]} trimmed (ERANGE)"
                                     f" while read ({frm}..{to or commit})")
                continue
            else:
                continue
            lsn = int(f[1])
            old = self.dumps[n].get(lsn)
            if old is not None and old != rec:
                self.problems.append(f"node{n} LSN {lsn} changed between "
                                     f"two reads: {old} then {rec}")
            self.dumps[n][lsn] = rec
        self.dumped_to[n] = max(frm, min(to or commit, commit))
        return first, commit, nxt

    def dump_all(self, to):
        for n in self.all:
            self.dump(n, to)

    def forget(self, n):
        """Node n restarts with an empty log: read it again from LSN 1."""
        self.dumped_to[n] = 1

    # ---- the run
    def schedule(self):
        """Every fault of the run, drawn from the seed alone: (kind, backup,
        parameters, pause after it).  Every kind at least once; without
        catch-up, the kills and reloads (self.restarts of them) all come
        before the first trim, and none after it."""
        rng = self.rng
        kinds = self.kinds
        first = list(kinds if self.catchup else
                     [k for k in kinds if k != "trim"])
        rng.shuffle(first)
        i = 0
        seen = set()
        while True:
            if i < len(first):
                kind = first[i]
            elif self.catchup:
                kind = rng.choice(kinds)
            elif i < self.restarts:
                kind = rng.choice([k for k in ("cut", "flap", "kill",
                                               "reload") if k in kinds]
                                  or kinds)
            else:
                kind = rng.choice([k for k in ("cut", "flap", "trim")
                                   if k in kinds] or kinds)
            if not self.catchup and i == self.restarts - 1 and \
                    "trim" in kinds:
                kind = "trim"
            # the first of each kind is drawn to take effect for sure
            # (longer than the timer it is aimed at), later ones either way
            sure = kind not in seen
            seen.add(kind)
            i += 1
            ct, pt = COMMIT_TIMEOUT / 1000, PEER_TIMEOUT / 1000
            p = {"cut": rng.uniform(1.2 * pt, 1.6 * pt) if sure and
                 kind in ("cut", "blackhole") else rng.uniform(1, 8),
                 # for sure: past the peer timeout too, so that the
                 # connections go and the uncommitted records are removed
                 # (until then the commit path waits for the WRITEs in
                 # flight); later ones also between the two timeouts
                 "quorum": rng.uniform(1.3 * pt, 1.8 * pt) if sure else
                 rng.uniform(1.3 * ct, 1.8 * pt),
                 "blip": rng.uniform(0.3, 0.6 * ct),
                 # a primary paused or blackholed: long enough that its
                 # backups elect another (peer timeout + stand delays)
                 "leader": rng.uniform(2 * pt, 2.5 * pt),
                 "pause": rng.uniform(1.2 * pt, 1.6 * pt) if sure or
                 rng.random() < 0.5 else rng.uniform(0.5, 0.5 * pt),
                 "loss": rng.uniform(0.5, 5), "delay": rng.randint(1, 20),
                 "short": rng.uniform(1, 3),
                 "flap": [(rng.uniform(0.1, 1), rng.uniform(0.1, 1))
                          for _ in range(rng.randint(3, 8))],
                 "fill": rng.uniform(0.5, 1.0),
                 "keep": rng.randint(0, 50)}
            yield kind, rng.choice(self.backups), p, rng.uniform(0.5, 2)

    def run(self):
        """The run (_run()); a run that fails leaves no writer, follower
        or monitor of its own running into the next test's log."""
        try:
            return self._run()
        except BaseException:
            self.abandon()
            raise

    def abandon(self):
        """Kill every job the run started (their VMs may be gone)."""
        jobs = [w.job for w in self.writers] + \
            [f.job for f in self.followers] + [j for _, j in self.monitors]
        for job in jobs:
            try:
                if not job.done():
                    job.kill(signal.SIGKILL)
            except Exception as e:      # noqa: BLE001: best effort
                self.say(f"  cannot kill a job of the failed run: {e}")

    def _run(self):
        say = self.say
        say(f"history checker: seed {self.seed} (replay: "
            f"RDMALOG_HISTORY_SEED={self.seed}), {self.duration}s of faults,"
            f" catch-up {'demanded' if self.catchup else 'not demanded'}, "
            f"ring {self.capacity}, records 24..{self.maxlen} bytes, "
            f"{self.nwriters} writers per node")
        for n in self.all:
            self.c[n].run("rdmalogctl node down 2>/dev/null; true",
                          timeout=120)
        for n in self.all:
            self.node_up(n)
        for n in self.backups:
            self.wait_rejoined(n)
        self.wait(lambda: self.status(1)["durability"]["effective"] ==
                  "quorum" or "not yet", "quorum in force")
        self.t0 = time.monotonic()
        for n in self.all:
            self.start_follower(n)
        for n in self.all:
            self.start_writers(n)
        faults = self.schedule()
        done = None         # when every kind had been injected once
        while time.monotonic() - self.t0 < self.duration or \
                any(self.effective[k] == 0 for k in self.required) or \
                any(self.faults[k] == 0 for k in self.kinds):
            kind, n, p, pause = next(faults)
            if kind in RESTARTS and self.trimmed and not self.catchup:
                raise CheckFailed(f"schedule: {kind} after a trim without "
                                  "catch-up")
            old = self.prim
            if kind in PRIMARY_KINDS:
                self.wait_may_elect(old)
            before = self.counters()
            old_epoch = self.status(old)["log"]["epoch"]
            if getattr(self, f"f_{kind}")(n, p) is False:
                continue                # not done (a trim with no room)
            self.faults[kind] += 1
            if kind in RESTARTS:
                self.forget(n)
            if kind in PRIMARY_RESTARTS:
                self.forget(old)
            if kind in PRIMARY_KINDS:
                self.wait_leader_change(old, old_epoch)
            if kind in RESTARTS and n != old:
                self.wait_new_join(old, n, before)
            self.wait_all_rejoined()
            if kind in PRIMARY_KINDS:
                # the wait above proved it: another node leads
                self.effective[kind] += 1
            elif self.prim != old:
                # a backup fault that left the others a majority of
                # their own: they elected one of them
                self.effective[kind] += 1
                self.say(f"  took effect: node{self.prim} leads now")
            else:
                self.effect(kind, n, before, self.counters())
            # once every kind was injected, the search for the effects
            # still missing is bounded
            missing = [k for k in self.required if not self.effective[k]]
            if all(self.faults[k] for k in self.kinds):
                done = done or time.monotonic()
            if missing and done and time.monotonic() - \
                    max(done, self.t0 + self.duration) > OVERTIME:
                raise CheckFailed(
                    f"{OVERTIME}s after every kind of fault ran once and "
                    f"the run's {self.duration}s, still no fault that took "
                    "effect of kind(s) " + ", ".join(missing))
            time.sleep(pause)
        say(f"faults done after {time.monotonic() - self.t0:.0f}s: "
            + ", ".join(f"{k} {self.faults[k]} ({self.effective[k]} took "
                        "effect)" for k in self.kinds))
        say("their effects (counters' deltas over all faults): " + ", ".join(
            f"{k} {v}" for k, v in sorted(self.effects.items())))
        t0 = time.monotonic()
        for w in self.writers:          # every writer at once, then wait
            if not w.job.done():
                w.termed = True
                w.job.kill(signal.SIGTERM)
        for w in self.writers:
            w.stop(wait=max(1, 90 - (time.monotonic() - t0)), say=self.say)
        say(f"writers stopped in {time.monotonic() - t0:.1f}s")
        self.settle_down()
        self.final = {n: self.dump(n) for n in self.all}
        # the followers have read up to the commit point by now
        time.sleep(2)
        for f in self.followers:
            f.stop()
        for n in self.all:
            self.stop_monitors(n)
        self.collect_roles()
        if self.save_dir:
            self.save(os.path.join(self.save_dir, SAVED))
        return self.verify()

    def save(self, path):
        """Everything verify() looks at, for history.py --check."""
        import json

        def name(nd):
            return getattr(nd, "name", nd)
        d = {"seed": self.seed, "duration": self.duration,
             "catchup": self.catchup, "nodes": self.n,
             "primary_faults": self.primary_faults, "prim": self.prim,
             "roles": self.roles,
             "faults": self.faults, "effective": self.effective,
             "effects": self.effects,
             "writers": [{"node": name(w.node), "wid": w.wid,
                          "seed": w.seed, "maxlen": w.maxlen,
                          "text": w.history_text(), "lost_vm": w.lost_vm,
                          "killed": w.killed, "termed": w.termed,
                          "on_primary": w.on_primary,
                          "complete": w.complete}
                         for w in self.writers],
             "followers": [{"node": name(f.node), "text": f.job.output(),
                            "lost_vm": f.lost_vm} for f in self.followers],
             "dumps": self.dumps, "final": self.final,
             "problems": self.problems}
        with open(path, "w") as f:
            json.dump(d, f)
        self.say(f"history saved in {path} (kept when the run fails; "
                 f"history.py --check {os.path.dirname(path)})")

    def counters(self):
        """The primary's counters, and the backups' (they restart at 0
        with a reloaded module: a delta is taken from 0 then)."""
        return {n: rlnode.stats(self.c[n]) for n in self.all}

    def effect(self, kind, n, before, after):
        """Whether the fault took effect, by the counters: the primary
        lost the backup's connection (or, for a lost quorum, timed out
        commits), a restarted backup joined again (and, for catchup,
        caught up or restarted its log), a trim trimmed."""
        def d(node, key):
            a, b = after[node].get(key, 0), before[node].get(key, 0)
            if node == n and kind in RESTARTS:
                return a        # its module (or VM) started again: from 0
            return a - b if a >= b else a
        P = self.prim
        for key in EFFECT_COUNTERS:
            self.effects[key] = self.effects.get(key, 0) + d(P, key)
        for key in ("catchups", "log_resets"):
            for b in self.backups:
                self.effects[f"backup {key}"] = \
                    self.effects.get(f"backup {key}", 0) + d(b, key)
        if kind == "catchup":
            ok = d(P, "joins") >= 1 and \
                d(n, "catchups") + d(n, "log_resets") >= 1
        elif kind in RESTARTS:
            ok = d(P, "joins") >= 1
        elif kind == "trim":
            ok = d(P, "trims") >= 1
        elif kind == "quorum":
            ok = d(P, "commit_timeouts") >= 1
        else:
            ok = d(P, "disconnects") >= 1
        self.effective[kind] += ok
        self.say(f"  {'took effect' if ok else 'no effect seen'}: node{P} "
                 + ", ".join(f"{k} +{d(P, k)}" for k in EFFECT_COUNTERS
                             if d(P, k)))

    def settle_down(self):
        """Every backup replicating, and every node's commit point the
        primary's next LSN (the backups caught up)."""
        def all_in():
            r = self.follow_primary()
            for b in self.backups if r is True else ():
                r = self.rejoined(b)
                if r is not True:
                    break
            return r
        self.wait(all_in, "every backup to catch up (rejoin replication)",
                  self.settle)

        def same():
            p = self.status(self.prim)["log"]
            logs = {n: self.status(n)["log"] for n in self.backups}
            if p["commit_lsn"] == p["next_lsn"] and all(
                    lg["commit_lsn"] == p["next_lsn"] for lg in logs.values()):
                return True
            return (f"node{self.prim} first/commit/next {p['first_lsn']}/"
                    f"{p['commit_lsn']}/{p['next_lsn']}, " +
                    ", ".join(f"node{n} {lg['first_lsn']}/{lg['commit_lsn']}/"
                              f"{lg['next_lsn']}" for n, lg in logs.items()))
        self.wait(same, "every backup to catch up with the primary's commit "
                  "point", self.settle)

    # ---- the checks
    def verify(self):
        prob = self.problems
        hist = {}
        for w in self.writers:
            h = w.events()
            h["writer"] = w
            hist[w.wid] = h
            for ln in h["bad"][:5]:
                prob.append(f"writer {w.wid}: unparsable history line {ln!r}")
            if h["ended"] or w.killed or w.lost_vm:
                pass
            elif w.termed:
                prob.append(f"writer {w.wid} on {w.node.name} did not stop "
                            f"cleanly on SIGTERM ({w.exit_status()}): "
                            f"{w.job.output()[-200:]!r}")
            else:
                prob.append(f"writer {w.wid} on {w.node.name} ended by "
                            f"itself ({w.exit_status()}): "
                            f"{w.job.output()[-200:]!r}")

        P = self.prim
        # the log: the primary's records; with primary faults the final
        # primary's, and below what it read (it may have restarted behind
        # trims) the others' (the nodes are compared with it below)
        prim = dict(self.dumps[P])
        if self.primary_faults:
            for n in self.all:
                for lsn, rec in self.dumps[n].items():
                    prim.setdefault(lsn, rec)
        commit = self.final[P][1]
        extra = [x for x in prim if x >= commit]
        if extra:
            prob.append(f"node{P}: records read beyond its commit point "
                        f"{commit}: {extra[:10]}")
        # gapless, from 1 to the primary's commit point
        missing = [x for x in range(1, commit) if x not in prim]
        if missing:
            prob.append(f"node{P}: LSNs missing from its log: "
                        f"{missing[:10]} ({len(missing)})")
        # at most one primary per epoch, by the events
        led = {}
        for e, n in self.roles:
            led.setdefault(e, set()).add(n)
        for e, ns in sorted(led.items()):
            if len(ns) > 1:
                prob.append(f"epoch {e} led by nodes "
                            + ", ".join(map(str, sorted(ns))))
        # every record is an attempted writer record, at most once
        seen = {}
        alien = dup = failed_present = inflight = epoch_starts = 0
        for lsn in sorted(prim):
            ln, hsh, wid, seq = prim[lsn]
            if wid == "P":
                epoch_starts += 1
                if not self.primary_faults:
                    prob.append(f"LSN {lsn}: an epoch-start record (epoch "
                                f"{seq}) in a run without leader change")
                continue
            h = hist.get(wid)
            if wid == "X" or h is None:
                alien += 1
                prob.append(f"LSN {lsn}: not a writer's record "
                            f"({seq if wid == 'X' else f'writer {wid}'})")
                continue
            w = h["writer"]
            att = h["attempts"].get(seq)
            # the write in flight when the writer was killed: its "W" line
            # may not have reached us, and when its VM was killed the
            # last lines that the agent had not relayed yet went with it
            # (the bytes still show it is this writer's record seq)
            # (with a history port a killed VM loses no line: then at
            # most the one write after the last attempt seen)
            if att is None and (seq <= h["last"] or
                                (seq > h["last"] + 1 and
                                 (w.complete or not w.lost_vm))):
                alien += 1
                prob.append(f"LSN {lsn}: writer {wid} seq {seq} was never "
                            f"attempted (last attempt {h['last']})")
            if att is None:
                inflight += 1
            want = hist_len(w.seed, wid, seq, w.maxlen)
            if ln != want or (att and att != (ln, hsh)):
                alien += 1
                prob.append(f"LSN {lsn}: writer {wid} seq {seq}: len/hash "
                            f"{ln}/{hsh}, attempted {att}, len {want}")
            if (wid, seq) in seen:
                dup += 1
                prob.append(f"writer {wid} seq {seq} at LSN {seen[(wid, seq)]}"
                            f" and again at {lsn}")
            seen[(wid, seq)] = lsn
            err = h["fails"].get(seq)
            if err is not None and (err not in self.unknown or
                                    (w.on_primary and
                                     not self.primary_faults)):
                failed_present += 1
                prob.append(f"LSN {lsn}: writer {wid} seq {seq} is in the "
                            f"log but its write() failed with {err}")
        # every acknowledged record at its LSN, everywhere it is retained
        acked = failed = unknown = lost = altered = verified = 0
        errs = {}
        by_lsn = {}
        for wid, h in hist.items():
            prev = 0
            for seq in sorted(h["acks"]):
                lsn, ln, hsh = h["acks"][seq]
                acked += 1
                if lsn <= prev:
                    prob.append(f"writer {wid}: LSN {lsn} acknowledged after "
                                f"{prev}")
                prev = lsn
                if lsn in by_lsn:
                    prob.append(f"LSN {lsn} acknowledged to writer "
                                f"{by_lsn[lsn]} and to {(wid, seq)}")
                by_lsn[lsn] = (wid, seq)
                rec = prim.get(lsn)
                if rec is None:
                    lost += 1
                    prob.append(f"writer {wid} seq {seq}: acknowledged at "
                                f"LSN {lsn}, not in node{P}'s log")
                elif rec != (ln, hsh, wid, seq):
                    altered += 1
                    prob.append(f"writer {wid} seq {seq}: acknowledged at "
                                f"LSN {lsn} ({ln}/{hsh}), node{P} has {rec}")
                else:
                    verified += 1
            for seq, err in h["fails"].items():
                errs[err] = errs.get(err, 0) + 1
                if err in self.unknown and h["writer"].on_primary and \
                        not self.primary_faults:
                    prob.append(f"writer {wid} seq {seq}: {err} on the "
                                "primary (a backup's outcome only)")
                if err in self.unknown:
                    unknown += 1
                else:
                    failed += 1
        # what the followers read was, at every LSN, the primary's record
        followed = 0
        for f in self.followers:
            followed += f.check(prim, self.final[P][0], prob)
        # every node's writers made progress (forwarding works)
        progress = {}
        for h in hist.values():
            nd = h["writer"].node
            name = getattr(nd, "name", nd)
            progress[name] = progress.get(name, 0) + len(h["acks"])
        for name, k in sorted(progress.items()):
            if not k:
                prob.append(f"{name}: no append of its writers was "
                            "acknowledged in the whole run")
        # the backups: the same record at every LSN they were read at,
        # gapless from their first retained LSN to the commit point
        compared = 0
        for n in self.all:
            if n == P and not self.primary_faults:
                continue
            d = self.dumps[n]
            for lsn, rec in d.items():
                compared += 1
                if prim.get(lsn) != rec:
                    if by_lsn.get(lsn):
                        altered += 1
                    prob.append(f"node{n} LSN {lsn}: {rec}, node{P} has "
                                f"{prim.get(lsn)}")
            first, bcommit, _ = self.final[n]
            gaps = [x for x in range(first, bcommit) if x not in d]
            if gaps:
                prob.append(f"node{n}: LSNs {gaps[:10]} ({len(gaps)}) of its "
                            f"retained range {first}..{bcommit - 1} not read")
            if bcommit != commit:
                prob.append(f"node{n}: commit LSN {bcommit}, node{P} "
                            f"{commit}")
        report = {
            "seed": self.seed,
            "faults": dict(self.faults),
            "effective": dict(self.effective),
            "required": list(self.required),
            "acked_by_node": progress,
            "writers": len(self.writers),
            "acked": acked, "failed": failed, "unknown": unknown,
            "errors": errs,
            "records": len(prim), "verified": verified,
            "in_flight_present": inflight,
            "backup_records_compared": compared,
            "followed": followed,
            "lost": lost, "altered": altered, "alien": alien,
            "duplicates": dup, "failed_present": failed_present,
            "epoch_starts": epoch_starts,
            "leader_changes": max(0, len(led) - 1),
            "primaries": {e: sorted(ns) for e, ns in led.items()},
            "problems": prob,
        }
        self.say(f"faults injected: " + ", ".join(
            f"{k} {v}" for k, v in self.faults.items() if v) +
            f" (total {sum(self.faults.values())})")
        self.say(f"appends: {acked} acknowledged, {failed} failed, "
                 f"{unknown} unknown outcome ("
                 + ", ".join(f"{e} {k}" for e, k in sorted(errs.items()))
                 + f") by {len(self.writers)} writers; log: {len(prim)} records (LSN 1..{commit - 1})")
        if self.primary_faults:
            self.say(f"leader changes: {max(0, len(led) - 1)} (epochs led: "
                     + ", ".join(f"{e} by node{'/'.join(map(str, sorted(ns)))}"
                                 for e, ns in sorted(led.items()))
                     + f"), {epoch_starts} epoch-start records")
        self.say(f"records verified: {verified} acknowledged on node{P}, "
                 f"{compared} backup copies compared, {followed} reads by "
                 f"{len(self.followers)} followers; {inflight} in the log "
                 "from writes in flight when their writer was killed")
        self.say(f"records lost: {lost}, altered: {altered}, not sent: "
                 f"{alien}, duplicated: {dup}, failed but present: "
                 f"{failed_present}")
        for p in prob[:30]:
            self.say(f"PROBLEM: {p}")
        if len(prob) > 30:
            self.say(f"... {len(prob) - 30} more problems")
        return report


class Recorded:
    """A finished job's output, as saved (or made up): what Writer and
    Follower read of a job."""

    def __init__(self, text):
        self.text = text

    def output(self):
        return self.text

    def done(self):
        return True


def recorded_writer(node, wid, seed, maxlen, text, lost_vm=False,
                    killed=False, termed=True, on_primary=None,
                    complete=False):
    w = Writer.__new__(Writer)
    w.port, w.complete = None, complete
    w.node, w.wid, w.seed, w.maxlen = node, wid, seed, maxlen
    w.job, w.lost_vm, w.killed, w.termed = Recorded(text), lost_vm, killed, \
        termed
    w.on_primary = node == "node1" if on_primary is None else on_primary
    return w


def recorded_follower(node, text, lost_vm=False):
    f = Follower.__new__(Follower)
    f.node, f.job, f.lost_vm = node, Recorded(text), lost_vm
    return f


SAVED = "history.json"


def load(path):
    """A History rebuilt from a run's saved history.json (path: the file
    or its directory), ready for verify()."""
    import json
    if os.path.isdir(path):
        path = os.path.join(path, SAVED)
    with open(path) as f:
        d = json.load(f)
    h = History(None, seed=d["seed"], duration=d["duration"],
                catchup=d["catchup"], log=print, nodes=d["nodes"],
                primary_faults=d.get("primary_faults", False))
    h.prim = d.get("prim", 1)
    h.roles = [tuple(x) for x in d.get("roles", [])]
    h.faults, h.effective = d["faults"], d["effective"]
    h.effects = d["effects"]
    h.writers = [recorded_writer(**w) for w in d["writers"]]
    h.followers = [recorded_follower(**f) for f in d["followers"]]
    h.dumps = {int(n): {int(lsn): tuple(r) for lsn, r in recs.items()}
               for n, recs in d["dumps"].items()}
    h.final = {int(n): tuple(v) for n, v in d["final"].items()}
    h.problems = list(d["problems"])
    return h


def check(report):
    """Raise CheckFailed when the report shows anything wrong."""
    if report["problems"]:
        raise CheckFailed(f"history check failed (seed {report['seed']}): "
                          f"{len(report['problems'])} problems, first: "
                          f"{report['problems'][0]}")
    if not report["verified"]:
        raise CheckFailed("no acknowledged record to verify")
    missing = [k for k in report.get("required", REQUIRED)
               if not report["effective"].get(k)]
    if missing:
        raise CheckFailed("no fault of kind(s) " + ", ".join(missing) +
                          " took effect")


def selftest(report=None):
    """The checks themselves, on made-up histories and logs (no VM): a
    clean run passes, and each kind of damage is reported.  report(name,
    ok, detail) is called for each case (default: print a line); returns
    the number of cases that went wrong."""
    if report is None:
        def report(name, ok, detail):
            print(f"{'ok' if ok else 'FAIL'} - {name}: {detail}")
    def FakeWriter(node, wid, text):
        return recorded_writer(node, wid, 7, 4096, text,
                               on_primary=node == "n1")

    def rec(wid, seq):
        return (hist_len(7, wid, seq, 4096), f"{wid:08x}{seq:08x}", wid, seq)

    def build(damage):
        h = History(None, seed=7, duration=1, catchup=False,
                    log=lambda m: None)
        log = {}        # the primary's log: lsn -> rec
        text = {101: "B 101 1 7 4096\n", 201: "B 201 1 7 4096\n"}
        lsn = 1
        for seq in range(6):
            for wid in (101, 201):
                r = rec(wid, seq)
                text[wid] += f"W {seq} {r[0]} {r[1]}\n"
                if seq == 3 and wid == 201:
                    text[wid] += f"F {seq} ETIMEDOUT\n"
                    continue
                if seq == 4 and wid == 201:
                    text[wid] += f"F {seq} ENOTCONN\n"     # not in the log
                    continue
                log[lsn] = r
                text[wid] += f"A {seq} {lsn} {r[0]} {r[1]}\n"
                lsn += 1
        for wid in text:
            text[wid] += "E 6\n"
        # a follower on n2 that read LSNs 1 and 2
        text["F"] = "S 1 3 3\n" + "".join(
            f"R {x} {log[x][0]} {log[x][1]}\n" for x in (1, 2)) + "E\n"
        backups = {2: dict(log), 3: dict(log)}
        damage(log, backups, text)
        h.writers = [FakeWriter("n1", 101, text[101]),
                     FakeWriter("n2", 201, text[201])]
        if "vm_lost" in text:       # writer 101's VM was killed
            h.writers[0].lost_vm, h.writers[0].termed = True, False
            h.writers[0].complete = text["vm_lost"]
        h.followers = [recorded_follower("n2", text["F"])]
        h.dumps = {1: log, 2: backups[2], 3: backups[3]}
        top = max(max(log), lsn - 1) + 1
        h.final = {n: (1, top, top) for n in (1, 2, 3)}
        if "pf" in text:            # a run with primary faults
            h.primary_faults, h.unknown = True, UNKNOWN_LEADER_CHANGE
            h.prim = text.get("prim", 1)
            h.roles = text.get("roles", [])
            for n, first in text.get("first", {}).items():
                h.dumps[n] = {x: r for x, r in h.dumps[n].items()
                              if x >= first}
                h.final[n] = (first, top, top)
        return h

    def run(damage):
        return build(damage).verify()

    def none(log, b, t):
        pass

    def lose(log, b, t):
        del log[3]
        for d in b.values():
            del d[3]

    def alter(log, b, t):
        log[2] = log[2][:1] + ("0" * 16,) + log[2][2:]

    def alien(log, b, t):
        log[2] = (30, "0" * 16, "X", "not-a-writer-record")

    def dup(log, b, t):
        log[3] = log[1]
        b[2][3] = b[3][3] = log[1]

    def failed(log, b, t):
        log[11] = rec(201, 3)           # its write() said ETIMEDOUT
        for d in b.values():
            d[11] = log[11]

    def unknown(log, b, t):
        log[11] = rec(201, 4)           # ENOTCONN: may be there
        for d in b.values():
            d[11] = log[11]

    def eintr(log, b, t):
        t[201] = t[201].replace("F 4 ENOTCONN", "F 4 EINTR")
        log[11] = rec(201, 4)           # EINTR: nothing was appended
        for d in b.values():
            d[11] = log[11]

    def primary_enotconn(log, b, t):
        r = rec(101, 6)                 # a primary's writer: never ENOTCONN
        t[101] += f"W 6 {r[0]} {r[1]}\nF 6 ENOTCONN\n"

    def diverge(log, b, t):
        b[3][5] = b[3][6]

    def gap(log, b, t):
        del b[2][7]

    def stalled(log, b, t):
        # writer 201 (node n2) never got an acknowledgment
        t[201] = "".join(ln + "\n" for ln in t[201].splitlines()
                         if not ln.startswith("A "))

    def follower_other(log, b, t):
        # read at LSN 2 what the primary never held there
        t["F"] = t["F"].replace(f"R 2 {log[2][0]} {log[2][1]}",
                                f"R 2 {log[2][0]} {'0' * 16}")

    def follower_back(log, b, t):
        t["F"] = t["F"].replace("S 1 3 3\n", "S 1 3 3\nS 1 2 3\n")

    def follower_skip(log, b, t):
        t["F"] = t["F"].replace(f"R 1 {log[1][0]} {log[1][1]}\n", "")
        t["F"] = "S 1 3 3\nR 1 " + f"{log[1][0]} {log[1][1]}\n" + \
            f"R 3 {log[3][0]} {log[3][1]}\n"

    def lost_vm_ahead(complete):
        # two writes beyond writer 101's last attempt, its VM killed
        def damage(log, b, t):
            t[101] = t[101].replace("E 6\n", "")
            t["vm_lost"] = complete
            log[11] = rec(101, 7)
            for d in b.values():
                d[11] = log[11]
        return damage
    lost_ahead_port = lost_vm_ahead(True)
    lost_ahead_relay = lost_vm_ahead(False)

    def epoch_start_rec(log, b, t):
        log[11] = (8, "0" * 16, "P", 2)
        for d in b.values():
            d[11] = log[11]

    def lc_failed(log, b, t):
        failed(log, b, t)
        t["pf"] = True

    def lc_primary_enotconn(log, b, t):
        primary_enotconn(log, b, t)
        t["pf"] = True

    def lc_epoch_start(log, b, t):
        epoch_start_rec(log, b, t)
        t["pf"] = True
        t["roles"] = [(1, 1), (2, 2)]

    def lc_restarted_primary(log, b, t):
        # node 2 leads at the end; it restarted behind a trim to LSN 4
        # and read only from there: node 1's reads fill the log below
        t.update(pf=True, prim=2, first={2: 4}, roles=[(1, 1), (2, 2)])

    def lc_two_primaries(log, b, t):
        t.update(pf=True, roles=[(1, 1), (2, 2), (2, 3)])

    def lc_lost(log, b, t):
        lose(log, b, t)
        t.update(pf=True, prim=3, roles=[(1, 1), (2, 3)])

    def never(log, b, t):
        log[11] = rec(101, 9)           # beyond its last attempt + 1
        for d in b.values():
            d[11] = log[11]

    cases = [("clean", none, None), ("unknown outcome present", unknown, None),
             ("lost", lose, "lost"), ("altered", alter, "altered"),
             ("alien", alien, "alien"), ("duplicate", dup, "duplicates"),
             ("failed but present", failed, "failed_present"),
             ("EINTR but present", eintr, "failed_present"),
             ("ENOTCONN on the primary", primary_enotconn, None),
             ("backup differs", diverge, None), ("backup gap", gap, None),
             ("never attempted", never, "alien"),
             ("a node's writers never acknowledged", stalled, None),
             ("a follower read another record", follower_other, None),
             ("a follower saw the commit point go back", follower_back,
              None),
             ("a follower skipped an LSN", follower_skip, None),
             ("a killed VM's writer, lines relayed: a write beyond the "
              "last seen may be in flight", lost_ahead_relay, None),
             ("a killed VM's writer, history port: only one write in "
              "flight", lost_ahead_port, "alien"),
             ("an epoch-start record in a run without leader change",
              epoch_start_rec, None),
             ("leader change: a timed-out write may be present", lc_failed,
              None),
             ("leader change: ENOTCONN on a primary is an unknown outcome",
              lc_primary_enotconn, None),
             ("leader change: an epoch-start record", lc_epoch_start, None),
             ("leader change: the last primary restarted behind a trim",
              lc_restarted_primary, None),
             ("leader change: two primaries in one epoch", lc_two_primaries,
              None),
             ("leader change: lost", lc_lost, "lost")]
    bad = 0
    for name, damage, field in cases:
        rep = run(damage)
        want_ok = damage in (none, unknown, lost_ahead_relay, lc_failed,
                             lc_primary_enotconn, lc_epoch_start,
                             lc_restarted_primary)
        ok = not rep["problems"] if want_ok else \
            bool(rep["problems"]) and (field is None or rep[field] > 0)
        report(name, ok, f"{len(rep['problems'])} problems "
                         f"{rep['problems'][:1]}")
        bad += not ok
    # saved (history.json) and checked again (--check): the same verdicts
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        for name, damage, field in [("clean", none, None),
                                    ("lost", lose, "lost")]:
            h = build(damage)
            h.say = lambda m: None
            h.save(os.path.join(d, SAVED))
            h2 = load(d)
            h2.say = lambda m: None
            rep = h2.verify()
            ok = (not rep["problems"]) if field is None else rep[field] > 0
            report(f"saved and checked again: {name}", ok,
                   f"{len(rep['problems'])} problems {rep['problems'][:1]}")
            bad += not ok
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", default="120",
                    help="seconds of load and faults (or 30m, 2h)")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--catchup", action="store_true", default=None,
                    help="demand catch-up (the default; "
                    "RDMALOG_HISTORY_CATCHUP=1)")
    ap.add_argument("--no-catchup", dest="catchup", action="store_false",
                    help="never leave a backup behind the primary's trims "
                    "(RDMALOG_HISTORY_CATCHUP=0)")
    ap.add_argument("--nodes", type=int, default=3, choices=(3, 5),
                    help="VMs, node 1 the primary (default 3)")
    ap.add_argument("--primary-faults", action="store_true", default=None,
                    help="also fault the primary (failover auto: kill, "
                    "reload, pause, blackhole; RDMALOG_HISTORY_PRIMARY=1)")
    ap.add_argument("--capacity", default="4M")
    ap.add_argument("--writers", type=int, default=2)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--selftest", action="store_true",
                    help="check the checks on made-up histories (no VM)")
    ap.add_argument("--check", metavar="DIR",
                    help="check a run's saved history again (DIR/"
                    f"{SAVED}, kept with the consoles; no VM)")
    args = ap.parse_args()
    if args.selftest:
        return 1 if selftest() else 0
    if args.check:
        try:
            check(load(args.check).verify())
        except CheckFailed as e:
            print(f"FAILED: {e}")
            return 1
        print("history: PASS")
        return 0
    if args.verbose:
        import logging
        logging.basicConfig(level=logging.DEBUG)
    from cluster import Cluster

    def say(msg):
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)

    ok = False
    duration = parse_duration(args.duration)
    # the VMs' lifetime (a guard against runaway QEMUs) follows the run's
    os.environ.setdefault("RDMALOG_VM_LIFETIME",
                          str(max(3600, int(duration * 1.5) + 1800)))
    with Cluster(args.nodes, keep=args.keep) as c:
        say(f"cluster in {c.workdir}")
        report = None
        try:
            for nd in c:
                nd.run("modprobe rdmalog", timeout=120, check=True)
            h = History(c, seed=args.seed, duration=duration,
                        catchup=args.catchup, capacity=args.capacity,
                        writers=args.writers, log=say,
                        primary_faults=args.primary_faults)
            report = h.run()
            check(report)
            ok = True
        except (AssertionError, VMError) as e:
            say(f"FAILED: {e}")
        probs = c.kernel_log_problems()
        for p in probs:
            say(f"kernel problem: {p}")
        if probs:
            ok = False
        if not ok:
            c.keep = True
            say(f"consoles kept in {c.workdir}")
    say("history: " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
