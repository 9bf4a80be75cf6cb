# SPDX-License-Identifier: GPL-2.0
"""Leader change by hand: `rdmalogctl node promote` (issue 11).

Three soft-RoCE nodes, node 1 the primary of the cluster file, durability
quorum. A backup that is promoted stands for election in the next epoch
(Documentation/protocol.rst, "Votes"): it votes for itself, fences the
primary it follows, asks its peers, and leads once a majority of the
configured nodes granted. It keeps the log it holds, appends an
epoch-start record (Documentation/device.rst) and returns once that is
committed; the other backup follows it into the new epoch.

  * node 1 down, node 2 promoted: node 2 leads epoch e + 1 with every
    committed record, its epoch-start record after them, node 3 holds the
    same log and takes the next record; promote on the primary or on a
    node that is down is refused;
  * node 2 promoted while its attempt to connect to node 1 is not set up
    yet: the new primary leaves it to its setup;
  * node 2 promoted with both others down: no majority, it stays a backup
    with its vote spent; node 3 back (an empty log), node 2 wins the next
    epoch and node 3 catches up;
  * node 3 promoted while node 1 is alive: node 3 and node 2 (which
    grants) fence node 1; node 1 hears node 3 lead in a later epoch,
    steps down and follows it with its committed records;
  * a record node 2 holds beyond its commit point is adopted;
  * a full ring: the new primary leads without an epoch-start record;
  * node switchover: node 1 hands the log over to node 2 under load, and
    no writer sees an error;
  * priority: node 3 of a higher priority stands first and leads when
    node 1 goes, not node 2 of the lower id;
  * the ballot word (rxe: atomics): every vote in it; a backup's word
    closed while a primary holds its ring, open to candidates once none
    does, closed again (its vote for the new primary in it) before that
    primary is granted the ring.

States are polled; nothing passes or fails on a clock.
"""

import json
import re

from testlib import test, wait_for
import rlnode
from rlnode import status, records

NODES = 3
TIMEOUT = 900
WAIT = 180
CONF = "/etc/rdmalog.conf"
CLUSTER = 46


def cluster_file(failover="manual", primary=1):
    # teardown's timers: the suite waits mostly on them (learning takes
    # three peer timeouts and 2 s after every reload), not on the CPU
    return rlnode.cluster_file(cluster=CLUSTER, failover=failover,
                               primary=primary, timeout=2000,
                               peer_timeout=3000)


def peer(nd, pid):
    return {p["id"]: p for p in status(nd)["peers"]}[pid]


def wait_connected(c, n, nodes=(1, 2, 3)):
    wait_for(lambda: all(p["state"] == "connected"
                         for p in status(c[n])["peers"] if p["id"] in nodes),
             timeout=WAIT, interval=2, what=f"node {n} connected to {nodes}")


def wait_lost(c, n, pid):
    wait_for(lambda: peer(c[n], pid)["state"] != "connected", timeout=WAIT,
             interval=1, what=f"node {n} lost node {pid}")


def wait_commit(c, lsn, nodes=(1, 2, 3)):
    wait_for(lambda: all(status(c[n])["log"]["commit_lsn"] >= lsn
                         for n in nodes),
             timeout=WAIT, interval=1,
             what=f"commit LSN {lsn} on nodes {nodes}")


def append(nd, lines):
    r = nd.run(f"printf '{''.join(x + chr(92) + 'n' for x in lines)}' | "
               "rdmalogcat -a", timeout=300, check=True)
    return [int(x) for x in r.out.split()]


def headers(nd):
    """Every committed record of nd with its header, as rdmalogcat -j -H."""
    out = nd.run("rdmalogcat -j -H", timeout=300, check=True).out
    return [json.loads(x) for x in out.splitlines()]


def promote(nd):
    return nd.run("rdmalogctl node promote", timeout=300)


def reload(nd):
    nd.run("rdmalogctl node down 2>/dev/null; rmmod rdmalog 2>/dev/null; "
           "modprobe rdmalog && dmesg -c >/dev/null", timeout=120, check=True)


def fresh(c, failover="manual"):
    """A new cluster: every module reloaded (every log, vote and epoch
    forgotten), then the cluster file applied on each node. With failover
    manual node 1 leads at once; with auto it comes up as a backup and
    leads once both peers said they hold no log. The nodes may not vote
    yet: the test waits for that (rlnode.wait_learned()) where it elects,
    so that the wait runs beside what it does first, and before it takes
    nodes down (a node learns only while it hears a majority of its
    peers)."""
    for nd in c:
        reload(nd)
    for nd in c:
        rlnode.apply(nd, cluster_file(failover))
    wait_for(lambda: status(c[1])["node"]["role"] == "primary",
             timeout=WAIT, interval=1, what="node 1 leads")
    wait_connected(c, 1)
    wait_connected(c, 2)
    wait_connected(c, 3)



def setup(c):
    for nd in c:
        nd.run("modprobe rdmalog", timeout=60, check=True)


@test
def a_promoted_backup_keeps_the_log(c):
    fresh(c)
    lsns = append(c[1], ["one", "two", "three"])
    wait_commit(c, lsns[-1] + 1)
    e = status(c[1])["log"]["epoch"]
    r = promote(c[1])
    assert r.rc != 0 and "this node is the primary" in r.out, (r.rc, r.out)

    rlnode.wait_learned(c)      # before node 1 goes: see fresh()
    c[1].run("rdmalogctl node down", timeout=120, check=True)
    r = promote(c[1])
    assert r.rc != 0 and "the log is down" in r.out, (r.rc, r.out)
    wait_lost(c, 2, 1)
    wait_lost(c, 3, 1)
    c[2].run("dmesg -c >/dev/null", timeout=60, check=True)
    c[3].run("dmesg -c >/dev/null", timeout=60, check=True)
    s2, s3 = rlnode.stats(c[2]), rlnode.stats(c[3])
    p23 = peer(c[2], 3)["reconnects"]
    p32 = peer(c[3], 2)["reconnects"]
    r = promote(c[2])
    assert r.rc == 0, (r.rc, r.out)
    # keep-connections.md C3: the new primary kept its connection to node
    # 3 and told it by LEAD; no reconnect, no new ballot loopback
    t2, t3 = rlnode.stats(c[2]), rlnode.stats(c[3])
    assert t2["leads_sent"] == s2["leads_sent"] + 1, (s2, t2)
    assert t3["leads_received"] == s3["leads_received"] + 1, (s3, t3)
    assert peer(c[2], 3)["reconnects"] == p23, peer(c[2], 3)
    assert peer(c[3], 2)["reconnects"] == p32, peer(c[3], 2)
    d2 = c[2].run("dmesg", timeout=60, check=True).out
    assert "connection to node 3 closed" not in d2, d2
    assert "through a loopback queue pair" not in d2, d2
    assert f"epoch {e + 1}: LEAD on 1 live connections, 0 closed" in d2, d2

    st = status(c[2])
    assert st["node"]["role"] == "primary", st["node"]
    assert st["log"]["epoch"] == e + 1, st["log"]
    assert st["election"]["vote"] == {"epoch": e + 1, "for": 2}, st
    ch = st["last_change"]
    assert ch["why"] == "promoted" and ch["epoch"] == e + 1 and \
        "detect_ms" not in ch and \
        all(isinstance(ch[k], int) for k in ("ago_ms", "elect_ms",
                                               "fence_ms", "reconcile_ms")), \
        ch
    assert status(c[3])["last_change"] is None, status(c[3])
    hs = headers(c[2])
    assert [h["data"] for h in hs[-4:-1]] == ["one", "two", "three"], hs
    start = hs[-1]
    assert start.get("epoch_start") is True and start["epoch"] == e + 1 \
        and start["len"] == 8 and start["lsn"] == lsns[-1] + 1, start
    assert all(h["epoch"] == e and "epoch_start" not in h
               for h in hs[:-1]), hs
    d = c[2].run("dmesg", timeout=60, check=True).out
    assert f"node 2: won epoch {e + 1}: 2 of 3 votes, 2 needed" in d, d

    # the epoch-start record travelled with the LEAD (protocol.rst): node
    # 3 wrote it into its ring itself, before its RING, and node 2
    # counted it there: it never wrote it to node 3 (no record sent)
    d3 = c[3].run("dmesg", timeout=60, check=True).out
    assert f"node 3: holds node 2's epoch-start record, LSN {start['lsn']} " \
        f"of epoch {e + 1}, before it grants its ring" in d3, d3
    wait_for(lambda: "node 3 granted its ring" in c[2].run(
        "dmesg", timeout=60, check=True).out, timeout=WAIT,
        interval=1, what="node 2 judged node 3's RING")
    assert re.search(r"node 2: node 3 granted its ring \(.*\): holds our "
                     r"epoch-start record, replicating after it",
                     c[2].run("dmesg", timeout=60, check=True).out)
    assert peer(c[2], 3).get("records_sent", 0) == 0, peer(c[2], 3)

    # node 3 voted, follows the new primary into its epoch, and the log
    # goes on with quorum (nodes 2 and 3)
    assert status(c[3])["election"]["vote"] == {"epoch": e + 1, "for": 2}
    wait_commit(c, start["lsn"] + 1, nodes=(2, 3))
    n = append(c[2], ["after"])
    assert n == [start["lsn"] + 1], n
    wait_commit(c, n[0] + 1, nodes=(2, 3))
    # whole headers, timestamp and CRC32C included: node 3's own copy of
    # the epoch-start record is byte for byte node 2's
    assert headers(c[3]) == headers(c[2]), (headers(c[3]), headers(c[2]))
    assert peer(c[2], 3)["records_sent"] == 1, peer(c[2], 3)
    assert status(c[3])["log"]["epoch"] == e + 1, status(c[3])["log"]
    assert status(c[3])["primary"] == {"id": 2, "epoch": e + 1}, \
        status(c[3])
    r = promote(c[2])
    assert r.rc != 0 and "this node is the primary" in r.out, (r.rc, r.out)


