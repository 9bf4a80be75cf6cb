# SPDX-License-Identifier: GPL-2.0
"""Data path: the primary RDMA-WRITEs records into the backups' rings,
commits by the durability rule, and the backups expose the committed log.

Three soft-RoCE nodes, node 1 primary; each test brings the cluster it
needs up from scratch (every node down, then "rdmalogctl apply"). States
are polled; nothing passes or fails on a clock except the commit timeout
itself, whose bound is checked loosely (the error must come, and not
before the timeout).

Logs are compared with "rdmalogcat -j -H" (every retained committed record
with its header: LSN, length, epoch, timestamp, CRC32C, and its payload):
equal output on two nodes means the same records with the same bytes.
selftests/dp_writer.c is the odd-size, trimming, non-blocking writer.
"""

import json
import re
import shlex
import time

from testlib import test, wait_for
import functools

import rlnode
from rlnode import status, stats, records, log_of, peer_state, dump, \
    assert_gapless, assert_same_logs, wait_idle

NODES = 3
# the ring's DMA syncs: guests with swiotlb=force (and SLUB's checks),
# the VMs of catchup
APPEND = rlnode.DEBUG_APPEND
TIMEOUT = 420
WAIT = 180
CONF = "/etc/rdmalog.conf"
WRITER = "/usr/lib/rdmalog/selftests/dp_writer"
HDR = 48            # sizeof(struct rdmalog_ring_record)
ALIGN = 8           # RDMALOG_RECORD_ALIGN


cluster_file = functools.partial(rlnode.cluster_file, cluster=44)


def effective(nd):
    return status(nd)["durability"]["effective"]


def setup(c):
    for nd in c:
        nd.run("modprobe rdmalog", timeout=60, check=True)


def down(nd):
    nd.run("rdmalogctl node down 2>/dev/null; true", timeout=120)


def apply(nd, text):
    nd.put(text, CONF)
    nd.run(f"rdmalogctl apply {CONF}", timeout=120, check=True)


def wait_peers(c, peers, state="connected"):
    wait_for(lambda: all(peer_state(c[1], p) == state for p in peers),
             timeout=WAIT, interval=2,
             what=f"primary sees peers {peers} {state}")


def up(c, text, nodes=(1, 2, 3)):
    """Every node down, then the cluster file applied on nodes."""
    for nd in c:
        down(nd)
    for n in nodes:
        apply(c[n], text)
    wait_peers(c, [n for n in nodes if n != 1])


def wait_effective(nd, durability):
    wait_for(lambda: effective(nd) == durability, timeout=WAIT, interval=2,
             what=f"durability {durability} in force on {nd.name}")


def wait_commit_everywhere(c, lsn, nodes=(1, 2, 3)):
    wait_for(lambda: all(log_of(c[n])["commit_lsn"] >= lsn for n in nodes),
             timeout=WAIT, interval=1,
             what=f"commit LSN {lsn} on nodes {nodes}")


def append(nd, *texts, timeout=120):
    """Append each text as one record on nd; returns their LSNs."""
    args = " ".join(shlex.quote(t) for t in texts)
    r = nd.run(f"rdmalogcat -a {args}", timeout=timeout, check=True)
    return [int(x) for x in r.out.split()]


def append_fails(nd, text, timeout_ms):
    """Append text on nd and expect ETIMEDOUT after about timeout_ms."""
    r = nd.run(f"rdmalogcat -a {shlex.quote(text)}", timeout=120)
    assert r.rc == 1 and "write: Connection timed out" in r.out, \
        (f"append of {text!r} should fail with ETIMEDOUT", r.rc, r.out)
    # the guest measures; the append cannot fail before its timeout
    assert r.elapsed >= timeout_ms / 1000 * 0.95, \
        (f"ETIMEDOUT after {r.elapsed:.2f}s, before the commit timeout "
         f"({timeout_ms} ms)")
    return r


def writer(nd, args, timeout=300):
    """Run dp_writer; returns (rc, [(lsn, size)], {summary}, output)."""
    r = nd.run(f"{WRITER} {args}", timeout=timeout)
    assert not r.timed_out, ("dp_writer timed out", r.out[-2000:])
    recs, summary = [], {}
    for line in r.out.splitlines():
        if line.startswith("done "):
            f = line.split()[1:]
            summary = {f[i]: int(f[i + 1]) for i in range(0, len(f), 2)}
        elif re.match(r"^\d+ \d+$", line):
            a, b = line.split()
            recs.append((int(a), int(b)))
    return r.rc, recs, summary, r.out


