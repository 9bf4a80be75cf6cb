# SPDX-License-Identifier: GPL-2.0
"""Catch-up: a backup that comes back behind the primary pulls the
committed records it lacks with RDMA READ, verifies them and only then
joins; one behind the primary's first retained record restarts its log
there (counted, logged, announced), never silently.

Three soft-RoCE nodes, node 1 primary, quorum. A backup is cut off with
a cable pull (QMP set_link off: the peer timeout drops the connection),
the others go on committing, the cable comes back and the backup
reconnects with its old log. Logs are compared record by record with
their headers (rlnode.assert_same_logs).
"""

import functools
import json

from testlib import test, wait_for, TIMEOUT_SCALE
import rlnode
from rlnode import status, stats, log_of, peer_state, assert_same_logs, \
    inject

NODES = 3
# the endpoint-lifetime races below: a use after free faults (freed
# objects are poisoned) or is reported ("BUG <cache> (...)"); with swiotlb
APPEND = rlnode.DEBUG_APPEND
TIMEOUT = 420
WAIT = 180
WRITER = "/usr/lib/rdmalog/selftests/dp_writer"

# short timers: a pulled cable is noticed within a few seconds (not less:
# a loaded host must not make a backup look dead while it pulls)
cluster_file = functools.partial(rlnode.cluster_file, cluster=46,
                                 heartbeat=250, peer_timeout=3000,
                                 timeout=20000)


def setup(c):
    for nd in c:
        nd.run("modprobe rdmalog", timeout=60, check=True)


def up(c, text):
    for nd in c:
        nd.run("rdmalogctl node down 2>/dev/null; dmesg -c >/dev/null; true",
               timeout=120)
    for nd in c:
        rlnode.apply(nd, text)
    wait_connected(c, (2, 3))


def wait_connected(c, peers):
    wait_for(lambda: all(peer_state(c[1], p) == "connected" and
                         rlnode.peers(c[1])[p]["replicating"]
                         for p in peers),
             timeout=WAIT, interval=1,
             what=f"primary replicates to {peers}")


def dmesg(nd):
    return nd.run("dmesg", timeout=60, check=True).out


def cut(c, n):
    """Pull node n's cable; wait until the primary lost it."""
    c[n].link(False)
    wait_for(lambda: peer_state(c[1], n) != "connected", timeout=WAIT,
             interval=0.5, what=f"primary lost node {n}")


def restore(c, n):
    c[n].link(True)


def write(nd, count, sizes, prefix):
    r = nd.run(f"{WRITER} -n {count} -S {sizes} -p {prefix}",
               timeout=600)
    assert r.rc == 0, r.out[-2000:]


def monitor(nd):
    """Start "rdmalogctl -j monitor --now" on nd, writing /tmp/mon.json,
    and return once it has dumped the state: it joined the event group
    before the dump, so it sees every event sent after this returns
    (events are sent only while someone listens)."""
    nd.run("rm -f /tmp/mon.json", timeout=60)
    job = nd.spawn(f"timeout {WAIT * 4} rdmalogctl -j monitor --now "
                   ">/tmp/mon.json 2>&1")
    wait_for(lambda: "exists_done" in nd.run("cat /tmp/mon.json",
                                             timeout=60).out,
             timeout=WAIT, interval=0.5,
             what=f"the monitor on node {nd.index} subscribed")
    return job


def events(nd, name):
    """The events called name that "rdmalogctl -j monitor" wrote to
    /tmp/mon.json on nd."""
    out = nd.run("cat /tmp/mon.json", timeout=60).out
    evs = [json.loads(x) for x in out.splitlines() if x.strip()]
    return [e for e in evs if e.get("event") == name]


def delta(before, after, key):
    return after.get(key, 0) - before.get(key, 0)