def primary_gone(c):
    """A fresh cluster with one record committed, node 1 (its primary)
    taken down, its peers seeing it gone. Return: the epoch node 1 led."""
    fresh(c)
    lsns = append(c[1], ["x"])
    wait_commit(c, lsns[-1] + 1)
    e = status(c[1])["log"]["epoch"]
    rlnode.wait_learned(c)      # before node 1 goes: see fresh()
    c[1].run("rdmalogctl node down", timeout=120, check=True)
    wait_lost(c, 2, 1)
    wait_lost(c, 3, 1)
    return e


@test
def a_lead_that_cannot_be_sent_falls_back(c):
    """keep-connections.md C3: a new primary that cannot post its LEAD on
    a kept connection (inject_lead_fail: as without a send credit)
    closes that connection instead; the peer reconnects, reads the role
    in the new HELLO and grants its ring, and the epoch-start record
    commits as when the LEAD goes out. Without the close, node 3 would
    never grant its ring and the promote would end in a timeout."""
    e = primary_gone(c)
    c[2].run(f"dmesg -c >/dev/null; echo 1 > {PARAMS}/inject_lead_fail",
             timeout=60, check=True)
    s2, s3 = rlnode.stats(c[2]), rlnode.stats(c[3])
    p32 = peer(c[3], 2)["reconnects"]
    r = promote(c[2])
    assert r.rc == 0, (r.rc, r.out)
    d2 = c[2].run("dmesg", timeout=60, check=True).out
    assert "cannot send LEAD" in d2, d2
    assert f"epoch {e + 1}: LEAD on 0 live connections, 1 closed" in d2, d2
    t2, t3 = rlnode.stats(c[2]), rlnode.stats(c[3])
    assert t2["leads_sent"] == s2["leads_sent"], (s2, t2)
    assert t3["leads_received"] == s3["leads_received"], (s3, t3)
    assert peer(c[3], 2)["reconnects"] > p32, peer(c[3], 2)
    assert status(c[3])["primary"] == {"id": 2, "epoch": e + 1}, \
        status(c[3])
    n = append(c[2], ["after-fallback"])
    wait_commit(c, n[0] + 1, nodes=(2, 3))
    assert headers(c[3]) == headers(c[2]), (headers(c[3]), headers(c[2]))



def inject_sleeping(nd):
    return int(nd.run(f"cat {PARAMS}/inject_sleeping", timeout=60,
                      check=True).out)


@test
def a_promote_leaves_a_connection_not_set_up_for_its_setup(c):
    """Node 2 is promoted while its attempt to connect to node 1 (down)
    has resolved node 1's address but is not set up yet (delay point
    ep_addr: the endpoint has no device, PD or QP). The new primary
    leaves that endpoint alone -- its setup, once the address work goes
    on, sets it up as a primary's -- and node 1, up again as a backup,
    joins node 2 and holds every record. A CI run's
    node 2 oopsed here: the new primary asked a device-less endpoint
    whether its device was iWARP."""
    e = primary_gone(c)
    # past the attempt's own deadline (10 s): the next attempt's address
    # waits behind this one (the rdma_cm's address work is ordered), not
    # set up either. The promote takes about a second.
    rlnode.inject(c[2], "ep_addr", 15000)
    try:
        wait_for(lambda: inject_sleeping(c[2]) == 1, timeout=WAIT,
                 interval=0.2, what="node 2's attempt to node 1 held")
        r = promote(c[2])
        assert r.rc == 0, (r.rc, r.out)
        assert inject_sleeping(c[2]) == 1, "the attempt was not held"
    finally:
        rlnode.inject(c[2], "ep_addr", 0)
    d2 = c[2].run("dmesg", timeout=60, check=True).out
    assert f"epoch {e + 1}: LEAD on 1 live connections, 0 closed" in d2, d2
    wait_for(lambda: inject_sleeping(c[2]) == 0, timeout=WAIT, interval=1,
             what="node 2's held attempt went on")
    # failover manual: a configured primary comes up leading (protocol.rst)
    c[1].run("rdmalogctl node set role backup && rdmalogctl node up",
             timeout=120, check=True)
    wait_for(lambda: status(c[1])["primary"] == {"id": 2, "epoch": e + 1},
             timeout=WAIT, interval=1, what="node 1 follows node 2")
    n = append(c[2], ["after"])
    wait_commit(c, n[0] + 1)
    assert headers(c[1]) == headers(c[2]) == headers(c[3]), \
        (headers(c[1]), headers(c[2]), headers(c[3]))

def ballot(nd):
    b = status(nd)["ballot"]
    return b


PARAMS = "/sys/module/rdmalog/parameters"


