# SPDX-License-Identifier: GPL-2.0
"""Observability: the rdmalog tracepoints follow one record from its append
on the primary to its apply on the backups, and rdmalogctl reports the
replication to every peer (STATUS_GET's and PEER_GET's PEER nests, the
replication counters of STATS_GET, the peer events of monitor).

Three soft-RoCE nodes, node 1 primary, durability quorum. States are
polled; nothing passes or fails on a clock.
"""

import json
import re

from testlib import test, wait_for
import rlnode
from rlnode import status, stats, peers

NODES = 3
TIMEOUT = 900
WAIT = 180
CONF = "/etc/rdmalog.conf"
TRACING = "/sys/kernel/tracing"
EVENTS = ("append", "post", "completion", "commit", "apply", "fwd")
# Keys every peer object of rdmalogctl -j carries for replication.
REPL_KEYS = ("replicating", "bytes_sent", "records_sent", "acked_lsn", "lag",
             "repl_errors")


def cluster_file(durability="quorum"):
    return rlnode.cluster_file(durability=durability, cluster=45)


def setup(c):
    for nd in c:
        nd.run("modprobe rdmalog", timeout=60, check=True)


def replicating(c):
    """Both backups joined on the primary (not only quorum in force)."""
    ps = peers(c[1])
    return all(ps[b]["state"] == "connected" and ps[b]["replicating"]
               for b in (2, 3))


def up(c):
    """A fresh log on every node (LSN 1 on), both backups replicating."""
    for nd in c:
        nd.run("rdmalogctl node down 2>/dev/null; true", timeout=120)
    for nd in c:
        nd.put(cluster_file(), CONF)
        nd.run(f"rdmalogctl apply {CONF}", timeout=120, check=True)
    wait_for(lambda: replicating(c), timeout=WAIT, interval=2,
             what="node1 replicating to nodes 2 and 3")


def wait_commit_everywhere(c, lsn):
    wait_for(lambda: all(status(nd)["log"]["commit_lsn"] >= lsn for nd in c),
             timeout=WAIT, interval=1, what=f"commit LSN {lsn} everywhere")


# ------------------------------------------------------------------ tracing

def trace_start(nd):
    """Empty trace buffer, global clock (events of all CPUs in order), every
    rdmalog event on."""
    nd.run(f"grep -q ' {TRACING} tracefs' /proc/mounts || "
           f"mount -t tracefs tracefs {TRACING}", timeout=60, check=True)
    r = nd.run(f"ls {TRACING}/events/rdmalog", timeout=60, check=True)
    for ev in EVENTS:
        assert f"rdmalog_{ev}" in r.out.split(), (nd.name, r.out)
    nd.run(f"cd {TRACING} && echo 0 > tracing_on && echo global > trace_clock "
           "&& echo 4096 > buffer_size_kb && echo > trace "
           "&& echo 1 > events/rdmalog/enable && echo 1 > tracing_on",
           timeout=60, check=True)


def trace_stop(nd):
    nd.run(f"cd {TRACING} && echo 0 > events/rdmalog/enable && echo > trace",
           timeout=60)


LINE = re.compile(r"\brdmalog_(\w+): (.*)$")


def trace_read(nd):
    """[(event, {field: int})] of nd's trace buffer, in order."""
    out = nd.run(f"cat {TRACING}/trace", timeout=120, check=True).out
    evs = []
    for line in out.splitlines():
        m = LINE.search(line)
        if not m:
            continue
        fields = dict(kv.split("=", 1) for kv in m.group(2).split())
        evs.append((m.group(1), {k: int(v) for k, v in fields.items()}))
    return evs


def first(evs, name, pred, after=-1):
    """Index of the first event @name after index @after that @pred likes."""
    for i, (n, f) in enumerate(evs):
        if i > after and n == name and pred(f):
            return i
    return None


