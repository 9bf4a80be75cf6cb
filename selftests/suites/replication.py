# SPDX-License-Identifier: GPL-2.0
"""Replication: a backup grants the primary RDMA WRITE on its ring.

Three soft-RoCE nodes, node 1 primary. This first slice checks the ring
registration: every backup registers its ring (FRWR, REMOTE_WRITE only, in
a few segments of large chunks) on its connection to the primary and sends
a RING descriptor, which the primary validates and classifies as "in
sync" or "behind". The data path itself is tested in datapath.py.
Nothing here depends on timing: states are polled.
"""

import json
import re


from testlib import test, wait_for
import rlnode
from rlnode import status, stats, apply

NODES = 3
TIMEOUT = 600
WAIT = 180


CONF = "/etc/rdmalog.conf"


def cluster_file(capacity="1M", durability="quorum", max_record="64K"):
    return rlnode.cluster_file(capacity, durability, max_record, cluster=43)


def wait_connected(c, nodes=(1, 2, 3)):
    def ok():
        for n in nodes:
            ps = {p["id"]: p["state"] for p in status(c[n])["peers"]}
            if any(ps.get(p) != "connected" for p in nodes if p != n):
                return False
        return True
    wait_for(ok, timeout=WAIT, interval=2, what=f"nodes {nodes} connected")


def setup(c):
    for nd in c:
        nd.run("modprobe rdmalog", timeout=60, check=True)


def up(c, text):
    for nd in c:
        nd.run("rdmalogctl node down 2>/dev/null; true", timeout=120)
    for nd in c:
        apply(nd, text)
    wait_connected(c)


def dmesg(nd):
    return nd.run("dmesg", timeout=60, check=True).out


def check_granted(c, capacity, nbytes, max_record="64K"):
    for nd in c:
        nd.run("dmesg -c >/dev/null", timeout=60, check=True)
    up(c, cluster_file(capacity, max_record=max_record))

    def granted():
        out = dmesg(c[1])
        return all(re.search(rf"node 1: node {b} granted its ring "
                             rf"\({nbytes} bytes, \d+ segments?\): in sync",
                             out)
                   for b in (2, 3))
    wait_for(granted, timeout=WAIT, interval=2,
             what=f"node1 sees both backups' {capacity} rings, in sync")
    # at most RDMALOG_RING_MAX_SEGS segments per ring
    for n in re.findall(r"granted its ring \(\d+ bytes, (\d+) segments?\)",
                        dmesg(c[1])):
        assert 1 <= int(n) <= 12, n
    # no bad message, no completion error, no refused registration anywhere
    for nd in c:
        s = stats(nd)
        assert s["bad_msgs"] == 0, (nd.name, s)
        assert s["completion_errors"] == 0, (nd.name, s)
        assert "not replicating from" not in dmesg(nd), dmesg(nd)
    # backups do not grant each other anything
    for b in (2, 3):
        assert "granted its ring" not in dmesg(c[b]), dmesg(c[b])


@test
def backups_grant_ring(c):
    check_granted(c, "1M", 1 << 20)


@test
def backups_grant_small_ring(c):
    check_granted(c, "64K", 64 << 10, max_record="16K")


@test
def backups_grant_default_ring(c):
    """64 MiB (the default) is more than one 4 KiB-page FRWR holds on rxe."""
    check_granted(c, "64M", 64 << 20)


@test
def diverged_backup_is_not_replicated(c):
    for nd in c:
        nd.run("dmesg -c >/dev/null", timeout=60, check=True)
    up(c, cluster_file())
    # three records on every node; then node 1 (primary) and node 2 come
    # back with fresh, empty logs: node 2 is in sync with the new primary
    # (both at LSN 1), node 3 is not: it holds LSNs 1..3 of the old log,
    # another history (diverged: neither joined nor caught up)
    c[1].run("rdmalogcat -a a b c >/dev/null", timeout=60, check=True)
    wait_for(lambda: all(status(c[n])["log"]["commit_lsn"] == 4
                         for n in (2, 3)),
             timeout=WAIT, interval=2, what="backups committed 3 records")
    c[1].run("rdmalogctl node down", timeout=120, check=True)
    c[2].run("rdmalogctl node down", timeout=120, check=True)
    c[1].run("dmesg -c >/dev/null", timeout=60, check=True)
    apply(c[2], cluster_file())
    apply(c[1], cluster_file())
    wait_connected(c)

    def judged():
        out = dmesg(c[1])
        return (re.search(r"node 1: node 3 granted its ring .*: holds "
                          r"records of another log, diverged, "
                          r"not replicating", out)
                and re.search(r"node 1: node 2 granted its ring .*: in sync",
                              out))
    wait_for(judged, timeout=WAIT, interval=2,
             what="node3 diverged, node2 in sync")
    # the same judgements as status attributes (RDMALOG_PEER_A_SYNC)
    ps = rlnode.peers(c[1])
    assert ps[3].get("sync") == "diverged", ps[3]
    assert ps[2].get("sync") == "in_sync", ps[2]
    # quorum holds with node 2: appends commit, node 3 is left alone
    c[1].run("rdmalogcat -a d >/dev/null", timeout=60, check=True)
    wait_for(lambda: status(c[2])["log"]["commit_lsn"] == 2,
             timeout=WAIT, interval=2, what="node 2 holds the new record")
    assert status(c[3])["log"]["next_lsn"] == 4, status(c[3])["log"]
    assert stats(c[3]).get("catchups", 0) == 0, stats(c[3])