@test
def the_ballot_word_holds_the_vote(c):
    """On rxe (atomics) every node keeps its vote in its ballot word,
    changed only by atomics, its own through a loopback queue pair to
    itself (leader-change.rst, "Compare-and-swap where the device has
    atomics"), and grants it to both peers: none after a reload. Once
    node 2 is promoted, node 2's word (its own vote) and node 3's hold
    epoch e+1 for node 2, closed, and status says so in words.

    Node 3's vote arrives by compare-and-swap, and is taken even though
    node 3's loopback fails before it read it ("A lost loopback"): node
    3's word open, its heartbeat's read held off (inject_elect_beat_ms),
    its next loopback atomic failing (inject_ballot_loopback_fail), its
    answers to messages delayed. When node 2 connects, node 3's closing
    atomic fails: it closes every connection granted its word, grants no
    ring and votes for nobody until the last is gone, reads the word with
    its CPU, takes node 2's vote, and replicates for node 2 once its
    loopback is back."""
    fresh(c)
    for nd in c:
        wait_for(lambda: ballot(nd)["state"] == "ready", timeout=WAIT,
                 interval=1, what=f"{nd.name}'s ballot word ready")
        b = ballot(nd)
        assert (b["epoch"], b["for"], b["open"]) == (0, 0, False), b
        # granted to both peers (BALLOT), READY or not when they came
        wait_for(lambda: rlnode.stats(nd)["ballot_grants"] >= 2,
                 timeout=WAIT, interval=1,
                 what=f"{nd.name}'s ballot word granted to its peers")
        # both ways: a candidacy of this node would ask each by CAS
        wait_for(lambda: all(p["vote_path"] == "cas" and p["ballot_granted"]
                             for p in status(nd)["peers"]),
                 timeout=WAIT, interval=1,
                 what=f"{nd.name} votes with its peers by CAS")
        for p in status(nd)["peers"]:
            assert p["vote_path_why"] is None, p
        out = nd.run("rdmalogctl peer show", timeout=60, check=True).out
        assert re.search(r"^\s*ID .* LAG +VOTE +MESSAGE$", out, re.M) and \
            len(re.findall(r" cas ", out)) == 2, out
    e = status(c[1])["log"]["epoch"]
    rlnode.wait_learned(c)
    c[1].run("rdmalogctl node down", timeout=120, check=True)
    wait_for(lambda: ballot(c[3])["open"], timeout=WAIT, interval=0.5,
             what="node 3's ballot word open without a primary")
    c[3].run(f"echo 10000 > {PARAMS}/inject_elect_beat_ms; sleep 1; "
             f"echo 1 > {PARAMS}/inject_ballot_loopback_fail; "
             f"echo 30000 > {PARAMS}/inject_elect_answer_ms; "
             "dmesg -c >/dev/null", timeout=30, check=True)
    try:
        r = promote(c[2])
        assert r.rc == 0, (r.rc, r.out)
        wait_for(lambda: status(c[3])["election"]["vote"] ==
                 {"epoch": e + 1, "for": 2}, timeout=WAIT, interval=0.5,
                 what="node 3 takes the vote cast into its word")
        d = c[3].run("dmesg", timeout=60, check=True).out
        assert re.search(rf"node 3: voted for node 2 in epoch {e + 1} by "
                         r"compare-and-swap \(found once its word was "
                         r"revoked\)", d), d
        assert c[3].run(f"cat {PARAMS}/inject_ballot_loopback_fail",
                        timeout=30).out.strip() == "0"
        c[3].run(f"echo 0 > {PARAMS}/inject_elect_beat_ms", timeout=30)
        lsns = append(c[2], ["after"])
        wait_commit(c, lsns[-1] + 1, nodes=(2, 3))
    finally:
        c[3].run(f"echo 0 > {PARAMS}/inject_elect_beat_ms; "
                 f"echo 0 > {PARAMS}/inject_elect_answer_ms; "
                 f"echo 0 > {PARAMS}/inject_ballot_loopback_fail",
                 timeout=30)
    for n in (2, 3):
        # the word as the node's last atomic left it: a vote recorded
        # while the loopback was busy is put in by its work
        wait_for(lambda: ballot(c[n])["state"] == "ready" and
                 ballot(c[n])["epoch"] == e + 1 and
                 not ballot(c[n])["open"], timeout=WAIT, interval=1,
                 what=f"node {n}'s ballot word in epoch {e + 1}, closed")
        b = ballot(c[n])
        assert (b["state"], b["epoch"], b["for"], b["open"]) == \
            ("ready", e + 1, 2, False), (n, b)
        assert b["word"] == (e + 1) << 32 | 2 << 24 | b["seq"] << 1, (n, b)
        v = status(c[n])["election"]["vote"]
        assert v == {"epoch": e + 1, "for": 2}, (n, v)
        assert rlnode.stats(c[n])["ballot_tampered"] == 0
    out = c[3].run("rdmalogctl status", timeout=60, check=True).out
    assert re.search(rf"^ballot word +ready: 0x[0-9a-f]{{16}} \(epoch "
                     rf"{e + 1}, node 2, closed\)$", out, re.M), out
    d = c[3].run("dmesg", timeout=60, check=True).out
    assert "ballot word on rxe0 through a loopback queue pair" in d, d


@test
def a_vote_by_cas_needs_no_message(c):
    """A learned backup that no primary holds opens its ballot word to
    candidates' compare-and-swap (leader-change.rst, "Open and closed"),
    its vote unchanged: node 3's word is closed while node 1 leads and
    open once node 1 is down. With node 3's answer to any VOTE_REQ
    delayed 30 s (inject_elect_answer_ms, far past the candidacy's
    deadline), node 2, promoted, still wins: it read node 3's word,
    judged it with the block node 3's HEARTBEATs announce by the voters'
    rules and swapped its vote in (protocol.rst, "Votes"), without
    reading the block. Node 3 was sent no VOTE_REQ, takes the vote found
    in its word as its own, and closes the word before node 2 holds its
    ring; it stays closed while node 2 does. A first promote whose swap
    is held past its candidacy's deadline (inject_elect_cas_ms) swaps
    nothing: it loses, node 3's word unchanged; node 3 announced a block
    of an earlier opening then (inject_ballot_announce_stale), so node 2
    read the block after the word, and judged by what it read."""
    fresh(c)
    rlnode.wait_learned(c)
    lsns = append(c[1], ["before"])
    wait_commit(c, lsns[-1] + 1)
    for n in (2, 3):
        b = ballot(c[n])
        assert (b["state"], b["open"]) == ("ready", False), (n, b)
    e = status(c[1])["log"]["epoch"]
    b0 = ballot(c[3])
    opens0 = rlnode.stats(c[3]).get("ballot_opens", 0)
    c[1].run("rdmalogctl node down", timeout=120, check=True)
    for n in (2, 3):
        wait_for(lambda: ballot(c[n])["open"], timeout=WAIT, interval=0.5,
                 what=f"node {n}'s ballot word open without a primary")
    b1 = ballot(c[3])
    assert (b1["epoch"], b1["for"]) == (b0["epoch"], b0["for"]), (b0, b1)
    assert b1["seq"] > b0["seq"], (b0, b1)
    assert rlnode.stats(c[3])["ballot_opens"] > opens0
    c[3].run(f"echo 30000 > {PARAMS}/inject_elect_answer_ms", timeout=30,
             check=True)
    c[3].run("dmesg -c >/dev/null", timeout=30, check=True)
    s2, s3 = rlnode.stats(c[2]), rlnode.stats(c[3])
    v3 = status(c[3])["election"]["vote"]
    try:
        # too late: node 2's swap, held past its candidacy's deadline
        # (twice the peer timeout and a second), is not posted; node 3's
        # word and vote stay as they were, and node 2 loses epoch e + 1.
        # Node 3's HEARTBEATs meanwhile announce its block with the
        # sequence before its word's (a few heartbeats: node 2 holds one)
        c[3].run(f"echo 100000 > {PARAMS}/inject_ballot_announce_stale",
                 timeout=30, check=True)
        c[3].run("sleep 2", timeout=30)
        rlnode.inject(c[2], "elect_cas", 2 * rlnode.scaled(3000) + 2000)
        try:
            r = promote(c[2])
        finally:
            rlnode.inject(c[2], "elect_cas", 0)
            c[3].run(f"echo 0 > {PARAMS}/inject_ballot_announce_stale",
                     timeout=30)
        m2 = rlnode.stats(c[2])
        # the word alone, stale against what was announced; then the
        # word and its block
        assert (m2["cas_reads"] - s2["cas_reads"],
                m2["cas_block_reads"] - s2["cas_block_reads"]) == (2, 1), \
            (s2, m2)
        assert r.rc != 0 and "answered in time" in r.out, (r.rc, r.out)
        b = ballot(c[3])
        assert b["open"] and (b["epoch"], b["for"], b["seq"]) == \
            (b1["epoch"], b1["for"], b1["seq"]), (b1, b)
        assert status(c[3])["election"]["vote"] == v3
        assert status(c[2])["node"]["role"] == "backup"
        # in time, in the epoch after; node 3's block as it is announced
        # again (its next heartbeat)
        c[3].run("sleep 2", timeout=30)
        e += 1
        r = promote(c[2])
        assert r.rc == 0, (r.rc, r.out)
        t2, t3 = rlnode.stats(c[2]), rlnode.stats(c[3])
        assert t3["vote_reqs_received"] == s3["vote_reqs_received"], \
            (s3, t3)
        assert t2["cas_votes"] == s2["cas_votes"] + 1, (s2, t2)
        # the word alone: its block was announced
        assert (t2["cas_reads"] - m2["cas_reads"],
                t2["cas_block_reads"] - m2["cas_block_reads"]) == (1, 0), \
            (m2, t2)
        assert t2["cas_refused"] == s2["cas_refused"], (s2, t2)
        wait_for(lambda: status(c[3])["election"]["vote"] ==
                 {"epoch": e + 1, "for": 2}, timeout=WAIT, interval=0.5,
                 what="node 3 takes the vote cast into its word")
        d = c[3].run("dmesg", timeout=60, check=True).out
        assert re.search(rf"node 3: voted for node 2 in epoch {e + 1} by "
                         r"compare-and-swap \(found ", d), d
        assert rlnode.stats(c[3])["ballot_folds"] > s3["ballot_folds"]
        d = c[2].run("dmesg", timeout=60, check=True).out
        assert f"node 2: node 3 voted for it in epoch {e + 1} by " \
            "compare-and-swap" in d, d
    finally:
        c[3].run(f"echo 0 > {PARAMS}/inject_elect_answer_ms", timeout=30)
    lsns = append(c[2], ["after"])
    wait_commit(c, lsns[-1] + 1, nodes=(2, 3))
    for n in (2, 3):
        wait_for(lambda: not ballot(c[n])["open"], timeout=WAIT,
                 interval=0.5, what=f"node {n}'s ballot word closed")
    b2 = ballot(c[3])
    assert (b2["epoch"], b2["for"], b2["open"]) == (e + 1, 2, False), b2
    # held closed by node 2's grant of its ring: a few heartbeats on, the
    # same word, and what node 2 writes still lands
    c[3].run("sleep 2", timeout=30)
    lsns = append(c[2], ["later"])
    wait_commit(c, lsns[-1] + 1, nodes=(2, 3))
    assert ballot(c[3]) == b2, (b2, ballot(c[3]))
    assert rlnode.stats(c[3])["ballot_tampered"] == 0