def footprint(size):
    return (HDR + size + ALIGN - 1) // ALIGN * ALIGN


def assert_no_text(c, text, nodes=(1, 2, 3)):
    for n in nodes:
        r = c[n].run(f"rdmalogcat | grep -c {shlex.quote(text)}", timeout=120)
        assert r.out.strip() == "0", \
            (f"node{n} shows {text!r} as committed", r.out)


# ------------------------------------------------------------------ tests

@test
def quorum_primary_appends_replicate(c):
    up(c, cluster_file())
    wait_for(lambda: effective(c[1]) == "quorum",
             timeout=WAIT, interval=2, what="quorum in force")
    r = c[1].run("for i in $(seq 1 50); do echo rec-$i-$(head -c $((i*37)) /dev/zero | tr '\\0' x); done "
                 "| rdmalogcat -a", timeout=300, check=True)
    lsns = [int(x) for x in r.out.split()]
    assert lsns == list(range(1, 51)), lsns
    wait_commit_everywhere(c, 51)
    base = records(c[1])
    assert len(base) == 50, len(base)
    for n in (2, 3):
        got = records(c[n])
        assert got == base, (n, got[:3], base[:3])


def health(c, nodes=(1, 2, 3)):
    """Counters that must not move while a cluster works undisturbed."""
    keys = ("disconnects", "bad_msgs", "completion_errors", "crc_errors",
            "commit_timeouts", "append_errors")
    return {n: {k: stats(c[n])[k] for k in keys} for n in nodes}


def assert_healthy(c, before):
    after = health(c, tuple(before))
    assert after == before, ("connections dropped or errors counted",
                             before, after)


@test
def quorum_many_writers_identical_logs(c):
    """8 bench threads and 2 odd-size writers at once on the primary."""
    up(c, cluster_file(capacity="4M"))
    wait_effective(c[1], "quorum")
    h0 = health(c)
    threads, count = 8, 150
    r = c[1].run(
        f"{WRITER} -n 100 -S 1,333,77,1001,4097 -p w1 > /tmp/w1.out 2>&1 & "
        "A=$!; "
        f"{WRITER} -n 100 -S 5,4095,999,63 -p w2 > /tmp/w2.out 2>&1 & "
        "B=$!; "
        f"rdmalog-bench -t {threads} -s 256 -n {count} --verify -j "
        "> /tmp/bench.json 2>/tmp/bench.err; echo bench $?; "
        "wait $A; echo w1 $?; wait $B; echo w2 $?",
        timeout=600)
    assert not r.timed_out, r.out
    rcs = dict(line.split() for line in r.out.splitlines() if line.strip())
    bench = c[1].get("/tmp/bench.json").decode()
    assert rcs == {"bench": "0", "w1": "0", "w2": "0"}, \
        (rcs, bench, c[1].get("/tmp/bench.err"), c[1].get("/tmp/w1.out")[-500:],
         c[1].get("/tmp/w2.out")[-500:])
    b = json.loads(bench)
    assert b["appends"] == threads * count and b["failed"] == 0, b
    assert b["verify"]["ok"] and b["verify"]["checked"] == threads * count, b
    total = threads * count + 200
    mine = []
    for w in ("w1", "w2"):
        out = c[1].get(f"/tmp/{w}.out").decode()
        lsns = [int(x.split()[0]) for x in out.splitlines()
                if re.match(r"^\d+ \d+$", x)]
        assert len(lsns) == 100 and lsns == sorted(lsns), (w, lsns)
        mine += lsns
    assert len(set(mine)) == 200, "two appends got the same LSN"
    base, st = assert_same_logs(c)
    assert st["first_lsn"] == 1 and st["next_lsn"] == total + 1, st
    assert base["count"] == total
    assert_healthy(c, h0)