@test
def behind_backup_pulls_and_joins(c):
    up(c, cluster_file(capacity="8M"))
    write(c[1], 20, "100,3000", "a")
    cut(c, 3)
    before3, before1 = stats(c[3]), stats(c[1])
    next3 = log_of(c[3])["next_lsn"]
    # committed by node 1 and node 2 while node 3 is away: about 1.5 MiB
    write(c[1], 60, "1,65536,20000,77", "b")
    assert log_of(c[3])["next_lsn"] == next3, "node 3 got records while cut"
    restore(c, 3)
    wait_connected(c, (2, 3))
    base, st = assert_same_logs(c)
    after3, after1 = stats(c[3]), stats(c[1])
    pulled = delta(before3, after3, "catchup_bytes")
    # one catch-up, or more if a connection was lost while it pulled
    assert delta(before3, after3, "catchups") >= 1, after3
    assert pulled > 1 << 20, f"pulled only {pulled} bytes"
    assert delta(before3, after3, "log_resets") == 0, after3
    assert delta(before1, after1, "joins") == 1, after1
    # several READs of at most 64 KiB: the per-peer total is the same
    p = rlnode.peers(c[3])[1]
    assert p["catchup"] == "none" and 0 < p["catchup_bytes"] <= pulled, p
    out1, out3 = dmesg(c[1]), dmesg(c[3])
    assert "node 1: node 3 granted its ring" in out1 and \
        "behind, catching up" in out1, out1[-3000:]
    assert f"node 3: catching up from primary 1: LSN {next3} to" in out3, \
        out3[-3000:]
    assert "node 1: node 3 caught up to LSN" in out1, out1[-3000:]
    # and it counts again: appends commit with node 2 away
    cut(c, 2)
    lsn = int(c[1].run("rdmalogcat -a after", timeout=60, check=True).out)
    wait_for(lambda: log_of(c[3])["commit_lsn"] > lsn, timeout=WAIT,
             interval=1, what="node 3 committed the new record")
    restore(c, 2)


@test
def a_backup_behind_catches_up_from_the_new_primary(c):
    """A backup that missed records and is then led by a new primary
    (promoted while both were backups, connected to each other) catches
    up from it on the connection it already had: the new primary keeps
    its connections and sends LEAD (plans/keep-connections.md, C3), and
    the ring granted on it is judged behind like one granted on a new
    connection."""
    up(c, cluster_file(capacity="8M"))
    write(c[1], 20, "100,3000", "a")
    rlnode.wait_learned(c)      # before node 1 goes: only then may they vote
    cut(c, 3)
    next3 = log_of(c[3])["next_lsn"]
    # committed by nodes 1 and 2 while node 3 is away: about 1.3 MiB
    write(c[1], 60, "1,65536,20000,77", "b")
    committed = log_of(c[1])["commit_lsn"]
    # node 2 takes its notice when asked (status): the new primary then
    # has them committed, and node 3 pulls them (what it had not taken
    # would be adopted, and written to node 3 after its JOIN)
    wait_for(lambda: log_of(c[2])["commit_lsn"] == committed, timeout=WAIT,
             interval=1, what="node 2 took the notice of the commit")
    c[1].run("rdmalogctl node down", timeout=120, check=True)
    restore(c, 3)
    # two backups, connected to each other, no primary
    wait_for(lambda: peer_state(c[2], 3) == "connected" and
             peer_state(c[3], 2) == "connected",
             timeout=WAIT, interval=1, what="nodes 2 and 3 connected")
    assert log_of(c[3])["next_lsn"] == next3, log_of(c[3])
    c[3].run("dmesg -c >/dev/null", timeout=60, check=True)
    before3 = stats(c[3])
    p32 = rlnode.peers(c[3])[2]["reconnects"]
    r = c[2].run("rdmalogctl node promote", timeout=300)
    assert r.rc == 0, (r.rc, r.out)
    wait_for(lambda: rlnode.peers(c[2])[3]["replicating"], timeout=WAIT,
             interval=1, what="node 2 replicates to node 3")
    base, st = assert_same_logs(c, nodes=(2, 3))
    assert st["commit_lsn"] > committed, (st, committed)
    after3 = stats(c[3])
    assert delta(before3, after3, "leads_received") == 1, after3
    assert rlnode.peers(c[3])[2]["reconnects"] == p32, rlnode.peers(c[3])
    assert delta(before3, after3, "catchups") >= 1, after3
    assert delta(before3, after3, "catchup_bytes") > 1 << 20, after3
    assert delta(before3, after3, "log_resets") == 0, after3
    out2, out3 = dmesg(c[2]), dmesg(c[3])
    assert "node 2: node 3 granted its ring" in out2 and \
        "behind, catching up" in out2, out2[-3000:]
    assert f"node 3: catching up from primary 2: LSN {next3} to" in out3, \
        out3[-3000:]
    assert "connection to node 2 closed" not in out3, out3[-3000:]