@test
def a_word_opens_as_the_ring_is_released(c):
    """A backup's ballot word opens as soon as the last hold on it ends
    (here: the primary's grant of its ring, when the primary goes), not
    at the backup's next heartbeat: a candidate that stands right after
    the backup lost its primary finds the word open and votes by
    compare-and-swap. With a heartbeat of 5 s, node 2 is promoted as
    soon as node 3 lost node 1, node 3's answer to any VOTE_REQ delayed
    30 s (inject_elect_answer_ms): node 2 wins only by node 3's word.
    Before the word opened at once, it opened at node 3's next heartbeat
    (up to 5 s later): node 2 found it closed, asked by message, and
    lost (a bench run saw 3 of 20 votes go by message so)."""
    text = rlnode.cluster_file(cluster=CLUSTER, timeout=2000,
                               heartbeat=5000, peer_timeout=10000)
    # reloaded: the test before leaves votes and fences of later epochs
    # than a new log's (a node that only went down and up kept them, and
    # refused node 1's new log in a CI run); learning then takes three
    # peer timeouts and 2 s
    for nd in c:
        reload(nd)
    for nd in c:
        rlnode.apply(nd, text)
    wait_for(lambda: status(c[1])["node"]["role"] == "primary",
             timeout=WAIT, interval=1, what="node 1 leads")
    for n in (1, 2, 3):
        wait_connected(c, n)
    rlnode.wait_learned(c)
    lsns = append(c[1], ["before"])
    wait_commit(c, lsns[-1] + 1)
    assert not ballot(c[3])["open"], ballot(c[3])
    c[3].run(f"echo 30000 > {PARAMS}/inject_elect_answer_ms", timeout=30,
             check=True)
    try:
        c[1].run("rdmalogctl node down", timeout=120, check=True)
        wait_for(lambda: peer(c[3], 1)["state"] != "connected",
                 timeout=WAIT, interval=0.1, what="node 3 lost node 1")
        s2 = rlnode.stats(c[2])
        r = promote(c[2])
        assert r.rc == 0, (r.rc, r.out)
        t2 = rlnode.stats(c[2])
        assert t2["cas_votes"] >= s2["cas_votes"] + 1, (s2, t2)
        d = c[2].run("dmesg", timeout=60, check=True).out
        assert re.search(r"node 2: node 3 voted for it in epoch \d+ by "
                         r"compare-and-swap", d), d[-3000:]
    finally:
        c[3].run(f"echo 0 > {PARAMS}/inject_elect_answer_ms", timeout=30)
    lsns = append(c[2], ["after"])
    wait_commit(c, lsns[-1] + 1, nodes=(2, 3))


@test
def a_promote_needs_a_majority(c):
    fresh(c)
    lsns = append(c[1], ["kept"])
    wait_commit(c, lsns[-1] + 1)
    e = status(c[1])["log"]["epoch"]
    # before nodes 1 and 3 go: node 2 stands without them
    rlnode.wait_learned(c)
    c[1].run("rdmalogctl node down", timeout=120, check=True)
    c[3].run("rdmalogctl node down", timeout=120, check=True)
    wait_lost(c, 2, 1)
    wait_lost(c, 2, 3)
    r = promote(c[2])
    assert r.rc != 0 and "too few of the configured nodes are connected" in r.out, \
        (r.rc, r.out)
    st = status(c[2])
    assert st["node"]["role"] == "backup", st["node"]
    assert st["election"]["vote"] == {"epoch": e + 1, "for": 2}, st
    assert [x[2] for x in records(c[2])][-1:] == ["kept"], records(c[2])

    # node 3 comes back with an empty log: node 2 wins the next epoch with
    # its vote, and node 3 gets the whole log from node 2
    c[3].run("rdmalogctl node up", timeout=120, check=True)
    wait_connected(c, 2, nodes=(3,))
    r = promote(c[2])
    assert r.rc == 0, (r.rc, r.out)
    st = status(c[2])
    assert st["node"]["role"] == "primary" and \
        st["log"]["epoch"] == e + 2, st
    wait_commit(c, st["log"]["next_lsn"], nodes=(2, 3))
    assert records(c[3]) == records(c[2]), (records(c[3]), records(c[2]))
    assert status(c[3])["election"]["vote"] == {"epoch": e + 2, "for": 2}