@test
def group_commit_under_concurrent_load(c):
    """Fewer APPEND notices than appends: batches carry several records."""
    up(c, cluster_file(capacity="4M"))
    wait_effective(c[1], "quorum")
    s0 = stats(c[1])
    threads, count = 8, 150
    r = c[1].run(f"rdmalog-bench -t {threads} -s 256 -n {count} -j",
                 timeout=600, check=True)
    b = json.loads(r.out)
    assert b["appends"] == threads * count and b["failed"] == 0, b
    wait_idle(c)
    s1 = stats(c[1])
    appends = s1["appends"] - s0["appends"]
    batches = s1["repl_batches"] - s0["repl_batches"]
    writes = s1["repl_writes"] - s0["repl_writes"]
    assert appends == threads * count, (appends, s0, s1)
    assert batches > 0 and writes > 0, (batches, writes)
    # every backup gets its own APPEND notices: per backup, fewer
    # notices than appends, or there was no group commit
    assert batches / 2 < appends, \
        f"{batches} APPEND notices to 2 backups for {appends} appends"


@test
def backups_take_no_part_per_record(c):
    """Passive backups (Documentation/protocol.rst, "The notice block"):
    the primary RDMA-writes its notices into the backups' notice blocks,
    and no backup CPU takes them per record. Four writers append 6,000
    records of 64 bytes on node 1; each backup may take a notice (an
    apply run) at most once per 1,000 commits, plus one, and receive no
    more messages than at its idle rate (heartbeats, measured first) plus
    as many. Version 11 took two APPEND messages per record. Then every
    backup's log, read (which takes the notice), is the primary's."""
    up(c, cluster_file(capacity="4M"))
    wait_effective(c[1], "quorum")
    wait_idle(c)
    i0 = {n: stats(c[n]) for n in (2, 3)}
    t0 = time.monotonic()
    time.sleep(20)
    i1 = {n: stats(c[n]) for n in (2, 3)}
    idle = {n: (i1[n]["msgs_received"] - i0[n]["msgs_received"]) /
            (time.monotonic() - t0) for n in (2, 3)}
    s0 = {n: stats(c[n]) for n in (1, 2, 3)}
    t0 = time.monotonic()
    r = c[1].run("rdmalog-bench -t 4 -s 64 -n 1500 -j", timeout=600,
                 check=True)
    s1 = {n: stats(c[n]) for n in (1, 2, 3)}
    secs = time.monotonic() - t0
    b = json.loads(r.out)
    assert b["appends"] == 6000 and b["failed"] == 0, b
    commits = s1[1]["appends"] - s0[1]["appends"]
    assert commits == 6000, (commits, s0[1], s1[1])
    allowed = commits // 1000 + 1
    notifies = s1[1]["notifies_sent"] - s0[1]["notifies_sent"]
    print(f"# {commits} commits in {secs:.1f} s; node 1 sent {notifies} "
          "NOTIFYs")
    for n in (2, 3):
        d = {k: s1[n][k] - s0[n][k]
             for k in ("apply_runs", "msgs_received", "waits_sent")}
        extra = d["msgs_received"] - idle[n] * secs
        runs = 1000 * d["apply_runs"] / commits
        print(f"# node {n}: per 1,000 commits {runs:.2f} apply runs and "
              f"{1000 * extra / commits:.2f} messages above its idle rate "
              f"({idle[n]:.2f}/s): {d}")
        assert d["apply_runs"] <= allowed, (n, d, commits)
        # two more: heartbeats timed on the guest, the window on the host
        assert extra <= allowed + 2, (n, d, idle[n], secs)
        assert d["waits_sent"] == 0, (n, d)
    assert notifies <= 2 * allowed, (notifies, commits)
    assert_same_logs(c)


@test
def a_reader_on_a_backup_is_woken_by_notify(c):
    """A reader blocked on a backup (rdmalogcat -f on node 2) has node 2
    send a WAIT, and node 1 answers with one NOTIFY once a notice says the
    record committed: the reader prints every record node 1 appends, one
    at a time, although node 2 takes no notice of its own."""
    up(c, cluster_file())
    wait_effective(c[1], "quorum")
    st = wait_idle(c)
    nxt = st["next_lsn"]
    s0 = {n: stats(c[n]) for n in (1, 2)}
    job = c[2].spawn(f"rdmalogcat -f -s {nxt} -n 10", timeout=300)
    texts = [f"woken-{i}" for i in range(10)]
    for t in texts:
        # the reader waits for each one before it is appended
        time.sleep(1)
        assert append(c[1], t) == [nxt + texts.index(t)]
    res = job.wait(320)
    assert res.rc == 0, res.out
    out = res.out.split()
    assert out[1::2] == texts, out
    assert [int(x) for x in out[0::2]] == list(range(nxt, nxt + 10)), out
    s1 = {n: stats(c[n]) for n in (1, 2)}
    waits = s1[2]["waits_sent"] - s0[2]["waits_sent"]
    notifies = s1[1]["notifies_sent"] - s0[1]["notifies_sent"]
    print(f"# node 2 sent {waits} WAITs, node 1 {notifies} NOTIFYs")
    assert 1 <= waits <= 22, waits
    assert 1 <= notifies, notifies