@test
def progress_shows_in_status(c):
    """A slow link: the pull takes seconds, and status shows it."""
    up(c, cluster_file(capacity="16M", max_record="1M"))
    cut(c, 3)
    write(c[1], 8, "1048000", "big")
    # node 1 serves the READ responses; 16 Mbit/s makes 8 MiB take ~4 s.
    # A debug kernel (TIMEOUT_SCALE) runs each status poll several times
    # slower: the link is slower by the square of the scale there, so
    # that the pull still outlasts a few polls on both nodes.
    kbit = int(16000 / TIMEOUT_SCALE ** 2)
    c[1].run(f"tc qdisc add dev eth0 root netem rate {kbit}kbit "
             "limit 100000", timeout=60, check=True)
    try:
        restore(c, 3)
        seen = {"pulling": None, "serving": None}

        def progressing():
            p3 = rlnode.peers(c[3])[1]
            if p3.get("catchup") == "pulling" and not seen["pulling"]:
                txt = c[3].run("rdmalogctl status", timeout=60,
                               check=True).out
                seen["pulling"] = (p3, txt)
            p1 = rlnode.peers(c[1])[3]
            if p1.get("catchup") == "serving":
                seen["serving"] = p1
            return all(seen.values())
        wait_for(progressing, timeout=WAIT, interval=0.2,
                 what="catch-up in progress on both sides")
        (p3, txt), p1 = seen["pulling"], seen["serving"]
        assert 0 < p3["catchup_left"] <= 8 * 1048576, p3
        assert p1["catchup_left"] >= 8 * 1048000, p1
        # the judgement, on both sides, while the pull goes on
        assert p1.get("sync") == "catching_up", p1
        assert p3.get("sync") == "catching_up", p3
        wait_connected(c, (2, 3))
    finally:
        c[1].run("tc qdisc del dev eth0 root", timeout=60)
    assert_same_logs(c)
    print(f"# pulling: {json.dumps(p3)}")
    # the text line of the primary, seen from node 3 while it pulled (or
    # just after: then the pull had finished in between)
    line = [x for x in txt.splitlines() if x.split()[:1] == ["1"]]
    assert line and ("catchup pulling" in line[0] or
                     "catchup" not in txt), txt


@test
def trimmed_past_backup_restarts_its_log(c):
    up(c, cluster_file(capacity="4M"))
    write(c[1], 10, "500", "a")
    cut(c, 3)
    old = log_of(c[3])
    write(c[1], 30, "4000", "b")
    first = log_of(c[1])["commit_lsn"] - 5
    c[1].run(f"rdmalogctl log trim {first}", timeout=60, check=True)
    before = stats(c[3])
    mon = monitor(c[3])
    try:
        restore(c, 3)
        wait_connected(c, (2, 3))
        base, st = assert_same_logs(c)
        assert st["first_lsn"] == first, st
        log3 = log_of(c[3])
        assert log3["first_lsn"] == first and log3["first_lsn"] > \
            old["next_lsn"], (old, log3)
        after = stats(c[3])
        assert delta(before, after, "log_resets") == 1, after
        assert delta(before, after, "trimmed_records") >= \
            old["next_lsn"] - old["first_lsn"], (before, after)
        out3 = dmesg(c[3])
        assert f"node 3: restarted the log at LSN {first}" in out3, \
            out3[-3000:]
        # (what it held was trimmed first: the primary's trim point,
        # sent once the backup was judged to follow its log)
        assert f"what follows our LSN {old['next_lsn']} " in out3, \
            out3[-3000:]
        # and in status, until the log goes down
        msg = status(c[3]).get("message", "")
        assert f"log restarted at LSN {first} by primary 1" in msg, msg

        evs = wait_for(lambda: events(c[3], "log_reset"), timeout=WAIT,
                       interval=1, what="log_reset event on node 3")
        assert evs[0].get("first_lsn") == first, evs
    finally:
        mon.kill()