def primary_path(evs, lsn):
    """Why the primary's trace does not show append -> post -> completion
    -> commit of @lsn for both backups, or None when it does."""
    a = first(evs, "append", lambda f: f["lsn"] == lsn)
    if a is None:
        return f"no rdmalog_append lsn={lsn}"
    pos = evs[a][1]["pos"]
    done = []
    for b in (2, 3):
        p = first(evs, "post", lambda f, b=b: f["peer"] == b and
                  f["from"] <= pos < f["to"] and f["end_lsn"] > lsn and
                  f["bytes"] == f["to"] - f["from"] and f["writes"] >= 1,
                  after=a)
        if p is None:
            return f"no rdmalog_post to node {b} covering pos {pos} after " \
                   "the append"
        d = first(evs, "completion", lambda f, b=b: f["peer"] == b and
                  f["end_lsn"] > lsn and f["ok"] == 1, after=p)
        if d is None:
            return f"no ok rdmalog_completion from node {b} after its post"
        done.append(d)
    k = first(evs, "commit", lambda f: f["old"] <= lsn < f["new"],
              after=min(done))
    if k is None:
        return f"no rdmalog_commit over lsn {lsn} after the first completion"
    return None


@test
def trace_follows_one_record(c):
    """append -> post -> completion -> commit on the primary, apply on both
    backups, for one record (LSN 3: two records before it)."""
    up(c)
    c[1].run("rdmalogcat -a zero one >/dev/null", timeout=60, check=True)
    wait_commit_everywhere(c, 3)
    for nd in c:
        trace_start(nd)
    try:
        r = c[1].run("echo observe-me | rdmalogcat -a", timeout=60,
                     check=True)
        lsn = int(r.out.split()[0])
        assert lsn == 3, r.out
        wait_commit_everywhere(c, lsn + 1)

        # Completions are handled after the backups already hold the data:
        # wait for the whole path rather than read once.
        why = []

        def path_done():
            why[:] = [primary_path(trace_read(c[1]), lsn)]
            return why[0] is None
        try:
            wait_for(path_done, timeout=WAIT, interval=2,
                     what=f"LSN {lsn}'s path in node1's trace")
        except AssertionError:
            raise AssertionError(f"node1: {why[0]}:\n"
                                 + "\n".join(map(str, trace_read(c[1]))))
        evs = trace_read(c[1])
        appends = [f for n, f in evs if n == "append"]
        assert appends == [{"lsn": lsn, "len": len("observe-me"),
                            "pos": appends[0]["pos"]}], appends
        # a primary applies nothing
        assert not [e for e in evs if e[0] == "apply"], evs

        for b in (2, 3):
            evs = trace_read(c[b])
            assert first(evs, "apply", lambda f: f["from_lsn"] <= lsn <
                         f["to_lsn"]) is not None, (c[b].name, evs)
            # a backup appends, posts and completes nothing
            assert not [e for e in evs if e[0] in
                        ("append", "post", "completion")], (c[b].name, evs)
    finally:
        for nd in c:
            trace_stop(nd)


# ----------------------------------------------------------- peer status