@test
def a_notify_landing_during_a_take_is_not_an_error(c):
    """Node 2 takes its notice for a status query and is held 3 s in the
    take (delay point notice_take); meanwhile node 1, asked to NOTIFY
    after every notice (notify_kib 0), appends: the notice and its
    NOTIFY land on node 2 during the take. Node 2 must not take that for
    a NOTIFY of a notice its block lacks (it read the NOTIFY's number
    after the block, before 2026-12-05, and dropped the connection):
    the connection stays, nothing counts as a bad message, and node 2
    exposes the record."""
    up(c, cluster_file())
    wait_effective(c[1], "quorum")
    st = wait_idle(c)
    h0 = health(c)
    c[1].run("echo 0 > /sys/module/rdmalog/parameters/notify_kib",
             timeout=60, check=True)
    rlnode.inject(c[2], "notice_take", 3000)
    try:
        job = c[2].spawn("rdmalogctl -j status >/dev/null; echo rc=$?",
                         timeout=120)
        time.sleep(1)
        assert append(c[1], "during-the-take") == [st["next_lsn"]]
        assert job.wait(120).out.split()[-1] == "rc=0"
    finally:
        rlnode.inject(c[2], "notice_take", 0)
        c[1].run("echo 512 > /sys/module/rdmalog/parameters/notify_kib",
                 timeout=60)
    wait_for(lambda: status(c[2])["log"]["commit_lsn"] > st["next_lsn"],
             timeout=WAIT, interval=1, what="node 2 exposes the record")
    out = c[2].run("dmesg", timeout=60, check=True).out
    assert "not in the notice block" not in out, out[-3000:]
    assert_healthy(c, h0)


def set_poll_us(nd, us):
    nd.run(f"echo {us} > /sys/module/rdmalog/parameters/poll_us",
           timeout=60, check=True)


@test
def a_spinning_writer_reaps_the_completion_that_commits_it(c):
    """With poll_us larger than a round trip, a lone writer on node 1
    spins for each commit and reaps the backups' completions itself
    (polled_completions grows: the completion that commits its record
    ran in its context, not in the softirq); with poll_us 0 it sleeps
    and reaps none. Both ways every append commits, and the logs agree."""
    up(c, cluster_file())
    wait_effective(c[1], "quorum")
    wait_idle(c)
    try:
        set_poll_us(c[1], 0)
        s0 = stats(c[1])
        r = c[1].run("rdmalog-bench -t 1 -s 64 -n 50 -j", timeout=300,
                     check=True)
        assert json.loads(r.out)["appends"] == 50, r.out
        s1 = stats(c[1])
        # a second, a thousand round trips of soft-RoCE under TCG
        set_poll_us(c[1], 1000000)
        r = c[1].run("rdmalog-bench -t 1 -s 64 -n 50 -j", timeout=300,
                     check=True)
        assert json.loads(r.out)["appends"] == 50, r.out
        s2 = stats(c[1])
    finally:
        set_poll_us(c[1], 50)
    slept = s1["polled_completions"] - s0["polled_completions"]
    spun = s2["polled_completions"] - s1["polled_completions"]
    print(f"# completions the writer reaped: {slept} sleeping, "
          f"{spun} spinning")
    assert slept == 0, (s0, s1)
    assert spun >= 1, (s1, s2)
    assert s2["appends"] - s0["appends"] == 100, (s0, s2)
    wait_idle(c)
    assert_same_logs(c)