@test
def a_promoted_backup_deposes_a_live_primary(c):
    """Node 3 promoted while node 1 leads: node 3 fences node 1 (it closes
    their connection), node 2 grants and fences node 1 too. Node 1 hears node 3 lead its log in
    a later epoch, steps down, keeps its committed records and follows
    node 3: its writes are forwarded there, and every node holds the same
    log."""
    fresh(c)
    lsns = append(c[1], ["before"])
    wait_commit(c, lsns[-1] + 1)
    e = status(c[1])["log"]["epoch"]
    for nd in c:
        nd.run("dmesg -c >/dev/null", timeout=60, check=True)
    rlnode.wait_learned(c)
    r = promote(c[3])
    assert r.rc == 0, (r.rc, r.out)
    d = c[2].run("dmesg", timeout=60, check=True).out
    assert f"node 2: voted for node 3 in epoch {e + 1}, its primary " \
        "fenced" in d, d
    st = status(c[3])
    assert st["node"]["role"] == "primary" and \
        st["log"]["epoch"] == e + 1, st
    wait_for(lambda: status(c[1])["node"]["role"] == "backup",
             timeout=WAIT, interval=1, what="node 1 stepped down")
    d = c[1].run("dmesg", timeout=60, check=True).out
    assert f"node 1: a later epoch leads its log, or is being elected: " \
        f"steps down " \
        f"from epoch {e} to a backup, 0 uncommitted records removed" in d, d
    ch = status(c[1])["last_change"]
    assert ch == {"why": "deposed", "epoch": e, "ago_ms": ch["ago_ms"]}, ch
    wait_commit(c, status(c[3])["log"]["next_lsn"])
    n = append(c[1], ["via-node-1"])
    wait_commit(c, n[0] + 1)
    hs = headers(c[3])
    assert hs[-1]["data"] == "via-node-1" and hs[-1]["epoch"] == e + 1, hs
    assert headers(c[1]) == hs and headers(c[2]) == hs, \
        (headers(c[1]), headers(c[2]), hs)
    assert status(c[1])["primary"] == {"id": 3, "epoch": e + 1}


@test
def a_writer_waiting_for_space_follows_the_new_primary(c):
    """Node 1's ring is full and a writer waits there for space when node
    2 is promoted. Node 1 steps down: the waiting writer must not append
    to what is now a backup's ring (the history checker saw that corrupt
    it once space came: "record failed verification"). It is forwarded to
    node 2 instead, whose ring has room for its epoch-start record but
    not for this one: it waits there until node 2 is trimmed, then
    commits after the epoch-start record, and every node holds the same
    log."""
    fresh(c)
    fill = "dd if=/dev/zero bs=60000 count=1 of=/dev/rdmalog 2>/dev/null"
    # 60000-byte records: 17 fill the 1 MiB ring, an 18th waits
    c[1].run(f"for i in $(seq 17); do {fill} || exit 1; done", timeout=300,
             check=True)
    full = status(c[1])["log"]
    assert full["next_lsn"] == 18 and \
        full["capacity"] - full["used"] < 60000, full
    wait_commit(c, 18)
    for nd in c:
        nd.run("dmesg -c >/dev/null", timeout=60, check=True)
    writer = c[1].spawn(f"{fill}; echo rc=$?", timeout=600)
    wait_for(lambda: rlnode.stats(c[1]).get("writer_waits", 0) >= 1,
             timeout=WAIT, interval=1, what="node 1's writer waits for space")
    assert not writer.done()
    rlnode.wait_learned(c)
    prom = c[2].spawn("rdmalogctl node promote; echo rc=$?", timeout=600)
    wait_for(lambda: status(c[2])["node"]["role"] == "primary",
             timeout=WAIT, interval=1, what="node 2 leads")
    wait_for(lambda: status(c[1])["node"]["role"] == "backup",
             timeout=WAIT, interval=1, what="node 1 stepped down")
    r = prom.wait(300)
    assert "rc=0" in r.out, r.out
    assert not writer.done()
    c[2].run("rdmalogctl log trim 18", timeout=60, check=True)
    r = writer.wait(300)
    assert "rc=0" in r.out, r.out
    hs = headers(c[2])
    assert [(h["lsn"], h.get("epoch_start", False), h["len"])
            for h in hs] == [(18, True, 8), (19, False, 60000)], \
        [(h["lsn"], h.get("epoch_start"), h["len"]) for h in hs]
    wait_commit(c, 20)
    assert headers(c[1]) == hs and headers(c[3]) == hs
    d = c[1].run("dmesg", timeout=60, check=True).out
    assert "failed verification" not in d, d


@test
def a_promoted_backup_adopts_what_it_holds(c):
    """A record node 2 holds beyond its commit point is adopted: node 1
    (durability all, node 3 down) wrote it to node 2 and removed it at its
    commit timeout, its writer told ETIMEDOUT, the outcome unknown after a
    leader change (Documentation/leader-change.rst). Node 2, promoted,
    publishes it and commits it under its epoch-start record."""
    fresh(c)
    rlnode.wait_learned(c)
    c[1].run("rdmalogctl log set durability all", timeout=60, check=True)
    lsns = append(c[1], ["committed"])
    wait_commit(c, lsns[-1] + 1)
    e = status(c[1])["log"]["epoch"]
    c[3].run("rdmalogctl node down", timeout=120, check=True)
    wait_lost(c, 1, 3)
    r = c[1].run("echo unknown | rdmalogcat -a", timeout=300)
    assert r.rc != 0 and "timed out" in r.out, (r.rc, r.out)
    assert status(c[2])["log"]["next_lsn"] == lsns[-1] + 1, status(c[2])
    c[1].run("rdmalogctl node down", timeout=120, check=True)
    c[3].run("rdmalogctl node up", timeout=120, check=True)
    wait_connected(c, 2, nodes=(3,))
    c[2].run("rdmalogctl log set durability quorum; dmesg -c >/dev/null",
             timeout=60, check=True)
    c[3].run("dmesg -c >/dev/null", timeout=60, check=True)
    r = promote(c[2])
    assert r.rc == 0, (r.rc, r.out)
    d = c[2].run("dmesg", timeout=60, check=True).out
    assert "took 1 record its primary had not committed, up to LSN " \
        f"{lsns[-1] + 1}" in d, d
    # node 3 (an empty log) holds nothing the LEAD's epoch-start record
    # could follow: it leaves it to node 2, which writes it with the rest
    d3 = c[3].run("dmesg", timeout=60, check=True).out
    assert f"node 3: does not hold node 2's epoch-start record (LSN " \
        f"{lsns[-1] + 2} at " in d3, d3
    hs = headers(c[2])
    assert [(h["data"], h["epoch"], h.get("epoch_start", False))
            for h in hs[-3:]] == [("committed", e, False),
                                  ("unknown", e, False),
                                  (hs[-1]["data"], e + 1, True)], hs
    wait_commit(c, hs[-1]["lsn"] + 1, nodes=(2, 3))
    assert headers(c[3]) == hs, (headers(c[3]), hs)


@test
def a_primary_cut_off_steps_down(c):
    """failover auto: node 1 is cut off silently (its traffic dropped, the
    carrier up). Its write cannot commit (ETIMEDOUT); after the peer
    timeout without a majority it steps down, while nodes 2 and 3 lose it
    and elect node 2. A write on node 1 then finds no primary
    (EHOSTUNREACH: not in the log). Healed, node 1 follows node 2 with
    the same log, and neither of its writes is in it."""
    fresh(c, "auto")
    lsns = append(c[1], ["before"])
    wait_commit(c, lsns[-1] + 1)
    e = status(c[1])["log"]["epoch"]
    c[1].run("dmesg -c >/dev/null", timeout=60, check=True)
    rlnode.wait_learned(c)
    c[1].blackhole(True)
    try:
        r = c[1].run("echo cut-off | rdmalogcat -a", timeout=300)
        assert r.rc != 0 and "timed out" in r.out, (r.rc, r.out)
        wait_for(lambda: status(c[1])["node"]["role"] == "backup",
                 timeout=WAIT, interval=1, what="node 1 stepped down")
        d = c[1].run("dmesg", timeout=60, check=True).out
        assert "node 1: cut off from a majority of the configured nodes " \
            f"for the peer timeout: steps down from epoch {e} to a backup" \
            in d, d
        assert status(c[1])["last_change"]["why"] == "cut_off", \
            status(c[1])
        wait_for(lambda: status(c[2])["node"]["role"] == "primary",
                 timeout=WAIT, interval=1, what="node 2 leads")
        r = c[1].run("echo no-primary | rdmalogcat -a", timeout=300)
        assert r.rc != 0 and "No route to host" in r.out, (r.rc, r.out)
    finally:
        c[1].blackhole(False)
    n = append(c[2], ["after"])
    wait_commit(c, n[0] + 1)
    hs = headers(c[2])
    assert hs[-1]["data"] == "after" and hs[-1]["epoch"] > e, hs
    assert headers(c[1]) == hs and headers(c[3]) == hs, \
        (headers(c[1]), headers(c[3]), hs)
    data = [h["data"] for h in hs]
    assert "cut-off" not in data and "no-primary" not in data, data


