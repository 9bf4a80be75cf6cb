# SPDX-License-Identifier: GPL-2.0
"""What an operator reaches for: rdmalogctl wait (each state, the timeout
and usage exit codes, waking on an event, the module going away),
monitor --now (the state as "exists" events, the separator, then a
change; -t), the DURABILITY event and status fields when a backup a
durability of "all" needs is cut off and comes back, each peer's sync
judgement (in sync, behind, refused with its reason), and apply --check /
--dry-run / a failed apply -j.

Three soft-RoCE nodes, node 1 primary. States are waited for with
rdmalogctl wait or polled; only the timeout test measures a clock.
"""

import json
import os
import re
import time

from testlib import test, wait_for
import rlnode
from rlnode import status, peers

NODES = 3
TIMEOUT = 900
WAIT = 180
# wait_under_event_storm's tries (make stress: RDMALOG_STORM_ITERS=200)
STORM_ITERS = int(os.environ.get("RDMALOG_STORM_ITERS", "40"))
CONF = "/etc/rdmalog.conf"

EXIT_USAGE, EXIT_NOMOD, EXIT_FILE, EXIT_TIMEOUT = 2, 3, 4, 5


def cluster_file(durability="quorum", capacity="1M"):
    return rlnode.cluster_file(durability=durability, capacity=capacity,
                               cluster=47)


def setup(c):
    for nd in c:
        nd.run("modprobe rdmalog", timeout=60, check=True)


def up(c, durability="quorum"):
    """A fresh log on every node; returns once the primary has the
    requested durability in force and replicates to both backups."""
    for nd in c:
        nd.run("rdmalogctl node down 2>/dev/null; true", timeout=120)
    for nd in c:
        rlnode.apply(nd, cluster_file(durability))
    rlnode.wait(c[1], "in-sync", WAIT)
    rlnode.wait(c[1], "durable", WAIT)


def ctl(nd, args, timeout=120):
    return nd.run(f"rdmalogctl {args}", timeout=timeout)


def json_lines(text):
    return [json.loads(x) for x in text.splitlines() if x.startswith("{")]


def cut(c, n):
    c[n].link(False)
    wait_for(lambda: rlnode.peer_state(c[1], n) != "connected",
             timeout=WAIT, interval=0.5, what=f"primary lost node {n}")


# ------------------------------------------------------------------ wait

@test
def wait_each_state(c):
    """wait up / connected [ID] / in-sync [ID] / durable return 0 once the
    state holds, and the state then holds in status."""
    up(c)
    for what in ("up", "connected", "connected 2", "connected 3",
                 "in-sync", "in-sync 3", "durable"):
        r = ctl(c[1], f"wait {what} --timeout {WAIT}", timeout=WAIT + 60)
        assert r.rc == 0, (what, r.rc, r.out)
    st = status(c[1])
    assert st["log"]["up"] is True, st
    assert st["durability"]["degraded"] is False, st
    ps = {p["id"]: p for p in st["peers"]}
    for b in (2, 3):
        assert ps[b]["state"] == "connected", ps[b]
        assert ps[b]["sync"] == "in_sync", ps[b]
    # a backup waits for its connections too
    r = ctl(c[2], f"wait connected 1 --timeout {WAIT}", timeout=WAIT + 60)
    assert r.rc == 0, r.out


@test
def wait_timeout_and_usage_codes(c):
    """A state that does not come: exit 5 after about the timeout; bad
    arguments: exit 2."""
    up(c)
    t0 = time.monotonic()
    r = ctl(c[1], "wait connected 9 --timeout 2")	# no peer 9
    took = time.monotonic() - t0
    assert r.rc == EXIT_TIMEOUT, (r.rc, r.out)
    assert "timed out" in r.out, r.out
    assert took >= 2, took
    for bad in ("wait", "wait sideways", "wait connected x",
                "wait up --timeout -1", "wait up --timeout soon",
                "wait up extra"):
        r = ctl(c[1], bad)
        assert r.rc == EXIT_USAGE, (bad, r.rc, r.out)