@test
def open_loop_charges_a_stall_to_every_append_it_delays(c):
    """rdmalog-bench -r (the open loop, Documentation/benchmarks.rst):
    appends are offered at a fixed rate and each one's latency counts
    from when it was due. Unhindered, 2 writers offered 100/s take at
    least the time their 50 appends are spread over. With every append
    held 200 ms on node 1 (inject_log_fill_ms, after its reservation;
    the two writers' holds overlap), the closed loop's worst append waits
    about one hold, while the open loop's last append of each writer, due
    at most 90 ms after the first but served after its writer's four
    others, waits about four and a half: the stall is charged to every
    append it delayed (coordinated omission), as an application with
    that arrival rate would see it."""
    up(c, cluster_file())
    wait_effective(c[1], "quorum")
    b = json.loads(c[1].run("rdmalog-bench -j -t 2 -n 25 -r 100",
                            timeout=300, check=True).out)
    assert b["appends"] == 50 and b["rate_offered"] == 100, b
    # the last append is due (49 / 100) s after the start
    assert b["elapsed_s"] >= 0.49, b
    rlnode.inject(c[1], "log_fill", 200)
    try:
        closed = json.loads(c[1].run("rdmalog-bench -j -t 2 -n 5",
                                     timeout=300, check=True).out)
        opened = json.loads(c[1].run("rdmalog-bench -j -t 2 -n 5 -r 100",
                                     timeout=300, check=True).out)
    finally:
        rlnode.inject(c[1], "log_fill", 0)
    cl, op = closed["latency_us"], opened["latency_us"]
    print(f"# held 200 ms: closed loop max {cl['max']:.0f} us, open loop "
          f"max {op['max']:.0f} us")
    assert op["max"] >= 800_000, (cl, op)
    assert op["max"] > 2 * cl["max"], (cl, op)


@test
def durability_all_blocks_without_every_backup(c):
    tmo = 3000
    up(c, cluster_file(durability="all", timeout=tmo))
    wait_effective(c[1], "all")
    assert append(c[1], "all-1", "all-2", "all-3") == [1, 2, 3]
    wait_commit_everywhere(c, 4)
    s0 = stats(c[1])

    down(c[3])
    wait_for(lambda: peer_state(c[1], 3) != "connected", timeout=WAIT,
             interval=1, what="primary sees node 3 gone")
    wait_effective(c[1], "quorum")
    st = status(c[1])
    assert st["durability"]["requested"] == "all", st
    assert "durability all needs 2 backups in sync, 1 is" in st["message"], st

    append_fails(c[1], "all-FAILED", tmo)
    s1 = stats(c[1])
    assert s1["commit_timeouts"] - s0["commit_timeouts"] == 1, (s0, s1)
    assert s1["truncated_records"] - s0["truncated_records"] == 1, (s0, s1)
    lg = log_of(c[1])
    assert lg["next_lsn"] == 4 and lg["commit_lsn"] == 4, lg
    # node 2 got the record's bytes but never its commit
    assert log_of(c[2])["commit_lsn"] == 4
    assert_same_logs(c, (1, 2))
    assert_no_text(c, "all-FAILED", (1, 2))

    # several writers waiting at once: every one of them fails
    r = c[1].run("for i in 1 2 3 4; do rdmalogcat -a all-FAILED-$i & done; "
                 "wait", timeout=120)
    assert r.out.count("write: Connection timed out") == 4, r.out
    s2 = stats(c[1])
    assert s2["truncated_records"] - s1["truncated_records"] == 4, (s1, s2)
    lg = log_of(c[1])
    assert lg["next_lsn"] == 4 and lg["commit_lsn"] == 4, lg
    assert_same_logs(c, (1, 2))

    # node 3 back (an empty log: it joins at LSN 1 and is sent everything)
    apply(c[3], cluster_file(durability="all", timeout=tmo))
    wait_peers(c, [3])
    wait_effective(c[1], "all")
    assert append(c[1], "all-NEXT") == [4], "the failed LSN is reused"
    base, st = assert_same_logs(c)
    assert st["next_lsn"] == 5, st
    recs = records(c[3])
    assert [r[2] for r in recs] == ["all-1", "all-2", "all-3", "all-NEXT"], recs
    assert_no_text(c, "all-FAILED")


@test
def durability_async_commits_without_backups(c):
    for nd in c:
        down(nd)
    text = cluster_file(durability="async")
    apply(c[1], text)
    st = status(c[1])
    assert st["durability"]["requested"] == "async", st
    assert st["durability"]["effective"] == "async", st
    assert not any(p["state"] == "connected" for p in st["peers"]), st
    lsns = append(c[1], *[f"async-{i}" for i in range(1, 21)])
    assert lsns == list(range(1, 21)), lsns
    lg = log_of(c[1])
    assert lg["commit_lsn"] == 21 and lg["next_lsn"] == 21, lg
    st = status(c[1])
    assert not any(p["state"] == "connected" for p in st["peers"]), st
    # backups that come later join at LSN 1 and receive the whole log
    apply(c[2], text)
    apply(c[3], text)
    wait_peers(c, [2, 3])
    base, st = assert_same_logs(c)
    assert base["count"] == 20 and st["next_lsn"] == 21, st
    assert append(c[1], "async-21") == [21]
    assert_same_logs(c)