@test
def a_reloaded_primary_joins_as_a_backup(c):
    """failover auto. A cluster started from nothing: node 1, the
    configured primary, comes up as a backup and leads a new log once
    both peers said they hold none (fresh()). Then node 1's module is
    reloaded under it and the same cluster file applied again: it comes
    up as a backup again, finds its peers holding the log, and joins it
    rather than leading an empty one. Node 2 is elected (node 1 votes
    for it) and node 1 gets every committed record from it."""
    fresh(c, "auto")
    d = c[1].run("dmesg", timeout=60, check=True).out
    assert "node 1: the configured primary: looks for a log" in d and \
        "2 of 2 peers answered, none holds a log: leads a new one" in d, d
    assert status(c[1])["last_change"] is None, status(c[1])
    lsns = append(c[1], ["x", "y"])
    wait_commit(c, lsns[-1] + 1)
    e = status(c[1])["log"]["epoch"]

    rlnode.wait_learned(c, (2, 3))
    reload(c[1])
    rlnode.apply(c[1], cluster_file("auto"))
    wait_for(lambda: status(c[2])["node"]["role"] == "primary",
             timeout=WAIT, interval=1, what="node 2 leads")
    hs = headers(c[2])
    assert [h["data"] for h in hs[:2]] == ["x", "y"] and \
        hs[-1].get("epoch_start") and hs[-1]["epoch"] > e, hs
    wait_commit(c, hs[-1]["lsn"] + 1)
    assert headers(c[1]) == hs, (headers(c[1]), hs)
    st = status(c[1])
    assert st["node"]["role"] == "backup" and \
        st["last_change"]["why"] == "joined", st
    d = c[1].run("dmesg", timeout=60, check=True).out
    assert "joins it as a backup" in d and "leads a new one" not in d, d
    n = append(c[1], ["forwarded"])
    wait_commit(c, n[0] + 1)
    assert headers(c[1])[-1]["data"] == "forwarded"


@test
def a_full_ring_leads_without_an_epoch_start_record(c):
    """Node 1's ring is filled to the last byte, every record committed,
    and node 2 is promoted: its ring has no room for an epoch-start
    record, and it adopted nothing that waits for a commit, so it leads
    without one rather than wait for a trim (it used to wait for ever:
    the history checker's primary faults found it). After a trim the log
    goes on in its epoch on every node."""
    fresh(c)
    big = 60000
    rec = f"dd if=/dev/zero bs={big} count=1 of=/dev/rdmalog 2>/dev/null"
    c[1].run(rec, timeout=300, check=True)
    hdr = status(c[1])["log"]["used"] - big
    assert hdr > 0 and hdr % 8 == 0, hdr
    c[1].run(f"for i in $(seq 16); do {rec} || exit 1; done", timeout=300,
             check=True)
    lg = status(c[1])["log"]
    last = lg["capacity"] - lg["used"] - hdr
    assert 8 < last <= 65536, lg
    c[1].run(f"dd if=/dev/zero bs={last} count=1 of=/dev/rdmalog "
             "2>/dev/null", timeout=300, check=True)
    lg = status(c[1])["log"]
    assert lg["used"] == lg["capacity"] and lg["next_lsn"] == 19, lg
    wait_commit(c, 19)
    e = lg["epoch"]
    for nd in c:
        nd.run("dmesg -c >/dev/null", timeout=60, check=True)
    rlnode.wait_learned(c)
    r = promote(c[2])
    assert r.rc == 0, (r.rc, r.out)
    st = status(c[2])
    assert st["node"]["role"] == "primary" and \
        st["log"]["epoch"] == e + 1 and st["log"]["next_lsn"] == 19, st
    d = c[2].run("dmesg", timeout=60, check=True).out
    assert f"node 2: epoch {e + 1}: no room in the ring for an epoch-start " \
        "record, and nothing to reconcile: leads without one" in d, d
    assert not any(h.get("epoch_start") for h in headers(c[2]))
    wait_for(lambda: status(c[1])["node"]["role"] == "backup",
             timeout=WAIT, interval=1, what="node 1 stepped down")
    c[2].run("rdmalogctl log trim 3", timeout=60, check=True)
    n = append(c[2], ["after"])
    assert n == [19], n
    wait_commit(c, 20)
    hs = headers(c[2])
    assert hs[-1]["data"] == "after" and hs[-1]["epoch"] == e + 1, hs[-1]
    assert headers(c[1]) == hs and headers(c[3]) == hs


@test
def an_append_during_a_slow_join_keeps_the_epoch_start_record(c):
    """A new primary appends its epoch-start record as soon as it leads,
    before its backups join (protocol.rst, "Standing and leading"). Its
    backups' joins are held up 2.8 s (delay point cu_ring), longer than
    the commit timeout of 2 s, and a writer appends on it meanwhile: for a
    peer timeout from its change of role every append waits that much
    longer for its commit, so the writer's append neither times out nor,
    by timing out, removes the epoch-start record (it did, and the
    promote failed, when only that record waited longer)."""
    fresh(c)
    rlnode.wait_learned(c)
    e = status(c[1])["log"]["epoch"]
    s2 = rlnode.stats(c[2])
    rlnode.inject(c[2], "cu_ring", rlnode.scaled(2800))
    try:
        job = c[2].spawn("rdmalogctl node promote; echo rc=$?", timeout=300)
        wait_for(lambda: status(c[2])["node"]["role"] == "primary",
                 timeout=WAIT, interval=0.1, what="node 2 leads")
        w = c[2].run("echo during-join | rdmalogcat -a; echo rc=$?",
                     timeout=120)
        assert w.out.split()[-1] == "rc=0", w.out
        assert job.wait(300).out.split()[-1] == "rc=0", job.output()
    finally:
        rlnode.inject(c[2], "cu_ring", 0)
    t2 = rlnode.stats(c[2])
    assert t2["commit_timeouts"] == s2["commit_timeouts"], (s2, t2)
    hs = headers(c[2])
    start = [h for h in hs if h.get("epoch_start")]
    assert len(start) == 1 and start[0]["epoch"] == e + 1, hs
    assert hs[-1]["data"] == "during-join" and \
        hs[-1]["epoch"] == e + 1 and hs[-1]["lsn"] > start[0]["lsn"], hs
    d = c[2].run("dmesg", timeout=60, check=True).out
    assert "commit timeout: removed" not in d, d