@test
def wait_under_event_storm(c):
    """wait joins its groups while events keep coming (a peer added and
    removed in a loop): it must still find them and return 0 every time,
    STORM_ITERS times. (It once joined the events group before looking up
    nlctrl's, and an event taken for the look-up's answer made it exit
    3.)"""
    up(c)
    nd = c[1]
    r = nd.run(f"""
        rm -f /tmp/storm.stop
        for p in 7 8 9; do
            ( while [ ! -e /tmp/storm.stop ]; do
                rdmalogctl peer add id $p address 198.18.0.$p >/dev/null 2>&1
                rdmalogctl peer del id $p >/dev/null 2>&1
              done ) &
        done
        bad=0
        for i in $(seq {STORM_ITERS}); do
            out=$(rdmalogctl wait up --timeout 30 2>&1); rc=$?
            [ $rc -eq 0 ] || {{ bad=$((bad + 1)); echo "try $i: rc $rc: $out"; }}
        done
        touch /tmp/storm.stop; wait
        for p in 7 8 9; do rdmalogctl peer del id $p >/dev/null 2>&1; done
        echo "failed $bad of {STORM_ITERS}"
    """, timeout=(WAIT + STORM_ITERS) * max(1.0, float(
        os.environ.get("RDMALOG_TIMEOUT_SCALE", "1") or 1)))
    assert r.rc == 0 and f"failed 0 of {STORM_ITERS}" in r.out, \
        r.out[-2000:]


@test
def wait_wakes_on_event(c):
    """wait started while the log is down returns 0 once apply brought the
    log up and the durability in force (events, not a timer), and exits 3
    when the module goes away meanwhile."""
    up(c)
    nd = c[1]
    nd.run("rdmalogctl node down", timeout=120, check=True)
    job = nd.spawn(f"rdmalogctl wait durable --timeout {WAIT} "
                   ">/tmp/wait.out 2>&1; echo rc=$? >>/tmp/wait.out")
    try:
        # still waiting: the log is down
        time.sleep(2)
        out = nd.run("cat /tmp/wait.out", timeout=60).out
        assert "rc=" not in out, out
        rlnode.apply(nd, cluster_file())
        wait_for(lambda: "rc=" in nd.run("cat /tmp/wait.out",
                                         timeout=60).out,
                 timeout=WAIT, interval=1, what="wait durable returned")
    finally:
        job.kill()
    out = nd.run("cat /tmp/wait.out", timeout=60).out
    assert "rc=0" in out, out

    # the module goes away under a waiting wait and a monitor
    b = c[3]
    b.run("rdmalogctl node down", timeout=120, check=True)
    b.run("rm -f /tmp/w3 /tmp/m3", timeout=60)
    w = b.spawn(f"rdmalogctl wait up --timeout {WAIT} >/tmp/w3 2>&1; "
                "echo rc=$? >>/tmp/w3")
    m = b.spawn(f"timeout {WAIT} rdmalogctl monitor >/tmp/m3 2>&1; "
                "echo rc=$? >>/tmp/m3")
    try:
        time.sleep(2)
        b.run("rmmod rdmalog", timeout=120, check=True)
        wait_for(lambda: all("rc=" in b.run(f"cat {f}", timeout=60).out
                             for f in ("/tmp/w3", "/tmp/m3")),
                 timeout=WAIT, interval=1,
                 what="wait and monitor exit after rmmod")
    finally:
        w.kill()
        m.kill()
        b.run("modprobe rdmalog", timeout=60, check=True)
    for f in ("/tmp/w3", "/tmp/m3"):
        out = b.run(f"cat {f}", timeout=60).out
        assert f"rc={EXIT_NOMOD}" in out, (f, out)
        assert "went away" in out, (f, out)


# --------------------------------------------------------------- monitor