@test
def empty_backup_restarts_discarding_nothing(c):
    """A backup that holds no record is restarted too when the primary
    no longer retains its next LSN, and says that it discarded nothing
    (it said "records 11 to 10 discarded" on the debug kernel)."""
    up(c, cluster_file(capacity="4M"))
    cut(c, 3)
    old = log_of(c[3])
    assert old["first_lsn"] == old["next_lsn"], old
    write(c[1], 20, "4000", "b")
    first = log_of(c[1])["commit_lsn"] - 5
    c[1].run(f"rdmalogctl log trim {first}", timeout=60, check=True)
    before = stats(c[3])
    restore(c, 3)
    wait_connected(c, (2, 3))
    assert_same_logs(c)
    assert delta(before, stats(c[3]), "log_resets") == 1, stats(c[3])
    line = [x for x in dmesg(c[3]).splitlines()
            if f"node 3: restarted the log at LSN {first}" in x]
    assert line and line[0].endswith("(no record discarded)"), line
    msg = status(c[3]).get("message", "")
    assert "(no record discarded)" in msg, msg


@test
def join_is_an_event(c):
    up(c, cluster_file())
    mon = monitor(c[1])
    try:
        cut(c, 2)
        c[1].run("rdmalogcat -a x y z >/dev/null", timeout=60, check=True)
        restore(c, 2)
        wait_connected(c, (2, 3))

        evs = wait_for(lambda: events(c[1], "peer_joined"), timeout=WAIT,
                       interval=1, what="peer_joined event on node 1")
        assert any(e.get("peer", {}).get("id") == 2 for e in evs), evs
    finally:
        mon.kill()
    assert_same_logs(c)


@test
def reads_landing_out_of_order_expose_nothing_early(c):
    """A READ posted after a later one (the completion handler posts in
    between) lands after it: nothing past the READ that has not landed
    is verified or exposed. The backup's work sleeps between reserving
    a READ's range and posting it, so the completions overtake it."""
    up(c, cluster_file(capacity="8M"))
    write(c[1], 10, "100", "a")
    cut(c, 3)
    # about 600 KiB: ten 64 KiB READs, the first four posted by the work
    write(c[1], 30, "20000", "b")
    before = stats(c[3])
    inject(c[3], "cu_post", 300)
    try:
        restore(c, 3)
        wait_connected(c, (2, 3))
    finally:
        inject(c[3], "cu_post", 0)
    assert_same_logs(c)
    after = stats(c[3])
    out3 = dmesg(c[3])
    assert "failed verification" not in out3, out3[-3000:]
    assert delta(before, after, "crc_errors") == 0, after
    # one round, pulled at the first try
    assert delta(before, after, "catchups") == 1, after
    assert delta(before, after, "catchup_bytes") >= 30 * 20000, after


def behind_then_trimmed_past(c, text):
    """Node 3 away while 30 records commit, back with a slow pull (a
    second and a half per READ, inject_cu_post_ms); node 1 trims past
    the range it pulls while it pulls, so its JOIN gets a RESET round.
    Returns node 1's new first LSN. The caller set its other delay
    points; cu_post is put back to 0 by the caller."""
    up(c, text)
    write(c[1], 10, "100", "a")
    cut(c, 3)
    write(c[1], 30, "4000", "b")
    inject(c[3], "cu_post", 1500)
    restore(c, 3)
    wait_for(lambda: rlnode.peers(c[1])[3].get("catchup") == "serving",
             timeout=WAIT, interval=0.2, what="node 1 serves node 3")
    c[1].run("rdmalogcat -a c >/dev/null", timeout=60, check=True)
    first = log_of(c[1])["commit_lsn"]
    c[1].run(f"rdmalogctl log trim {first}", timeout=60, check=True)
    return first