@test
def status_reports_replication(c):
    """Per-peer replication in status, peer show and stats, once idle."""
    up(c)
    before = {nd.name: stats(nd) for nd in c}
    n, payload = 20, 0
    recs = []
    for i in range(1, n + 1):
        rec = f"rec-{i}-" + "x" * (i * 41)
        recs.append(rec)
        payload += len(rec)
    c[1].put("\n".join(recs) + "\n", "/tmp/recs")
    r = c[1].run("rdmalogcat -a < /tmp/recs", timeout=120, check=True)
    assert [int(x) for x in r.out.split()] == list(range(1, n + 1)), r.out
    wait_commit_everywhere(c, n + 1)

    def idle():
        ps = peers(c[1])
        return all(ps[b]["replicating"] and ps[b]["lag"] == 0 and
                   ps[b]["acked_lsn"] == n + 1 for b in (2, 3))
    wait_for(idle, timeout=WAIT, interval=1,
             what="both backups acked everything, lag 0")

    st = status(c[1])
    assert st["log"]["commit_lsn"] == st["log"]["next_lsn"] == n + 1, st
    ps = {p["id"]: p for p in st["peers"]}
    sent = 0
    for b in (2, 3):
        p = ps[b]
        assert p["replicating"] is True, p
        assert p["acked_lsn"] == st["log"]["commit_lsn"], p
        assert p["lag"] == 0, p
        # a fresh connection and log: exactly what was appended went out,
        # each record with its header
        assert p["records_sent"] == n, p
        assert p["bytes_sent"] > payload, (p, payload)
        assert p["repl_errors"] == 0, p
        sent += p["bytes_sent"]

    # peer show: the same objects, one peer or all of them
    one = json.loads(c[1].run("rdmalogctl -j peer show id 2", timeout=60,
                              check=True).out)
    assert len(one) == 1 and one[0]["id"] == 2, one
    for k in REPL_KEYS:
        assert one[0][k] == ps[2][k], (k, one[0], ps[2])
    # the text table: SENT ACKED LAG for the backups
    txt = c[1].run("rdmalogctl status", timeout=60, check=True).out
    assert re.search(r"\bSENT\s+ACKED\s+LAG\b", txt), txt
    for b in (2, 3):
        assert re.search(rf"^\s+{b}\s+198\.18\.0\.{b}\s+7471\s+connected\s+"
                         rf"\S+\s+\S+\s+\S+\s+\S+\s+{n}\s+{n + 1}\s+0\b",
                         txt, re.M), txt

    # backups replicate to nobody: the keys are there, ACKED and LAG null
    for b in (2, 3):
        for p in status(c[b])["peers"]:
            assert p["replicating"] is False, (c[b].name, p)
            assert p["records_sent"] == 0 and p["bytes_sent"] == 0, p
            assert p["acked_lsn"] is None and p["lag"] is None, p

    # counters: the primary writes, the backups apply
    after = {nd.name: stats(nd) for nd in c}

    def delta(nd, k):
        return after[nd.name][k] - before[nd.name][k]
    assert delta(c[1], "repl_bytes") == sent, (sent, after[c[1].name])
    assert delta(c[1], "repl_writes") >= 2, after[c[1].name]
    assert delta(c[1], "repl_batches") >= 2, after[c[1].name]
    assert delta(c[1], "applied_records") == 0, after[c[1].name]
    for b in (2, 3):
        s = after[c[b].name]
        assert delta(c[b], "applied_records") == n, s
        assert delta(c[b], "repl_writes") == 0, s
        assert delta(c[b], "repl_bytes") == 0, s
    for nd in c:
        s = after[nd.name]
        for k in ("commit_timeouts", "truncated_records", "fwd_sent",
                  "fwd_served", "fwd_errors", "repl_batches",
                  "applied_records"):
            assert k in s, (nd.name, k, s)
        assert delta(nd, "commit_timeouts") == 0, s
        assert delta(nd, "truncated_records") == 0, s
    txt = c[1].run("rdmalogctl stats", timeout=60, check=True).out
    assert re.search(rf"^repl_bytes\s+{after[c[1].name]['repl_bytes']}$",
                     txt, re.M), txt