@test
def monitor_now_dumps_then_follows(c):
    """monitor --now: an "exists" event for the node and each peer, the
    separator, then a change; -t stamps each line."""
    up(c)
    nd = c[1]
    nd.run("rm -f /tmp/now.json /tmp/now.txt", timeout=60)
    mj = nd.spawn(f"timeout {WAIT} rdmalogctl -j monitor --now "
                  ">/tmp/now.json 2>&1")
    mt = nd.spawn(f"timeout {WAIT} rdmalogctl -t monitor --now "
                  ">/tmp/now.txt 2>&1")
    try:
        wait_for(lambda: "exists_done" in nd.run("cat /tmp/now.json",
                                                 timeout=60).out and
                 "exists -" in nd.run("cat /tmp/now.txt", timeout=60).out,
                 timeout=WAIT, interval=1, what="both monitors dumped")
        nd.run("rdmalogctl peer add id 9 address 198.18.0.9 && "
               "rdmalogctl peer del id 9", timeout=120, check=True)
        wait_for(lambda: "peer_removed" in nd.run("cat /tmp/now.json",
                                                  timeout=60).out and
                 "peer_removed" in nd.run("cat /tmp/now.txt",
                                          timeout=60).out,
                 timeout=WAIT, interval=1, what="the change after the dump")
    finally:
        mj.kill()
        mt.kill()
    evs = json_lines(nd.run("cat /tmp/now.json", timeout=60).out)
    names = [e["event"] for e in evs]
    sep = names.index("exists_done")
    assert names[:sep] == ["exists"] * 3, names
    node = evs[0]
    assert node["node_id"] == 1 and node["up"] is True, node
    assert node["durability"] == "quorum", node
    assert node["durability_degraded"] is False, node
    assert "peer" not in node, node
    assert sorted(e["peer"]["id"] for e in evs[1:sep]) == [2, 3], evs
    for e in evs[1:sep]:
        assert e["peer"]["state"] == "connected", e
        assert e["peer"]["sync"] == "in_sync", e
    after = names[sep + 1:]
    assert "peer_added" in after and "peer_removed" in after, names
    assert "exists" not in after, names

    txt = nd.run("cat /tmp/now.txt", timeout=60).out.splitlines()
    stamp = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}[+-]\d{4} "
    assert re.match(stamp + r"exists log up node 1\b", txt[0]), txt
    i = next((k for k, x in enumerate(txt)
              if re.match(stamp + "exists -$", x)), None)
    assert i is not None, ("no separator line", txt)
    assert all(re.match(stamp + r"exists node 1 peer [23]\b.* sync in_sync",
                        x) for x in txt[1:i]), txt
    assert any(re.match(stamp + r"peer_added node 1 peer 9\b", x)
               for x in txt[i + 1:]), txt


@test
def monitor_now_dumps_again_after_lost_events(c):
    """A monitor --now that cannot keep up (stopped, with a tiny receive
    buffer) says events were lost and prints the state again, with its
    separator, before going on."""
    up(c)
    nd = c[1]
    old = nd.run("sysctl -n net.core.rmem_max", timeout=60,
                 check=True).out.strip()
    nd.run("rm -f /tmp/lost.json /tmp/lost.err /tmp/lost.pid", timeout=60)
    nd.run("sysctl -qw net.core.rmem_max=4096", timeout=60, check=True)
    job = nd.spawn("rdmalogctl -j monitor --now >/tmp/lost.json "
                   "2>/tmp/lost.err & echo $! >/tmp/lost.pid; wait",
                   timeout=TIMEOUT)
    try:
        wait_for(lambda: "exists_done" in nd.run("cat /tmp/lost.json",
                                                 timeout=60).out,
                 timeout=WAIT, interval=1, what="the first dump")
        pid = nd.run("cat /tmp/lost.pid", timeout=60, check=True).out.strip()
        nd.run(f"kill -STOP {pid}", timeout=60, check=True)
        nd.run("for i in $(seq 40); do rdmalogctl peer add id 9 address "
               "198.18.0.9 && rdmalogctl peer del id 9 || exit 1; done",
               timeout=600, check=True)
        nd.run(f"kill -CONT {pid}", timeout=60, check=True)
        wait_for(lambda: nd.run("cat /tmp/lost.json", timeout=60).out
                 .count("exists_done") >= 2,
                 timeout=WAIT, interval=1, what="a second dump")
    finally:
        nd.run(f"sysctl -qw net.core.rmem_max={old}; "
               "kill -CONT $(cat /tmp/lost.pid); "
               "kill $(cat /tmp/lost.pid)", timeout=60)
        job.kill()
    err = nd.run("cat /tmp/lost.err", timeout=60).out
    assert "events lost" in err, err
    evs = json_lines(nd.run("cat /tmp/lost.json", timeout=60).out)
    names = [e["event"] for e in evs]
    first = names.index("exists_done")
    second = names.index("exists_done", first + 1)
    # the second dump: the node, then its two peers (9 is gone again)
    dump = evs[second - 3:second]
    assert [e["event"] for e in dump] == ["exists"] * 3, names
    assert dump[0]["up"] is True and "peer" not in dump[0], dump
    assert sorted(e["peer"]["id"] for e in dump[1:]) == [2, 3], dump
    # fewer events than were sent made it: some were lost
    assert names.count("peer_added") < 40, names


