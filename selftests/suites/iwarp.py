# SPDX-License-Identifier: GPL-2.0
"""The data path on soft-iWARP (siw, built out of tree by "make siw").

iWARP has no WRITE WITH IMMEDIATE and a WRITE's completion there does not
prove that the bytes reached the backup's memory, so the primary reads
each notice back and commits on the READ's completion, which comes only
after every WRITE before it was placed (read-back mode: the backup's CPU
still takes no part); siw also registers at most 256 pages
of 4 KiB per fast registration, so the ring is registered in pieces.
Three nodes, node 1 primary, quorum; states are polled. Leader change
runs over Send/Recv here (siw has no atomics): the last test loses the
primary and checks the votes, the fencing and the new epoch on iWARP.
"""

import json
import os
import re
import subprocess

from testlib import skip, test, wait_for
import rlnode
from rlnode import status

NODES = 3
TIMEOUT = 600
WAIT = 180
APPEND = "rdmalog_vm.siw=1"
CONF = "/etc/rdmalog.conf"
BUILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                     "build")
NO_SIW = "no siw.ko built for the guests' kernel (make siw)"


def siw_built(c):
    """Whether there is a siw.ko built for the guests' kernel, the one
    mkinitramfs.sh ships: build/siw/ for the default kernel, build/k/KVER/siw/
    for another."""
    for ko in (os.path.join(BUILD, "k", c.kver, "siw", "siw.ko"),
               os.path.join(BUILD, "siw", "siw.ko")):
        if not os.path.exists(ko):
            continue
        r = subprocess.run(["modinfo", "-F", "vermagic", ko],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True, timeout=30)
        if r.stdout.split()[:1] == [c.kver]:
            return True
    return False


def cluster_file(capacity="1M", durability="quorum"):
    return rlnode.cluster_file(capacity, durability, timeout=5000,
                               cluster=45)


def setup(c):
    if not siw_built(c):
        return
    for nd in c:
        nd.run("modprobe rdmalog", timeout=60, check=True)


def up(c, text):
    for nd in c:
        nd.run("rdmalogctl node down 2>/dev/null; dmesg -c >/dev/null; true",
               timeout=120)
    for nd in c:
        nd.put(text, CONF)
        nd.run(f"rdmalogctl apply {CONF}", timeout=120, check=True)
    wait_for(lambda: all(f"node 1: node {b} granted its ring" in
                         c[1].run("dmesg", timeout=60, check=True).out
                         for b in (2, 3)),
             timeout=WAIT, interval=2, what="both backups granted rings")


@test
def siw_device_is_iwarp(c):
    if not siw_built(c):
        skip(NO_SIW)
    out = c[1].run("rdma link show", timeout=60, check=True).out
    assert "siw0/1" in out and "ACTIVE" in out, out
    assert "rxe" not in out, out


@test
def siw_replicates_in_read_back_mode(c):
    if not siw_built(c):
        skip(NO_SIW)
    up(c, cluster_file())
    out = c[1].run("dmesg", timeout=60, check=True).out
    for b in (2, 3):
        assert (f"node 1: node {b} granted its ring (1048576 bytes"
                in out), out
        assert "in sync, replicating (read-back mode)" in out, out
    # no atomics: no ballot word, votes over Send/Recv only
    for n in (1, 2, 3):
        wait_for(lambda: status(c[n])["ballot"]["state"] != "failed",
                 timeout=WAIT, interval=1, what=f"node {n}'s ballot set up")
        b = status(c[n])["ballot"]
        assert b == {"state": "none",
                     "message": "the RDMA device has no atomics"}, b
        # nor a grant of it to any peer (BALLOT)
        assert rlnode.stats(c[n]).get("ballot_grants") == 0, \
            rlnode.stats(c[n])
    r = c[1].run("for i in $(seq 1 40); do echo siw-$i-$(head -c $((i*53)) "
                 "/dev/zero | tr '\\0' y); done | rdmalogcat -a",
                 timeout=300, check=True)
    assert [int(x) for x in r.out.split()] == list(range(1, 41)), r.out
    wait_for(lambda: all(status(c[n])["log"]["commit_lsn"] == 41
                         for n in (2, 3)),
             timeout=WAIT, interval=2, what="backups committed 40 records")
    assert len(rlnode.same_log(c).splitlines()) == 40


@test
def siw_larger_ring_in_pieces(c):
    """8 MiB: 4 MiB chunks, registered as 8 MRs of 1 MiB on siw."""
    if not siw_built(c):
        skip(NO_SIW)
    up(c, cluster_file(capacity="8M"))
    out = c[1].run("dmesg", timeout=60, check=True).out
    for b in (2, 3):
        assert (f"node 1: node {b} granted its ring (8388608 bytes, "
                "8 segments): in sync" in out), out
    r = c[1].run("head -c 45000 /dev/urandom | base64 -w 0 | rdmalogcat -a",
                 timeout=120, check=True)
    assert r.out.split() == ["1"], r.out
    wait_for(lambda: all(status(c[n])["log"]["commit_lsn"] == 2
                         for n in (2, 3)),
             timeout=WAIT, interval=2, what="backups committed")
    rlnode.same_log(c)