@test
def a_switchover_hands_over_under_load(c):
    """rdmalogctl node switchover: node 1, the primary, hands the log over
    to node 2 while writers on node 1 and on node 3 (forwarded) append a
    record every 20 ms. Node 1 pauses its appends until node 2 holds every
    record, votes for node 2 in the next epoch, and steps down when node
    2 leads it: no writer sees an error (node 1's follow node 2 through
    forwarding), every record is in the log once, and every node holds
    the same log. Bad requests are refused with a reason first."""
    fresh(c)
    e = status(c[1])["log"]["epoch"]
    for nd, arg, why in [(c[2], "1", "only the primary hands the log over"),
                         (c[1], "1", "this node is the primary already"),
                         (c[1], "9", "no such peer")]:
        r = nd.run(f"rdmalogctl node switchover {arg}", timeout=120)
        assert r.rc != 0 and why in r.out, (arg, r.rc, r.out)
    for nd in c:
        nd.run("dmesg -c >/dev/null", timeout=60, check=True)
    n = 300
    gen = "for i in $(seq {n}); do echo {w}-$i; sleep 0.02; done"
    writers = {w: c[k].spawn(gen.format(n=n, w=w) +
                             " | rdmalogcat -a; echo rc=$?", timeout=900)
               for w, k in (("w1", 1), ("w3", 3))}
    base = status(c[1])["log"]["next_lsn"]
    wait_for(lambda: status(c[1])["log"]["commit_lsn"] >= base + 40,
             timeout=WAIT, interval=0.5, what="the writers under way")
    rlnode.wait_learned(c)
    r = c[1].run("rdmalogctl node switchover 2", timeout=300)
    assert r.rc == 0, (r.rc, r.out)
    st = status(c[1])
    assert st["node"]["role"] == "backup" and \
        st["last_change"]["why"] == "handed_over", st
    st = status(c[2])
    assert st["node"]["role"] == "primary" and \
        st["log"]["epoch"] == e + 1 and \
        st["last_change"]["why"] == "took_over", st
    d = c[1].run("dmesg", timeout=60, check=True).out
    assert "node 1: hands the log over to node 2 at LSN" in d and \
        f"voted for it in epoch {e + 1}" in d, d
    print([x for x in d.splitlines() if "handed the log over" in x])
    for w, job in writers.items():
        out = job.wait(900).out
        assert out.split()[-1] == "rc=0" and \
            len(out.split()) == n + 1, (w, out[-2000:])
    last = status(c[2])["log"]["next_lsn"]
    wait_commit(c, last)
    hs = headers(c[2])
    data = [h["data"] for h in hs if not h.get("epoch_start")]
    for w in writers:
        mine = [x for x in data if x.startswith(w + "-")]
        assert mine == [f"{w}-{i}" for i in range(1, n + 1)], (w, mine)
    assert headers(c[1]) == hs and headers(c[3]) == hs
    assert status(c[3])["primary"] == {"id": 2, "epoch": e + 1}


@test
def a_switchover_waits_for_a_reserved_record(c):
    """An appender on node 1 reserved its record's space and is held
    there for 8 s (delay point log_fill) when node 1's switchover to
    node 2 pauses the appends: the drain must wait until that record is
    published, committed and held by node 2 (the pause stops new
    reservations only), so the appender gets its LSN, no error, and the
    record is in node 2's log. Meanwhile the switchover holds up no other
    command: rdmalogctl status answers on node 1 while it still waits."""
    fresh(c)
    rlnode.wait_learned(c)
    c[1].run("rdmalogctl log set commit-timeout 20000", timeout=60,
             check=True)
    rlnode.inject(c[1], "log_fill", 8000)
    app = c[1].spawn("echo held | rdmalogcat -a; echo rc=$?", timeout=120)
    seen = []

    def held():
        # the appender's kernel stack: asleep in the delay point, inside
        # the append (after its reservation)
        out = c[1].run("p=$(pgrep -x rdmalogcat) && cat /proc/$p/stack",
                       timeout=60).out
        seen[:] = [out]
        return "rdmalog_inject_delay" in out or \
            "rdmalog_log_append" in out
    try:
        wait_for(held, timeout=WAIT, interval=0.2, what="the appender held")
    except AssertionError as e:
        raise AssertionError(f"{e}; its last stack: {seen}") from None
    c[1].run("dmesg -c >/dev/null", timeout=60, check=True)
    sw = c[1].spawn("rdmalogctl node switchover 2; echo rc=$?",
                    timeout=120)
    wait_for(lambda: "switchover to node 2: appends paused" in
             c[1].run("dmesg", timeout=60, check=True).out,
             timeout=WAIT, interval=0.2, what="the switchover under way")
    st = status(c[1])
    assert not sw.done(), ("the switchover was done before status "
                           "answered", sw.output(), st)
    assert st["node"]["role"] == "primary", st
    out = app.wait(120).out
    assert out.split()[-1] == "rc=0", out
    lsn = int(out.split()[0])
    assert sw.wait(120).out.split()[-1] == "rc=0", sw.output()
    st = status(c[2])
    assert st["node"]["role"] == "primary" and \
        st["last_change"]["why"] == "took_over", st
    hs = {h["lsn"]: h for h in headers(c[2])}
    assert hs[lsn]["data"] == "held", hs.get(lsn)


@test
def a_switchover_answers_every_forward_first(c):
    """Node 3 forwards a record; node 1, the primary, appends and commits
    it, but holds its FWD_DONE for 2.5 s (delay point fwd_answer) while
    its switchover to node 2 runs. Node 1 must close the forwarding on
    every connection before it hands over: wait until each FWD it got is
    answered, then FWD_CLOSE, and the backups' FWD_CLOSED. Without that,
    node 3 fences node 1 when it votes for node 2 and its writer learns
    -ENOTCONN, an unknown outcome, for a record that is committed. The
    writer gets its LSN, node 3 saw the close with nothing left
    outstanding, and its next write goes to node 2."""
    fresh(c)
    base = status(c[1])["log"]["next_lsn"]
    rlnode.inject(c[1], "fwd_answer", 2500)
    w = c[3].spawn("echo fwd-held | rdmalogcat -a; echo rc=$?",
                   timeout=120)
    wait_for(lambda: status(c[1])["log"]["commit_lsn"] > base,
             timeout=WAIT, interval=0.2,
             what="node 3's forwarded record committed on node 1")
    assert not w.done(), ("the FWD_DONE was not held", w.output())
    for nd in c:
        nd.run("dmesg -c >/dev/null", timeout=60, check=True)
    rlnode.wait_learned(c)
    r = c[1].run("rdmalogctl node switchover 2; echo rc=$?", timeout=120)
    out = w.wait(120).out
    assert r.out.split()[-1] == "rc=0", r.out
    assert out.split()[-1] == "rc=0", out
    lsn = int(out.split()[0])
    assert lsn == base, (lsn, base)
    d = c[3].run("dmesg", timeout=60, check=True).out
    assert "peer 1 closed forwarding (switchover): 0 forwarded appends" \
        in d, d
    rlnode.inject(c[1], "fwd_answer", 0)
    st = status(c[2])
    assert st["node"]["role"] == "primary", st
    n = append(c[3], ["after"])
    wait_commit(c, n[0] + 1)
    hs = {h["lsn"]: h for h in headers(c[2])}
    assert hs[lsn]["data"] == "fwd-held" and \
        hs[n[0]]["data"] == "after", (hs.get(lsn), hs.get(n[0]))
    assert headers(c[3]) == list(hs.values())


@test
def a_failed_switchover_reopens_the_forwarding(c):
    """Node 2 is configured not to lead, so node 1's switchover to it
    fails (node 2 does not take over within three peer timeouts) while a
    writer on node 3 forwards a record every 20 ms, each with its own
    rdmalogcat. Node 1 closed the forwarding and must reopen it: the
    writer's later records go through again, a record whose write failed
    -EROFS or -EHOSTUNREACH is not in the log, and no record is there
    twice (a FWD the backup failed at the close must never be appended,
    even though node 1 leads on)."""
    fresh(c)
    c[2].run("rdmalogctl node set lead no", timeout=60, check=True)
    n = 300
    job = c[3].spawn(f"for i in $(seq {n}); do echo w3-$i | rdmalogcat -a "
                     "2>&1 | sed \"s/^/w3-$i /\"; sleep 0.02; done",
                     timeout=900)
    base = status(c[1])["log"]["next_lsn"]
    wait_for(lambda: status(c[1])["log"]["commit_lsn"] >= base + 20,
             timeout=WAIT, interval=0.5, what="the writer under way")
    rlnode.wait_learned(c)
    r = c[1].run("rdmalogctl node switchover 2; echo rc=$?", timeout=300)
    assert r.out.split()[-1] != "rc=0" and \
        "did not take over in time" in r.out, r.out
    st = status(c[1])
    assert st["node"]["role"] == "primary", st
    out = job.wait(900).out
    fails = {}
    oks = set()
    for line in out.splitlines():
        w, rest = line.split(" ", 1)
        if rest.strip().isdigit():
            oks.add(w)
        else:
            fails[w] = rest
    assert f"w3-{n}" in oks, ("no forwarding after the failed switchover",
                               out[-2000:])
    last = status(c[1])["log"]["next_lsn"]
    wait_commit(c, last)
    data = [h["data"] for h in headers(c[1]) if not h.get("epoch_start")]
    mine = [x for x in data if x.startswith("w3-")]
    assert len(mine) == len(set(mine)), \
        ("a record twice", sorted(x for x in mine if mine.count(x) > 1))
    assert oks <= set(mine), sorted(oks - set(mine))
    for w, why in fails.items():
        if "Read-only" in why or "No route to host" in why:
            assert w not in mine, (w, why)
    print(f"{len(oks)} appended, {len(fails)} failed:",
          sorted(set(fails.values()))[:5])