@test
def quorum_survives_one_backup_down(c):
    tmo = 3000
    text = cluster_file(durability="quorum", timeout=tmo)
    up(c, text)
    wait_effective(c[1], "quorum")
    assert append(c[1], "q-1", "q-2", "q-3") == [1, 2, 3]
    wait_commit_everywhere(c, 4)

    down(c[3])
    wait_for(lambda: peer_state(c[1], 3) != "connected", timeout=WAIT,
             interval=1, what="primary sees node 3 gone")
    assert effective(c[1]) == "quorum"
    assert append(c[1], "q-4", "q-5", "q-6") == [4, 5, 6]
    assert_same_logs(c, (1, 2))

    # node 2's cable too: no backup; node 2 keeps its log meanwhile
    c[2].link(False)
    try:
        wait_for(lambda: peer_state(c[1], 2) != "connected", timeout=WAIT,
                 interval=1, what="primary sees node 2 gone")
        wait_effective(c[1], "async")
        st = status(c[1])
        assert st["durability"]["requested"] == "quorum", st
        assert "durability quorum needs 1 backup in sync, 0 are" in \
            st["message"], st
        append_fails(c[1], "q-FAILED", tmo)
        lg = log_of(c[1])
        assert lg["next_lsn"] == 7 and lg["commit_lsn"] == 7, lg
        c[1].run("dmesg -c >/dev/null", timeout=60, check=True)
    finally:
        c[2].link(True)
    # node 2 holds exactly the committed prefix: it rejoins in sync
    wait_peers(c, [2])
    wait_effective(c[1], "quorum")
    dm = c[1].run("dmesg", timeout=60, check=True).out
    assert re.search(r"node 1: node 2 granted its ring .*: in sync", dm), dm
    lg = log_of(c[2])
    assert lg["first_lsn"] == 1 and lg["next_lsn"] == 7, lg
    assert append(c[1], "q-AFTER") == [7], "the failed LSN is reused"
    assert_same_logs(c, (1, 2))

    apply(c[3], text)
    wait_peers(c, [3])
    base, st = assert_same_logs(c)
    assert st["next_lsn"] == 8, st
    assert [r[2] for r in records(c[3])] == \
        ["q-1", "q-2", "q-3", "q-4", "q-5", "q-6", "q-AFTER"]
    assert_no_text(c, "q-FAILED")


def crossings(sizes, capacity):
    """How many records of a fresh log with these payload sizes cross the
    ring's end."""
    pos = n = 0
    for s in sizes:
        fp = footprint(s)
        n += pos // capacity != (pos + fp - 1) // capacity
        pos += fp
    return n


@test
def ring_wraps_with_trims(c):
    cap = 64 << 10
    up(c, cluster_file(capacity="64K", max_record="16K"))
    wait_effective(c[1], "quorum")
    h0 = health(c)
    rc, recs, summ, out = writer(c[1], "-n 300 -T -k 4 -p wrap")
    assert rc == 0, out[-2000:]
    assert [r[0] for r in recs] == list(range(1, 301)), out[-2000:]
    assert summ["bytes"] >= 5 * cap and summ["trims"] > 0, summ
    assert crossings([r[1] for r in recs], cap) >= 5
    base, st = assert_same_logs(c)
    assert st["first_lsn"] > 1 and st["next_lsn"] == 301, st
    assert base["count"] >= 4
    sizes = dict(recs)
    for h in base["hdrs"]:
        assert h["len"] == sizes[h["lsn"]], h
    assert_healthy(c, h0)