@test
def grant_mapped_while_the_connection_goes(c):
    """The primary's catch-up work maps a read grant (a backup judged
    again after its JOIN must restart its log: we trimmed past it) while
    the connection closes: the release waits for the work, which never
    touches a registration that is gone."""
    text = cluster_file(capacity="8M")
    # a long mapping on node 1
    inject(c[1], "cu_grant", 5000)
    try:
        first = behind_then_trimmed_past(c, text)
        wait_for(lambda: "caught up with primary 1" in dmesg(c[3]),
                 timeout=WAIT, interval=0.2, what="node 3 sent its JOIN")
        # node 1's work takes the JOIN at once and is in the mapping for
        # the next 5 s: the connection goes now
        c[3].run("sleep 1; rdmalogctl node down", timeout=120, check=True)
        wait_for(lambda: peer_state(c[1], 3) != "connected", timeout=WAIT,
                 interval=0.2, what="node 1 lost node 3")
        # the work finished the grant it was mapping (and printed it);
        # the connection was gone by then
        wait_for(lambda: "restarting its log" in dmesg(c[1]),
                 timeout=WAIT, interval=0.5,
                 what="node 1 judged the JOIN: restart")
        assert status(c[1])["log"]["commit_lsn"] >= first
    finally:
        inject(c[1], "cu_grant", 0)
        inject(c[3], "cu_post", 0)
    rlnode.apply(c[3], text)
    wait_connected(c, (2, 3))
    assert_same_logs(c)


@test
def join_answered_at_once_by_a_restart(c):
    """The primary answers a JOIN with the next round (it trimmed past
    the range the backup pulled: restart the log) before the backup's
    work is done with the JOIN: the backup takes the CATCHUP, restarts
    its log and joins, without dropping the connection."""
    inject(c[3], "cu_join", 2000)
    try:
        before = stats(c[3])
        first = behind_then_trimmed_past(c, cluster_file(capacity="8M"))
        wait_for(lambda: f"restarted the log at LSN {first}" in dmesg(c[3]),
                 timeout=WAIT, interval=0.5, what="node 3 restarted its log")
        inject(c[3], "cu_post", 0)
        wait_connected(c, (2, 3))
    finally:
        inject(c[3], "cu_post", 0)
        inject(c[3], "cu_join", 0)
    assert_same_logs(c)
    after = stats(c[3])
    out3 = dmesg(c[3])
    assert "while catching up" not in out3, out3[-3000:]
    assert delta(before, after, "bad_msgs") == 0, after
    assert delta(before, after, "log_resets") == 1, after
    assert delta(before, after, "catchups") == 2, after
    assert log_of(c[3])["first_lsn"] == first


@test
def floor_not_lowered_under_a_reserved_append(c):
    """A backup whose RING is judged while an append holds ring space
    reserved under the floor of the moment, and whose tail is so low
    that the append would overwrite records it retains: the primary does
    not take it now (it reconnects and trims to our first record then).
    Before the fix the primary joined it, and the record's WRITE landed
    on the retained records before the backup heard of our trim: the
    backup found its commit point outside its ring."""
    up(c, cluster_file(capacity="1M", max_record="256K"))
    write(c[1], 100, "8000", "a")
    cut(c, 3)
    write(c[1], 5, "1000", "b")
    first = log_of(c[3])["next_lsn"]
    before = stats(c[3])

    def judged():
        out = dmesg(c[1])
        return (out.count("node 3 granted its ring") +
                out.count("our ring is too full to take it now"))

    judgements = judged()
    inject(c[1], "cu_ring", 12000)
    try:
        restore(c, 3)
        wait_for(lambda: peer_state(c[1], 3) == "connected", timeout=WAIT,
                 interval=0.2, what="node 3 connected, its RING waits")
        # what node 3 is sent after it joins lands before it applies it
        inject(c[3], "repl_apply", 15000)
        # our first record is node 3's next one; node 2 trims with us
        c[1].run(f"rdmalogctl log trim {first}", timeout=60, check=True)
        c[1].run("rdmalogcat -a t >/dev/null", timeout=60, check=True)
        # 250000 bytes reserved above 810 KB: fits a 1 MiB ring above our
        # tail, and ends beyond node 3's tail (0) + the capacity
        inject(c[1], "log_fill", 15000)
        job = c[1].spawn(f"{WRITER} -n 1 -S 250000 -p big "
                         ">/tmp/big.out 2>&1; echo rc=$? >>/tmp/big.out")
        wait_for(lambda: judged() > judgements, timeout=WAIT, interval=0.5,
                 what="node 3's RING judged")
        out = c[1].run("cat /tmp/big.out", timeout=60).out
        assert "rc=" not in out, \
            "the big append was written before node 3 was judged: " + out
        wait_for(lambda: "rc=" in c[1].run("cat /tmp/big.out",
                                           timeout=60).out,
                 timeout=WAIT, interval=1, what="the big append finished")
        job.kill()
        out = c[1].run("cat /tmp/big.out", timeout=60).out
        assert "rc=0" in out, out
    finally:
        inject(c[1], "log_fill", 0)
        inject(c[1], "cu_ring", 0)
        inject(c[3], "repl_apply", 0)
    wait_connected(c, (2, 3))
    assert_same_logs(c)
    after = stats(c[3])
    out3 = dmesg(c[3])
    assert "failed verification" not in out3, out3[-3000:]
    assert delta(before, after, "bad_msgs") == 0, after
    assert delta(before, after, "crc_errors") == 0, after
    out1 = dmesg(c[1])
    assert "our ring is too full to take it now" in out1, out1[-3000:]