# ------------------------------------------------------------ durability

@test
def durability_degraded_and_restored(c):
    """Durability all, node 3 cut off: a DURABILITY event (degraded, quorum
    in force, 1 of 2 backups), the same in status, peer 3 judged behind,
    wait durable times out; back: a DURABILITY event (restored), peer 3
    in sync again, wait durable returns 0."""
    up(c, durability="all")
    nd = c[1]
    nd.run("rm -f /tmp/dur.json", timeout=60)
    mon = nd.spawn(f"timeout {TIMEOUT} rdmalogctl -j monitor "
                   ">/tmp/dur.json 2>&1")

    seen = 0

    def durability_events():
        return [e for e in json_lines(nd.run("cat /tmp/dur.json",
                                             timeout=60).out)
                if e["event"] == "durability"][seen:]
    try:
        # the monitor is subscribed once it saw a peer event
        def subscribed():
            nd.run("rdmalogctl peer add id 9 address 198.18.0.9 && "
                   "rdmalogctl peer del id 9", timeout=120, check=True)
            return "peer_removed" in nd.run("cat /tmp/dur.json",
                                            timeout=60).out
        wait_for(subscribed, timeout=WAIT, interval=2,
                 what="monitor subscribed")
        # (peer 9 made "all" need 3 backups for a moment)
        r = ctl(nd, f"wait durable --timeout {WAIT}", timeout=WAIT + 60)
        assert r.rc == 0, r.out
        seen = len(durability_events())

        cut(c, 3)
        wait_for(lambda: any(e["durability_degraded"]
                             for e in durability_events()),
                 timeout=WAIT, interval=1, what="a degraded event")
        ev = [e for e in durability_events() if e["durability_degraded"]][0]
        assert ev["node_id"] == 1, ev
        assert ev["durability"] == "all", ev
        assert ev["durability_effective"] == "quorum", ev
        assert ev["backups_in_sync"] == 1 and ev["backups_needed"] == 2, ev

        st = status(nd)
        d = st["durability"]
        assert d["requested"] == "all" and d["effective"] == "quorum", d
        assert d["degraded"] is True, d
        assert d["backups_in_sync"] == 1 and d["backups_needed"] == 2, d
        ps = {p["id"]: p for p in st["peers"]}
        assert ps[3]["sync"] == "behind", ps[3]
        assert ps[2]["sync"] == "in_sync", ps[2]
        txt = ctl(nd, "status").out
        assert re.search(r"^durability\s+all \(effective: quorum\) degraded,"
                         r" 1 of 2 backups in sync$", txt, re.M), txt
        r = ctl(nd, "wait durable --timeout 2")
        assert r.rc == EXIT_TIMEOUT, (r.rc, r.out)

        c[3].link(True)
        r = ctl(nd, f"wait durable --timeout {WAIT}", timeout=WAIT + 60)
        assert r.rc == 0, r.out
        wait_for(lambda: any(not e["durability_degraded"]
                             for e in durability_events()),
                 timeout=WAIT, interval=1, what="a restored event")
    finally:
        mon.kill()
        c[3].link(True)
    evs = durability_events()
    # degraded first, restored last, nothing else in between but repeats
    assert evs[0]["durability_degraded"] is True, evs
    last = evs[-1]
    assert last["durability_degraded"] is False, evs
    assert last["durability_effective"] == "all", last
    assert last["backups_in_sync"] == 2, last
    ps = peers(nd)
    assert ps[3]["sync"] == "in_sync" and ps[3]["replicating"], ps[3]
    assert status(nd)["durability"]["degraded"] is False