@test
def full_ring_backpressure(c):
    cap, size = 64 << 10, 4001
    up(c, cluster_file(capacity="64K", max_record="16K"))
    wait_effective(c[1], "quorum")
    rc, recs, summ, out = writer(c[1], f"-N -n 0 -S {size} -p full")
    n = len(recs)
    assert rc == 3 and "EAGAIN" in out, (rc, out[-1000:])
    assert [r[0] for r in recs] == list(range(1, n + 1)), out
    assert n * footprint(size) <= cap < (n + 1) * footprint(size), n
    lg = log_of(c[1])
    assert lg["used"] + footprint(size) > lg["capacity"], lg

    w0 = stats(c[1])["writer_waits"]
    job = c[1].spawn(f"{WRITER} -n 1 -S {size} -p blocked", timeout=600)
    try:
        wait_for(lambda: stats(c[1])["writer_waits"] > w0 or job.done(),
                 timeout=WAIT, interval=1, what="a writer waiting for space")
        assert not job.done(), ("the writer did not block", job.output())
        # a non-blocking writer is told EAGAIN meanwhile
        rc, _, _, out = writer(c[1], f"-N -n 1 -S {size} -p nb")
        assert rc == 3 and "EAGAIN" in out, (rc, out)
        assert log_of(c[1])["next_lsn"] == n + 1
        assert not job.done(), job.output()
        first = n // 2 + 1
        c[1].run(f"rdmalogctl log trim {first}", timeout=60, check=True)
        res = job.wait(WAIT)
    finally:
        if not job.done():
            job.kill()
    assert res.rc == 0 and f"{n + 1} {size}" in res.out, (res.rc, res.out)
    base, st = assert_same_logs(c)
    assert st["first_lsn"] == first and st["next_lsn"] == n + 2, st
    assert [h["lsn"] for h in base["hdrs"]] == list(range(first, n + 2))


@test
def old_log_timeout_leaves_the_next_up_period_alone(c):
    """A writer of the previous up period's log whose commit timed out
    removes its records only after the node went down and up again and
    the backups joined the new log (forced: the writer sleeps before the
    removal): the new period's replication is not rewound to the old
    log's end (it would WRITE again what the backups hold) and goes on
    without a dropped connection."""
    text = cluster_file(timeout=2000)
    up(c, text)
    wait_effective(c[1], "quorum")
    # the old log: 5 records of 700 bytes, committed; one more waits
    append(c[1], *[f"old-{i}-" + "o" * 700 for i in range(5)])
    wait_commit_everywhere(c, 6)
    for n in (2, 3):
        c[n].link(False)
    wait_for(lambda: all(peer_state(c[1], p) != "connected" for p in (2, 3)),
             timeout=WAIT, interval=0.5, what="node 1 lost both backups")
    rlnode.inject(c[1], "log_truncate", rlnode.scaled(15000))
    try:
        job = c[1].spawn("rdmalogcat -a doomed >/tmp/doomed.out 2>&1; "
                         "echo rc=$? >>/tmp/doomed.out")
        # its commit timeout (the guests': scaled) passes: it sleeps
        # before removing its record
        c[1].run(f"sleep {rlnode.scaled(2000) / 1000 + 1:.1f}", timeout=60)
        for n in (2, 3):
            c[n].link(True)
        up(c, text)
        wait_effective(c[1], "quorum")
        # the new log, more bytes than the old one held, in other sizes
        lsns = append(c[1], *[f"new-{i}-" + "n" * 100 for i in range(40)])
        assert lsns == list(range(1, 41)), lsns
        wait_commit_everywhere(c, 41)
        rlnode.wait_idle(c, (1, 2, 3), WAIT)
        before = health(c)
        sent = {p: rlnode.peers(c[1])[p]["bytes_sent"] for p in (2, 3)}
        wait_for(lambda: "rc=" in c[1].run("cat /tmp/doomed.out",
                                           timeout=60).out,
                 timeout=WAIT, interval=1, what="the old writer finished")
        job.kill()
        out = c[1].run("cat /tmp/doomed.out; sleep 2", timeout=60).out
        assert "rc=0" not in out, out
        # nothing new was appended: nothing more was written to anyone
        now = {p: rlnode.peers(c[1])[p]["bytes_sent"] for p in (2, 3)}
        assert now == sent, ("the new log's replication was rewound by "
                             "the old log's removal", sent, now)
        lsns = append(c[1], *[f"after-{i}-" + "a" * 300 for i in range(20)])
        assert lsns == list(range(41, 61)), lsns
        wait_commit_everywhere(c, 61)
    finally:
        rlnode.inject(c[1], "log_truncate", 0)
    # the old writer's own failure counts on node 1, nothing else
    after = health(c)
    after[1]["append_errors"] = before[1]["append_errors"]
    assert after == before, ("connections dropped or errors counted",
                             before, after)
    assert_same_logs(c)
    recs = records(c[1])
    assert [r[0] for r in recs] == list(range(1, 61)), recs[:3]
    assert all(r[2].startswith(("new-", "after-")) for r in recs), recs[:3]