@test
def a_higher_priority_stands_first(c):
    """failover auto, node 3 set to priority 10 while up: its peers learn
    it from its HEARTBEATs (peer show: priority, lead), and when node 1's
    module goes, node 3's stand delay is the shortest (two heartbeats;
    node 2's, behind node 3, six: node 1, the primary they lost, does not
    count): node 3 wins the next epoch, node 2
    does not stand, and the log goes on under node 3."""
    fresh(c, "auto")
    c[3].run("rdmalogctl node set priority 10", timeout=60, check=True)
    wait_for(lambda: peer(c[2], 3).get("priority") == 10,
             timeout=WAIT, interval=1, what="node 2 hears node 3's priority")
    p = peer(c[2], 1)
    assert p["priority"] == 0 and p["lead"] is True, p
    assert peer(c[1], 3)["lead"] is True, peer(c[1], 3)
    lsns = append(c[1], ["p1", "p2"])
    wait_commit(c, lsns[-1] + 1)
    e = status(c[1])["log"]["epoch"]
    for nd in (c[2], c[3]):
        nd.run("dmesg -c >/dev/null", timeout=60, check=True)
    rlnode.wait_learned(c, (2, 3))
    c[1].run("rdmalogctl node down; rmmod rdmalog", timeout=120, check=True)
    wait_for(lambda: status(c[3])["node"]["role"] == "primary",
             timeout=WAIT, interval=1, what="node 3 leads")
    d = c[3].run("dmesg", timeout=60, check=True).out
    assert f"node 3: won epoch {e + 1}" in d and \
        re.search(r"node 3: no primary for \d+ ms \(stand delay 500 ms\)",
                  d), d
    assert status(c[2])["node"]["role"] == "backup", status(c[2])
    assert "stands for election" not in \
        c[2].run("dmesg", timeout=60, check=True).out
    n = append(c[2], ["after"])
    wait_commit(c, n[0] + 1, nodes=(2, 3))
    assert [h["data"] for h in headers(c[3])
            if not h.get("epoch_start")][-3:] == ["p1", "p2", "after"]


@test
def a_lost_primary_is_replaced_on_its_own(c):
    """failover auto: node 1's VM is killed. Its backups lose it after the
    peer timeout; node 2, of the lower id, stands first and wins with
    node 3's vote (node 3 waits longer, and again after it voted). The log
    goes on under node 2 with every committed record, a write on node 3
    is forwarded there, and node 1's machine, booted again with the same
    cluster file (node 1 the primary), joins as a backup and gets the
    whole log. Node 2 reads node 3's ballot word once: for its pre-vote,
    whose read its candidacy swaps from. Last in the suite: it leaves
    node 1 rebooted."""
    fresh(c, "auto")
    lsns = append(c[1], ["a", "b", "c"])
    wait_commit(c, lsns[-1] + 1)
    e = status(c[1])["log"]["epoch"]
    for nd in (c[2], c[3]):
        nd.run("dmesg -c >/dev/null", timeout=60, check=True)
    rlnode.wait_learned(c, (2, 3))
    s2 = rlnode.stats(c[2])
    c[1].kill()
    wait_for(lambda: status(c[2])["node"]["role"] == "primary",
             timeout=WAIT, interval=1, what="node 2 leads")
    # by compare-and-swap on node 3's word: the pre-vote read it, the
    # candidacy swapped from what the pre-vote read (protocol.rst, "By
    # compare-and-swap"): one read, two grants (pre-vote and vote)
    t2 = rlnode.stats(c[2])
    assert (t2["cas_reads"] - s2["cas_reads"],
            t2["cas_votes"] - s2["cas_votes"],
            t2["cas_races"] - s2["cas_races"]) == (1, 2, 0), (s2, t2)
    d = c[2].run("dmesg", timeout=60, check=True).out
    # node 2's stand delay: two heartbeats; node 1, the primary it lost,
    # does not count as standing before it (it counted: six)
    assert re.search(r"node 2: no primary for \d+ ms \(stand delay 500 "
                     r"ms\): stands for election", d) and \
        f"node 2: won epoch {e + 1}: 2 of 3 votes" in d, d
    assert status(c[3])["node"]["role"] == "backup", status(c[3])
    ch = status(c[2])["last_change"]
    # from the loss of the connection to node 1 (the peer timeout after
    # its last heartbeat) to standing: node 2's stand delay, 2 heartbeats
    assert ch["why"] == "stood" and ch["epoch"] == e + 1 and \
        ch["detect_ms"] >= 2 * 250 and "reconcile_ms" in ch, ch
    print(f"leader change: {ch}")
    # election and reconciliation span all of it (each rounded to the
    # millisecond): from its pre-vote's first line to the commit's, as
    # the kernel log's timestamps have it, nothing left to detection
    wait_for(lambda: f"epoch {e + 1}: its first record" in
             c[2].run("dmesg", timeout=60, check=True).out,
             timeout=WAIT, interval=0.5, what="node 2's first record")
    d = c[2].run("dmesg", timeout=60, check=True).out
    ts = {}
    for pat in (rf"asks whether it would win epoch {e + 1} ",
                rf"epoch {e + 1}: its first record, LSN \d+, is committed"):
        m = re.search(r"^\[\s*(\d+\.\d+)\].*" + pat, d, re.M)
        assert m, (pat, d)
        ts[pat] = float(m.group(1))
    span = (max(ts.values()) - min(ts.values())) * 1000.0
    ch = status(c[2])["last_change"]
    assert ch["elect_ms"] + ch["reconcile_ms"] >= span - 1.0, (span, ch)
    assert "stands for election" not in \
        c[3].run("dmesg", timeout=60, check=True).out
    hs = headers(c[2])
    assert [h["data"] for h in hs[-4:-1]] == ["a", "b", "c"], hs
    assert hs[-1].get("epoch_start") and hs[-1]["epoch"] == e + 1, hs
    wait_commit(c, hs[-1]["lsn"] + 1, nodes=(2, 3))
    n = append(c[3], ["after"])
    wait_commit(c, n[0] + 1, nodes=(2, 3))
    assert headers(c[3]) == headers(c[2])
    assert headers(c[2])[-1]["data"] == "after"

    c[1].boot()
    c[1].run("modprobe rdmalog", timeout=60, check=True)
    rlnode.apply(c[1], cluster_file("auto"))
    wait_commit(c, n[0] + 1)
    assert headers(c[1]) == headers(c[2]), (headers(c[1]), headers(c[2]))
    st = status(c[1])
    assert st["node"]["role"] == "backup" and \
        st["last_change"]["why"] == "joined", st
    d = c[1].run("dmesg", timeout=60, check=True).out
    assert "joins it as a backup" in d and "leads a new one" not in d, d