@test
def monitor_peer_events_carry_replication(c):
    """rdmalogctl monitor still prints events; PEER nests in them carry the
    replication keys (a peer that is added or removed replicates nothing).
    """
    up(c)
    nd = c[2]
    nd.run("rm -f /tmp/events", timeout=60, check=True)
    mon = nd.spawn("timeout 300 rdmalogctl -j monitor >/tmp/events 2>&1")
    text = nd.spawn("timeout 300 rdmalogctl monitor >/tmp/events.txt 2>&1")
    try:
        def events():
            return nd.run("cat /tmp/events /tmp/events.txt", timeout=60).out

        def seen():
            # repeated until both monitors have subscribed and seen a pair
            nd.run("rdmalogctl peer add id 9 address 198.18.0.9 && "
                   "rdmalogctl peer del id 9", timeout=120, check=True)
            out = events()
            return ('"event":"peer_added"' in out and
                    '"event":"peer_removed"' in out and
                    re.search(r"^peer_added node 2 peer 9\b", out, re.M) and
                    re.search(r"^peer_removed node 2 peer 9\b", out, re.M))
        wait_for(seen, timeout=WAIT, interval=2,
                 what="both monitors print peer 9 added and removed")
    finally:
        mon.kill()
        text.kill()
    evs = [json.loads(line) for line in
           nd.run("cat /tmp/events", timeout=60).out.splitlines()
           if line.startswith("{")]
    added = [e for e in evs if e["event"] == "peer_added"]
    removed = [e for e in evs if e["event"] == "peer_removed"]
    assert added and removed, evs
    for e in added + removed:
        p = e["peer"]
        assert e["node_id"] == 2 and p["id"] == 9, e
        assert p["replicating"] is False, e
        assert p["bytes_sent"] == 0 and p["records_sent"] == 0, e
        assert p["acked_lsn"] is None and p["lag"] is None, e
    # replication went on meanwhile
    r = c[1].run("rdmalogcat -a after-monitor", timeout=60, check=True)
    lsn = int(r.out.split()[0])
    wait_commit_everywhere(c, lsn + 1)
    assert replicating(c)


@test
def every_node_knows_the_primary(c):
    """Status names the primary and its epoch on every node (itself on the
    primary, the connected peer whose HELLO says so on a backup), each
    peer's role, and "wait primary" returns once it is known; a backup
    whose primary went away knows none."""
    up(c)
    epoch = status(c[1])["log"]["epoch"]
    assert epoch >= 1, status(c[1])["log"]
    for nd in c:
        r = nd.run("rdmalogctl wait primary --timeout 60", timeout=120)
        assert r.rc == 0, (nd.name, r.rc, r.out)
        st = status(nd)
        assert st["primary"] == {"id": 1, "epoch": epoch}, \
            (nd.name, st["primary"])
        roles = {p["id"]: p["role"] for p in st["peers"]}
        want = {i: "primary" if i == 1 else "backup"
                for i in (1, 2, 3) if i != nd.index}
        assert roles == want, (nd.name, roles)
    out = c[2].run("rdmalogctl status", timeout=60, check=True).out
    assert re.search(rf"^primary +node 1, epoch {epoch}$", out, re.M), out
    out = c[1].run("rdmalogctl status", timeout=60, check=True).out
    assert re.search(rf"^primary +this node, epoch {epoch}$", out, re.M), \
        out
    # the primary's log goes down: its backups know of no primary, and
    # waiting for one times out (5)
    c[1].run("rdmalogctl node down", timeout=120, check=True)
    for n in (2, 3):
        wait_for(lambda: status(c[n])["primary"] is None, timeout=WAIT,
                 interval=1, what=f"node {n} without a primary")
    r = c[2].run("rdmalogctl wait primary --timeout 2", timeout=60)
    assert r.rc == 5, (r.rc, r.out)
    out = c[2].run("rdmalogctl status", timeout=60, check=True).out
    assert re.search(r"^primary +none known$", out, re.M), out


def election(nd):
    return status(nd)["election"]