@test
def new_log_never_joins_backups_of_the_old_one(c):
    """review-kernel.md #1: node 1's log goes down and up (a new log,
    empty) while both backups are cut off, holding the old one. Records
    of 100 bytes, so that positions coincide: the new log's writer waits,
    the backups come back, and node 1 must judge them another history
    (never joined by position): nothing is acknowledged that only node 1
    holds, and the backups keep the old log. Before the fix node 1 joined
    both, acknowledged all 150, and the backups held old records at LSN
    1-100 followed by 50 new ones."""
    up(c, cluster_file(capacity="1M"))
    write(c[1], 100, "100", "old")
    old = {n: rlnode.records(c[n]) for n in (2, 3)}
    first = status(c[1])["log"]
    cut(c, 2)
    cut(c, 3)
    c[1].run("rdmalogctl node down && rdmalogctl node up", timeout=120,
             check=True)
    new = status(c[1])["log"]
    assert new["id"] != first["id"] and new["epoch"] > first["epoch"], \
        (first, new)
    mon = monitor(c[1])
    # 150 appends waiting at once: the new log's next LSN passes the
    # backups', at the same stream position
    job = c[1].spawn("for i in $(seq 150); do "
                     f"{WRITER} -n 1 -S 100 -p new$i >/tmp/new.$i 2>&1 & "
                     "done; wait; echo finished >/tmp/new.done")
    wait_for(lambda: log_of(c[1])["next_lsn"] == 151, timeout=WAIT,
             interval=0.5, what="150 appends waiting on node 1")
    restore(c, 2)
    restore(c, 3)
    wait_for(lambda: all(rlnode.peers(c[1])[p]["sync"] in
                         ("diverged", "in_sync") for p in (2, 3)),
             timeout=WAIT, interval=1, what="node 1 judged both backups")
    wait_for(lambda: len(events(c[1], "peer_diverged")) >= 2, timeout=WAIT,
             interval=1, what="peer_diverged events on node 1")
    wait_for(lambda: c[1].run("cat /tmp/new.done 2>/dev/null",
                              timeout=60).out.strip() == "finished",
             timeout=WAIT, interval=1, what="the new log's writers ended")
    job.kill()
    mon.kill()
    out = c[1].run("cat /tmp/new.[0-9]*", timeout=60).out
    acked = [x for x in out.splitlines() if x[:1].isdigit()]
    assert not acked, f"{len(acked)} appends acknowledged: {acked[:5]}"
    assert out.count("ETIMEDOUT") == 150, out[-2000:]
    assert all(rlnode.peers(c[1])[p]["sync"] == "diverged" for p in (2, 3))
    for n in (2, 3):
        assert rlnode.records(c[n]) == old[n], f"node {n}'s log changed"
        lg = log_of(c[n])
        assert lg["id"] == first["id"] and lg["epoch"] == first["epoch"], lg
    assert {e["peer"]["id"] for e in events(c[1], "peer_diverged")} == \
        {2, 3}, events(c[1], "peer_diverged")
    assert "holds records of another log" in dmesg(c[1])