@test
def read_back_mode_commits_with_no_backup_message(c):
    """force_read=1 on every node: the iWARP rule on rxe. Each notice's
    WRITE is followed by an RDMA READ of it, whose completion proves
    that everything before it was placed: the primary commits on it, and
    the backups neither take their notices (no apply run) nor send a
    message per record (what they send stays that of their heartbeats)."""
    for n in (1, 2, 3):
        c[n].run("rdmalogctl node down 2>/dev/null; rmmod rdmalog && "
                 "modprobe rdmalog force_read=1", timeout=120, check=True)
    try:
        up(c, cluster_file(durability="all"))
        wait_for(lambda: status(c[1])["durability"]["effective"] == "all",
                 timeout=WAIT, interval=2, what="durability all in force")
        d = dmesg(c[1])
        for b in (2, 3):
            assert re.search(rf"node {b} granted its ring .*: in sync, "
                             r"replicating \(read-back mode\)", d), d[-3000:]
        s0 = {n: stats(c[n]) for n in (1, 2, 3)}
        r = c[1].run("rdmalog-bench -j -t 1 -s 64 -n 200", timeout=300,
                     check=True)
        assert json.loads(r.out)["appends"] == 200, r.out
        s1 = {n: stats(c[n]) for n in (1, 2, 3)}
        assert s1[1]["appends"] - s0[1]["appends"] == 200, (s0[1], s1[1])
        for n in (2, 3):
            runs = s1[n]["apply_runs"] - s0[n]["apply_runs"]
            sent = s1[n]["msgs_sent"] - s0[n]["msgs_sent"]
            print(f"# node {n}: {runs} apply runs, {sent} messages sent "
                  "for 200 commits")
            assert runs == 0, (n, s0[n], s1[n])
            # heartbeats only: far fewer than one per record
            assert sent < 100, (n, s0[n], s1[n])
        wait_for(lambda: all(status(c[n])["log"]["commit_lsn"] == 201
                             for n in (2, 3)),
                 timeout=WAIT, interval=2, what="backups committed 200")
        rlnode.same_log(c)
    finally:
        for n in (1, 2, 3):
            c[n].run("rdmalogctl node down 2>/dev/null; rmmod rdmalog; "
                     "modprobe rdmalog", timeout=120)


@test
def ack_mode_retries_an_ack_it_could_not_send(c):
    """force_ack=1, durability all: node 2 cannot send the ACK an APPEND
    asked for (forced: inject_ack_fail, as when it has no send buffer or
    credit). It sends it with the next message it receives, and the
    append commits long before its commit timeout."""
    c[1].run("rdmalogctl node down 2>/dev/null; rmmod rdmalog && "
             "modprobe rdmalog force_ack=1", timeout=120, check=True)
    try:
        up(c, rlnode.cluster_file("1M", "all", "64K", timeout=4000,
                                  cluster=43))
        wait_for(lambda: status(c[1])["durability"]["effective"] == "all",
                 timeout=WAIT, interval=2, what="durability all in force")
        before = stats(c[1])
        for i in range(3):
            c[2].run("echo 1 > /sys/module/rdmalog/parameters/"
                     "inject_ack_fail", timeout=60, check=True)
            r = c[1].run(f"rdmalogcat -a rec{i}", timeout=60)
            assert r.rc == 0 and r.out.split() == [str(i + 1)], \
                (f"append {i} failed: the ACK was not sent again", r.out)
            left = c[2].run("cat /sys/module/rdmalog/parameters/"
                            "inject_ack_fail", timeout=60, check=True).out
            assert left.strip() == "0", "node 2 sent no ACK at all"
        after = stats(c[1])
        assert after["commit_timeouts"] == before["commit_timeouts"], after
    finally:
        c[2].run("echo 0 > /sys/module/rdmalog/parameters/inject_ack_fail",
                 timeout=60)
        c[1].run("rdmalogctl node down 2>/dev/null; rmmod rdmalog; "
                 "modprobe rdmalog", timeout=120)


@test
def ack_mode_commits_on_backup_acks(c):
    """force_ack=1: the iWARP rule (a backup's copy counts once it ACKs)."""
    c[1].run("rdmalogctl node down 2>/dev/null; rmmod rdmalog && "
             "modprobe rdmalog force_ack=1", timeout=120, check=True)
    try:
        assert c[1].run("cat /sys/module/rdmalog/parameters/force_ack",
                        timeout=60, check=True).out.strip() == "Y"
        up(c, cluster_file(durability="all"))
        wait_for(lambda: status(c[1])["durability"]["effective"] == "all",
                 timeout=WAIT, interval=2, what="durability all in force")
        before = stats(c[2])["msgs_sent"]
        r = c[1].run("rdmalogcat -a one two three", timeout=60, check=True)
        assert r.out.split() == ["1", "2", "3"], r.out
        # every backup holds and exposes them, and ACKed (messages sent)
        wait_for(lambda: all(status(c[n])["log"]["commit_lsn"] == 4
                             for n in (2, 3)),
                 timeout=WAIT, interval=2, what="backups committed 3")
        assert stats(c[2])["msgs_sent"] > before
        for n in (2, 3):
            out = c[n].run("rdmalogcat", timeout=60, check=True).out
            assert out.split() == ["1", "one", "2", "two", "3", "three"], out
    finally:
        c[1].run("rdmalogctl node down 2>/dev/null; rmmod rdmalog; "
                 "modprobe rdmalog", timeout=120)