@test
def a_reloaded_node_learns_before_it_may_vote(c):
    """The election state (Documentation/protocol.rst, "Election state"):
    every node knows the primary's epoch and has heard from both peers. A
    node whose module was reloaded has forgotten any vote: it may not vote
    until it has heard from a majority of the other nodes since it was
    loaded -- in three nodes both others, so one peer is not enough."""
    up(c)
    epoch = status(c[1])["log"]["epoch"]
    learned = {"epoch": epoch, "vote": None, "learned": True, "heard": 2,
               "needed": 2, "wait_ms": None}
    seen = {}

    def is_learned(nd):
        seen[nd.name] = election(nd)
        return seen[nd.name] == learned
    for nd in c:
        try:
            wait_for(lambda: is_learned(nd), timeout=WAIT, interval=1,
                     what=f"{nd.name} learned")
        except AssertionError as e:
            raise AssertionError(f"{e}: {seen.get(nd.name)}") from None
    out = c[1].run("rdmalogctl status", timeout=60, check=True).out
    assert re.search(rf"^election +epoch {epoch}, no vote, may vote$", out,
                     re.M), out
    # node 3's module is reloaded while node 2 is down
    c[2].run("rdmalogctl node down", timeout=120, check=True)
    c[3].run("rdmalogctl node down && rmmod rdmalog && modprobe rdmalog",
             timeout=180, check=True)
    # without peers nobody else can have voted: it may vote ...
    el = election(c[3])
    assert el == {"epoch": 0, "vote": None, "learned": True, "heard": 0,
                  "needed": 0, "wait_ms": None}, el
    # ... but what it did not hear is not learned once peers are added
    c[3].run(f"rdmalogctl apply {CONF}", timeout=120, check=True)
    wait_for(lambda: peers(c[3])[1]["state"] == "connected", timeout=WAIT,
             interval=1, what="node 3 connected to node 1")
    wait_for(lambda: election(c[3])["epoch"] == epoch, timeout=WAIT,
             interval=1, what="node 3 knows the epoch from node 1")
    # what it hears counts only once every candidacy that may count a
    # vote of before its load has ended (3 peer timeouts + 2 s)
    el = election(c[3])
    if el["wait_ms"]:
        assert el["heard"] == 0 and el["learned"] is False, el
        out = c[3].run("rdmalogctl status", timeout=60, check=True).out
        assert re.search(r"^election +epoch \d+, no vote, may not vote "
                         r"yet: waits \d+ ms more for candidacies of "
                         r"before its load to end$", out, re.M), out
    wait_for(lambda: election(c[3])["wait_ms"] is None, timeout=WAIT,
             interval=1, what="node 3's learn wait over")
    wait_for(lambda: election(c[3])["heard"] == 1, timeout=WAIT,
             interval=1, what="node 3 heard node 1")
    el = election(c[3])
    assert el == {"epoch": epoch, "vote": None, "learned": False, "heard": 1,
                  "needed": 2, "wait_ms": None}, el
    out = c[3].run("rdmalogctl status", timeout=60, check=True).out
    assert re.search(r"^election +epoch \d+, no vote, may not vote yet: "
                     r"heard from 1 of the 2 peers it needs since loaded$",
                     out, re.M), out
    # node 1 was never reloaded: it stays learned
    assert election(c[1])["learned"] is True, election(c[1])
    # node 2 comes back: node 3 has heard from both others
    c[2].run("rdmalogctl node up", timeout=120, check=True)
    wait_for(lambda: election(c[3]) == learned, timeout=WAIT, interval=1,
             what="node 3 learned once it heard node 2")


@test
def the_crc32c_driver_is_named(c):
    """rdmalog names the CRC32C driver its records are checked with
    (/sys/module/rdmalog/parameters/crc32c_driver, read only). The test
    guests load crc32c_intel before anything loads libcrc32c (TCG's -cpu
    max has SSE4.2), so it is crc32c-intel there, as on an x86 host, and
    not the table-driven crc32c-generic the guests used to have."""
    for nd in c:
        r = nd.run("cat /sys/module/rdmalog/parameters/crc32c_driver",
                   timeout=60, check=True)
        assert r.out.strip() == "crc32c-intel", (nd.name, r.out)
        r = nd.run("echo x > /sys/module/rdmalog/parameters/crc32c_driver",
                   timeout=60)
        assert r.rc != 0, (nd.name, "crc32c_driver is writable", r.out)