@test
def refused_peer_has_a_reason(c):
    """Node 3 with another ring capacity: both sides judge the other
    refused, with the reason "capacity", in status and in PEER_STATE."""
    up(c)
    b = c[3]
    b.run("rdmalogctl node down", timeout=120, check=True)
    rlnode.apply(b, cluster_file(capacity="2M"))

    def refused():
        p = peers(c[1])[3]
        return p["state"] == "refused" and p
    p = wait_for(refused, timeout=WAIT, interval=1,
                 what="node 1 sees node 3 refused")
    assert p["sync"] == "refused", p
    assert p["refusal"] == "capacity", p
    p = wait_for(lambda: peers(b)[1]["state"] == "refused" and peers(b)[1],
                 timeout=WAIT, interval=1, what="node 3 refuses node 1")
    assert p["sync"] == "refused" and p["refusal"] == "capacity", p
    # a peer that is not refused carries no reason
    assert peers(c[1])[2]["refusal"] is None, peers(c[1])[2]
    txt = ctl(c[1], "-j peer show id 3").out
    assert json.loads(txt)[0]["refusal"] == "capacity", txt
    b.run("rdmalogctl node down", timeout=120, check=True)
    rlnode.apply(b, cluster_file())
    r = ctl(c[1], f"wait in-sync 3 --timeout {WAIT}", timeout=WAIT + 60)
    assert r.rc == 0, r.out


# ----------------------------------------------------------------- apply

@test
def apply_check_dry_run_and_failed_json(c):
    """apply --check parses only; --dry-run marks what the kernel refuses
    while up and exits 1; a real apply -j that fails reports what it did,
    what failed and why."""
    up(c)
    nd = c[1]
    nd.put(cluster_file(), "/tmp/good.conf")
    nd.put("cluster 47\nnode 1 address 198.18.0.1\nnode 1 address "
           "198.18.0.2\nprimary 1\n", "/tmp/bad.conf")
    r = ctl(nd, "apply --check /tmp/good.conf")
    assert r.rc == 0, r.out
    assert "ok: cluster 47, 3 nodes, primary 1" in r.out, r.out
    r = ctl(nd, "-j apply --check /tmp/good.conf")
    assert r.rc == 0 and json.loads(r.out)["ok"] is True, r.out
    r = ctl(nd, "apply --check /tmp/bad.conf")
    assert r.rc == EXIT_FILE, r.out
    assert "/tmp/bad.conf:3" in r.out, r.out
    r = ctl(nd, "apply --check --dry-run /tmp/good.conf")
    assert r.rc == EXIT_USAGE, r.out

    # the node is up to date: a dry run changes and refuses nothing
    r = ctl(nd, "apply --dry-run /tmp/good.conf")
    assert r.rc == 0 and "nothing to do" in r.out, r.out

    # a live change (heartbeat) and one refused while up (capacity)
    text = cluster_file(capacity="2M").replace("heartbeat 250",
                                               "heartbeat 300")
    nd.put(text, "/tmp/change.conf")
    r = ctl(nd, "apply --dry-run /tmp/change.conf")
    assert r.rc == 1, (r.rc, r.out)
    lines = r.out.splitlines()
    hb = [x for x in lines if x.startswith("node set")]
    cap = [x for x in lines if x.startswith("log set")]
    assert hb == ["node set heartbeat 300"], lines
    assert len(cap) == 1 and "capacity 2M" in cap[0], lines
    assert cap[0].endswith("# refused while the log is up: needs "
                           "'node down'"), cap
    r = ctl(nd, "-j apply --dry-run /tmp/change.conf 2>/dev/null")
    assert r.rc == 1, r.out
    doc = json.loads(r.out)
    assert doc["would_fail"] is True, doc
    assert doc["refused"] == [a for a in doc["actions"]
                              if a.startswith("log set")], doc
    # the dry run changed nothing
    assert status(nd)["node"]["heartbeat_ms"] == 250

    r = ctl(nd, "-j apply /tmp/change.conf 2>/tmp/err")
    assert r.rc == 1, (r.rc, r.out)
    doc = json.loads(r.out)
    assert doc["actions"] == ["node set heartbeat 300"], doc
    assert doc["changed"] is True, doc
    assert doc["failed"].startswith("log set") and \
        "capacity 2M" in doc["failed"], doc
    assert doc["error"]["errno"] == 16, doc	# EBUSY
    assert "while the log is up" in doc["error"]["message"], doc
    err = nd.run("cat /tmp/err", timeout=60).out
    assert "Device or resource busy" in err, err
    assert status(nd)["node"]["heartbeat_ms"] == 300
    rlnode.apply(nd, cluster_file())