@test
def siw_backup_catches_up_with_reads(c):
    """A cut-off backup pulls what it missed with RDMA READ on iWARP (the
    READ sink is its ring's REMOTE_WRITE registration), across the 1 MiB
    pieces of both rings, then joins in read-back mode."""
    if not siw_built(c):
        skip(NO_SIW)
    up(c, rlnode.cluster_file("8M", "quorum", timeout=5000, cluster=45,
                              heartbeat=200, peer_timeout=1000))
    wait_for(lambda: rlnode.peers(c[1])[3]["replicating"], timeout=WAIT,
             interval=1, what="node 3 replicating")
    before = rlnode.stats(c[3])
    c[3].link(False)
    # not through status: on siw a reconnect attempt blocks in the TCP
    # connect, holding the peer's lock, until the cable is back
    wait_for(lambda: "connection to node 3 closed" in
             c[1].run("dmesg", timeout=60, check=True).out,
             timeout=WAIT, interval=0.5, what="primary lost node 3")
    # about 2.5 MiB in 60 records of 40000 bytes: READs cross pieces
    c[1].run("for i in $(seq 60); do head -c 30000 /dev/urandom | "
             "base64 -w 0 | rdmalogcat -a >/dev/null || exit 1; done",
             timeout=600, check=True)
    c[3].link(True)
    wait_for(lambda: rlnode.peers(c[1])[3]["replicating"], timeout=WAIT,
             interval=1, what="node 3 caught up and replicating")
    rlnode.assert_same_logs(c)
    after = rlnode.stats(c[3])
    pulled = after["catchup_bytes"] - before.get("catchup_bytes", 0)
    assert pulled > 2 << 20, f"pulled {pulled} bytes"
    # a connection lost while pulling (siw reconnects after a pulled
    # cable can flap) makes a second catch-up from where the first stopped
    assert after["catchups"] - before.get("catchups", 0) >= 1, after
    out = c[1].run("dmesg", timeout=60, check=True).out
    assert "node 1: node 3 caught up to LSN" in out and \
        "in sync, replicating (read-back mode)" in out, out[-3000:]


@test
def siw_leader_change_over_messages(c):
    """Leader change on iWARP, which has no atomics: the votes go over
    Send/Recv (VOTE_REQ, VOTE), the voter fences the lost primary first,
    and the new primary's epoch-start record commits in read-back mode. Node
    1's module goes (failover auto); the backup that stands wins the next
    epoch with the other's vote, keeps every committed record, the other
    follows it (told by LEAD on the connection it kept) and a write there
    is forwarded; node 1 loaded again joins as a backup and ends with the
    same log."""
    if not siw_built(c):
        skip(NO_SIW)
    text = rlnode.cluster_file("1M", "quorum", timeout=5000, cluster=45,
                               heartbeat=200, peer_timeout=1000,
                               failover="auto")
    up(c, text)
    r = c[1].run("printf 'm1\\nm2\\nm3\\n' | rdmalogcat -a", timeout=120,
                 check=True)
    last = int(r.out.split()[-1])
    wait_for(lambda: all(status(c[n])["log"]["commit_lsn"] > last
                         for n in (2, 3)),
             timeout=WAIT, interval=1, what="backups committed")
    e = status(c[1])["log"]["epoch"]
    # a node votes only once it learned (from both others, in three):
    # not a given when this test runs first, seconds after the load
    rlnode.wait_learned(c)
    c[1].run("rdmalogctl node down; rmmod rdmalog", timeout=120,
             check=True)

    def leader():
        for n in (2, 3):
            st = status(c[n])
            if st["node"]["role"] == "primary" and \
                    st["log"]["epoch"] > e:
                return n
        return None
    wait_for(lambda: leader() is not None, timeout=WAIT, interval=1,
             what="a backup leads a later epoch")
    new = leader()
    other = 5 - new
    d = c[new].run("dmesg", timeout=60, check=True).out
    assert f"node {new}: won epoch {e + 1}: 2 of 3 votes" in d, d[-3000:]
    v = c[other].run("dmesg", timeout=60, check=True).out
    assert f"node {other}: voted for node {new} in epoch {e + 1}" in v, \
        v[-3000:]
    # no atomics: asked by message only, nothing by compare-and-swap
    for p in status(c[new])["peers"]:
        if p["state"] == "connected":
            assert (p["vote_path"], p["vote_path_why"],
                    p["ballot_granted"]) == \
                ("messages", "no_atomics", False), p
    so, sn = rlnode.stats(c[other]), rlnode.stats(c[new])
    assert so["vote_reqs_received"] > 0 and sn["cas_votes"] == 0 and \
        sn["cas_refused"] == 0 and so["ballot_grants"] == 0, (so, sn)
    # the other learned its new primary by LEAD, on the connection it had
    # with it as a backup: kept over the change, as on rxe
    assert so["leads_received"] >= 1, so
    # joined in read-back mode: at its head, or after the epoch-start
    # record it wrote itself on the LEAD (protocol.rst)
    assert re.search(r"replicating( after it)? \(read-back mode\)", d), \
        d[-3000:]
    r = c[other].run("echo after | rdmalogcat -a", timeout=120, check=True)
    n = int(r.out.split()[-1])
    wait_for(lambda: all(status(c[x])["log"]["commit_lsn"] > n
                         for x in (2, 3)),
             timeout=WAIT, interval=1, what="the forwarded write committed")
    recs = [json.loads(x) for x in
            c[new].run("rdmalogcat -j -H", timeout=120,
                       check=True).out.splitlines()]
    data = [x.get("data") for x in recs if not x.get("epoch_start")]
    assert data[-4:] == ["m1", "m2", "m3", "after"], recs
    c[1].run("modprobe rdmalog", timeout=60, check=True)
    c[1].put(text, CONF)
    c[1].run(f"rdmalogctl apply {CONF}", timeout=120, check=True)
    wait_for(lambda: status(c[1])["log"]["commit_lsn"] > n,
             timeout=WAIT, interval=1, what="node 1 rejoined")
    assert status(c[1])["node"]["role"] == "backup", status(c[1])
    rlnode.assert_same_logs(c, nodes=(new, other, 1))
