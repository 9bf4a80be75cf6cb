# SPDX-License-Identifier: GPL-2.0
"""Module and log lifecycle on one node, at the shell level: rmmod while
/dev/rdmalog is open, load/unload cycles without leaks, rdmalogctl's JSON
status, "rdmalogctl apply" of a one-node cluster file, rdmalogctl
printing the kernel's extack messages, and what rdmalogctl shows a user
without CAP_NET_ADMIN."""

import json
import re
import shlex
import time

from testlib import skip, test, wait_for

NODES = 1
TIMEOUT = 600

# A load/unload cycle may leave at most this much more behind, measured
# after a warm-up cycle and 20 more (a ring is 4 MiB, so even one leaked
# ring fails; so does a leak of ~6 KiB of slab per cycle). /proc/meminfo
# values are kB.
CYCLES = 20
RING = 4 << 20
SUNRECLAIM_TOLERANCE_KB = 128
VMALLOC_TOLERANCE_KB = 1024
KMALLOC_TOLERANCE_BYTES = 128 << 10


def rec_bytes(n):
    """Ring bytes a record of n payload bytes takes (48-byte header)."""
    return (48 + n + 7) & ~7


def reload(node):
    """A freshly loaded, unconfigured module."""
    node.run("rdmalogctl node down >/dev/null 2>&1; "
             "rmmod rdmalog 2>/dev/null; true", timeout=120)
    r = node.run("grep -w '^rdmalog' /proc/modules", timeout=30)
    assert r.rc != 0, "rdmalog still loaded: cannot start from scratch"
    node.run("modprobe rdmalog", timeout=120, check=True)


def configure_up(node, capacity="1M", max_record="64K", durability="async"):
    node.run(f"rdmalogctl log set capacity {capacity} max-record "
             f"{max_record} durability {durability} && "
             "rdmalogctl node set id 1 role primary && rdmalogctl node up",
             timeout=120, check=True)


def status(node):
    """rdmalogctl -j status, parsed on the host."""
    r = node.run("rdmalogctl -j status 2>/tmp/status.err", timeout=60)
    err = node.run("cat /tmp/status.err", timeout=30).out
    assert r.rc == 0, f"rdmalogctl -j status: rc={r.rc}: {r.out}{err}"
    try:
        return json.loads(r.out)
    except ValueError as e:
        raise AssertionError(f"rdmalogctl -j status is not JSON ({e}):\n"
                             f"{r.out!r}") from None


def loaded(node):
    return node.run("grep -w '^rdmalog' /proc/modules", timeout=30).rc == 0


def rmmod_eventually(node, seconds=20):
    """rmmod, retried while the last descriptor is being released."""
    deadline = time.monotonic() + seconds
    while True:
        r = node.run("rmmod rdmalog", timeout=60)
        if r.rc == 0:
            return r
        if time.monotonic() > deadline:
            raise AssertionError(f"rmmod rdmalog still fails {seconds}s "
                                 f"after the last close: {r.out}")
        time.sleep(1)


# ---------------------------------------------------------------- tests

@test(timeout=600)
def rmmod_refused_while_open(c):
    n = c[1]
    reload(n)
    configure_up(n)

    # 1. a shell holding the device open (fd 3 of a sleeping process)
    job = n.spawn("exec 3</dev/rdmalog; echo held; exec sleep 600",
                  timeout=600)
    try:
        wait_for(lambda: "held" in job.output() or job.done(), timeout=60,
                 what="the holder to open /dev/rdmalog")
        assert not job.done(), f"holder failed: {job.output()}"
        assert status(n)["log"]["openers"] == 1
        r = n.run("rmmod rdmalog", timeout=60)
        assert r.rc != 0, "rmmod succeeded with /dev/rdmalog open"
        assert re.search(r"in use|busy", r.out, re.I), r.out
        assert loaded(n), "module gone after a refused rmmod"
        # the log going down does not release the descriptor
        n.run("rdmalogctl node down", timeout=60, check=True)
        r = n.run("rmmod rdmalog", timeout=60)
        assert r.rc != 0, "rmmod succeeded with a descriptor of a log " \
            "that went down still open"
        assert loaded(n)
    finally:
        job.kill()
    res = job.wait(60)
    assert res.rc != 0     # killed
    rmmod_eventually(n)
    assert not loaded(n), "rdmalog still in /proc/modules after rmmod"

    # 2. a reader blocked on the empty log; down wakes it, then rmmod works
    n.run("modprobe rdmalog", timeout=120, check=True)
    configure_up(n)
    job = n.spawn("cat /dev/rdmalog >/dev/null; echo cat-rc=$?",
                  timeout=600)
    try:
        wait_for(lambda: status(n)["log"]["openers"] == 1 or job.done(),
                 timeout=60, what="cat to open /dev/rdmalog")
        assert not job.done(), f"cat did not block: {job.output()}"
        r = n.run("rmmod rdmalog", timeout=60)
        assert r.rc != 0, "rmmod succeeded under a blocked reader"
        t0 = time.monotonic()
        n.run("rdmalogctl node down", timeout=60, check=True)
        res = job.wait(60)
        took = time.monotonic() - t0
    finally:
        job.kill()
    assert "cat-rc=1" in res.out, f"cat after down: {res.out}"
    assert re.search(r"network is down", res.out, re.I), res.out
    assert took < 30, f"blocked reader took {took:.1f}s to see ENETDOWN"
    rmmod_eventually(n)
    assert not loaded(n)


CYCLE_SCRIPT = r"""
set -u
fail() { echo "FAIL: $*"; exit 1; }
meas() {
    awk '/^SUnreclaim:/ {s = $2} /^VmallocUsed:/ {v = $2}
         END {printf "sunreclaim_kb=%d vmalloc_kb=%d ", s, v}' /proc/meminfo
    awk 'NR > 2 && $1 ~ /^kmalloc-/ {t += $2 * $4}
         END {printf "kmalloc_bytes=%d\n", t}' /proc/slabinfo
}
# every cache shrunk too: its per-CPU slabs flushed, and on a KASAN kernel
# (make check-debug) the freed objects it holds in quarantine let go,
# which otherwise count as allocated (20 cycles: 488 KB of kmalloc-*)
settle() {
    sync; echo 3 > /proc/sys/vm/drop_caches
    for f in /sys/kernel/slab/*/shrink; do echo 1 > "$f"; done 2>/dev/null
    sleep 2
}
cycle() {
    modprobe rdmalog || fail "cycle $1: modprobe"
    rdmalogctl log set capacity RING max-record 64K durability async \
        >/dev/null || fail "cycle $1: log set"
    rdmalogctl node set id 1 cluster 7 address 198.18.0.1 role primary \
        failover manual >/dev/null || fail "cycle $1: node set"
    rdmalogctl peer add id 2 address 198.18.0.2 >/dev/null ||
        fail "cycle $1: peer add"
    rdmalogctl node up >/dev/null || fail "cycle $1: node up"
    for r in 1 2 3 4 5 6 7 8; do
        echo "record $r of cycle $1" > /dev/rdmalog ||
            fail "cycle $1: append $r"
    done
    rdmalogctl -j status | grep -q '"next_lsn":9' ||
        fail "cycle $1: next_lsn is not 9: $(rdmalogctl -j status)"
    dd if=/dev/rdmalog of=/dev/null bs=64k count=8 2>/dev/null ||
        fail "cycle $1: read back"
    rdmalogctl log trim 5 >/dev/null || fail "cycle $1: trim"
    rdmalogctl node down >/dev/null || fail "cycle $1: node down"
    rmmod rdmalog || fail "cycle $1: rmmod"
    grep -q '^rdmalog ' /proc/modules && fail "cycle $1: still loaded"
    return 0
}
cycle 0
settle
echo "BEFORE $(meas)"
n=1
while [ $n -le CYCLES ]; do cycle $n; n=$((n + 1)); done
settle
echo "AFTER $(meas)"
echo "SLABLINES $(grep -ci rdmalog /proc/slabinfo)"
echo "LSMOD $(lsmod | grep -c '^rdmalog')"
"""


def _meas(out, tag):
    m = re.search(rf"^{tag} sunreclaim_kb=(\d+) vmalloc_kb=(\d+) "
                  rf"kmalloc_bytes=(\d+)", out, re.M)
    assert m, f"no {tag} measurement in:\n{out}"
    return [int(x) for x in m.groups()]


@test(timeout=1200)
def load_unload_cycles_no_leak(c):
    n = c[1]
    n.run("rdmalogctl node down >/dev/null 2>&1; rmmod rdmalog 2>/dev/null;"
          " true", timeout=120)
    assert not loaded(n), "rdmalog cannot be unloaded to start with"
    script = CYCLE_SCRIPT.replace("RING", str(RING)).replace(
        "CYCLES", str(CYCLES))
    n.put(script, "/tmp/cycles.sh", mode=0o755)
    r = n.run("sh /tmp/cycles.sh", timeout=1000)
    assert r.rc == 0 and "FAIL" not in r.out, f"rc={r.rc}:\n{r.out}"
    s0, v0, k0 = _meas(r.out, "BEFORE")
    s1, v1, k1 = _meas(r.out, "AFTER")
    report = (f"after {CYCLES} cycles (one warm-up before): SUnreclaim "
              f"{s0} -> {s1} kB, VmallocUsed {v0} -> {v1} kB, kmalloc-* "
              f"{k0} -> {k1} bytes")
    print(f"# {report}")
    assert s1 - s0 <= SUNRECLAIM_TOLERANCE_KB, \
        f"SUnreclaim grew by {s1 - s0} kB (> {SUNRECLAIM_TOLERANCE_KB}): " \
        f"{report}"
    assert v1 - v0 <= VMALLOC_TOLERANCE_KB, \
        f"VmallocUsed grew by {v1 - v0} kB (> {VMALLOC_TOLERANCE_KB}): " \
        f"{report}"
    assert k1 - k0 <= KMALLOC_TOLERANCE_BYTES, \
        f"kmalloc-* slabs grew by {k1 - k0} bytes " \
        f"(> {KMALLOC_TOLERANCE_BYTES}): {report}"
    m = re.search(r"^SLABLINES (\d+)", r.out, re.M)
    assert m and m.group(1) == "0", \
        f"rdmalog caches left in /proc/slabinfo:\n{r.out}"
    m = re.search(r"^LSMOD (\d+)", r.out, re.M)
    assert m and m.group(1) == "0", f"rdmalog in lsmod:\n{r.out}"


@test
def status_json(c):
    n = c[1]
    reload(n)
    st = status(n)
    assert set(st) >= {"node", "log", "durability", "message", "peers"}, st
    assert st["log"]["up"] is False, st

    configure_up(n)
    n.run("printf a > /dev/rdmalog && printf bbbbbbbbbb > /dev/rdmalog && "
          "printf '%0100d' 0 > /dev/rdmalog", timeout=60, check=True)
    st = status(n)
    assert set(st["node"]) >= {"id", "cluster_id", "address", "port",
                               "role", "epoch"}, st["node"]
    assert set(st["log"]) >= {"up", "first_lsn", "commit_lsn", "next_lsn",
                              "capacity", "used", "max_record",
                              "openers"}, st["log"]
    assert set(st["durability"]) >= {"requested", "effective"}, st
    log = st["log"]
    assert log["up"] is True, st
    assert (log["first_lsn"], log["commit_lsn"], log["next_lsn"]) == \
        (1, 4, 4), log
    assert log["capacity"] == 1 << 20, log
    assert log["max_record"] == 64 << 10, log
    assert log["used"] == rec_bytes(1) + rec_bytes(10) + rec_bytes(100), log
    assert log["openers"] == 0, log
    assert st["node"]["id"] == 1, st["node"]
    assert st["node"]["role"] == "primary", st["node"]
    assert isinstance(st["node"]["epoch"], int) and st["node"]["epoch"] >= 1
    assert st["durability"] == {"requested": "async", "effective": "async",
                                "degraded": False, "backups_in_sync": 0,
                                "backups_needed": 0}, st["durability"]
    assert isinstance(st["peers"], list) and st["peers"] == [], st["peers"]

    # quorum with a peer that is not there: not in force, and says so
    n.run("rdmalogctl peer add id 2 address 198.18.0.2 && "
          "rdmalogctl log set durability quorum", timeout=60, check=True)
    st = status(n)
    assert st["durability"] == {"requested": "quorum", "effective": "async",
                                "degraded": True, "backups_in_sync": 0,
                                "backups_needed": 1}, st["durability"]
    assert re.search(r"needs 1 backup in sync, 0 are", st["message"]), \
        st["message"]
    assert len(st["peers"]) == 1, st["peers"]
    p = st["peers"][0]
    # added while up: the node tries to reach it (no peer VM exists here)
    assert (p["id"], p["address"], p["port"]) == (2, "198.18.0.2", 7471), p
    assert p["state"] in ("connecting", "disconnected"), p
    r = n.run("rdmalogctl status", timeout=60, check=True)
    assert re.search(r"needs 1 backup in sync", r.out), \
        f"rdmalogctl status does not say quorum is not in force:\n{r.out}"


CLUSTER_FILE = """\
# one-node cluster for the lifecycle suite
cluster 7
log capacity 1M max-record 64K durability async commit-timeout 2000
node 1 address 198.18.0.1 port 7471
primary 1
"""


@test
def apply_cluster_file(c):
    n = c[1]
    reload(n)
    n.put(CLUSTER_FILE, "/tmp/cluster.conf")
    r = n.run("rdmalogctl apply /tmp/cluster.conf", timeout=120)
    assert r.rc == 0, f"apply: rc={r.rc}\n{r.out}"
    assert "node up" in r.out, f"apply did not bring the log up:\n{r.out}"
    st = status(n)
    assert st["log"]["up"] is True, st
    assert st["node"]["id"] == 1 and st["node"]["cluster_id"] == 7, st
    assert st["node"]["address"] == "198.18.0.1", st["node"]
    assert st["node"]["role"] == "primary", st["node"]
    assert st["log"]["capacity"] == 1 << 20, st["log"]
    assert st["log"]["max_record"] == 64 << 10, st["log"]
    r = n.run("rdmalogctl -j log show 2>/dev/null", timeout=60, check=True)
    assert json.loads(r.out)["commit_timeout_ms"] == 2000, r.out
    epoch = st["node"]["epoch"]
    n.run("printf one > /dev/rdmalog && printf two > /dev/rdmalog",
          timeout=60, check=True)

    # again: nothing to do, the log (and its records) untouched
    r = n.run("rdmalogctl apply /tmp/cluster.conf", timeout=120)
    assert r.rc == 0, f"second apply: rc={r.rc}\n{r.out}"
    assert "already up to date" in r.out, r.out
    r = n.run("rdmalogctl -j apply /tmp/cluster.conf --node 1 "
              "2>/dev/null", timeout=120)
    assert r.rc == 0, r.out
    doc = json.loads(r.out)
    assert doc["changed"] is False and doc["actions"] == [], doc
    assert doc["node_id"] == 1, doc
    st = status(n)
    assert st["log"]["up"] is True
    assert st["log"]["next_lsn"] == 3, \
        f"the log was restarted by a no-op apply: {st['log']}"
    assert st["node"]["epoch"] == epoch, st["node"]


@test
def leadership_settings_are_kept_and_shown(c):
    """failover, priority and lead (who may stand in a leader change):
    defaults, set from a cluster file and by node set, shown in status
    and node show, refused out of range with the kernel's reason, and
    changeable while up without touching the log."""
    n = c[1]
    reload(n)
    node = status(n)["node"]
    assert (node["failover"], node["priority"], node["lead"]) == \
        ("auto", 0, True), node
    text = CLUSTER_FILE.replace("node 1 address 198.18.0.1",
                                "node 1 address 198.18.0.1 priority 7 "
                                "no-lead") + "failover manual\n"
    assert "priority 7" in text, text
    n.put(text, "/tmp/lead.conf")
    r = n.run("rdmalogctl apply /tmp/lead.conf", timeout=120)
    assert r.rc == 0, r.out
    assert "failover manual priority 7 lead no" in r.out, r.out
    st = status(n)
    assert st["log"]["up"] is True, st
    assert (st["node"]["failover"], st["node"]["priority"],
            st["node"]["lead"]) == ("manual", 7, False), st["node"]
    out = n.run("rdmalogctl status", timeout=60, check=True).out
    assert re.search(r"^failover +manual, priority 7, never leads$", out,
                     re.M), out
    out = n.run("rdmalogctl node show", timeout=60, check=True).out
    assert re.search(r"^priority +7$", out, re.M) and \
        re.search(r"^lead +no$", out, re.M), out
    r = n.run("rdmalogctl apply /tmp/lead.conf", timeout=120)
    assert r.rc == 0 and "already up to date" in r.out, r.out
    # while up, and the log goes on
    n.run("printf x > /dev/rdmalog", timeout=60, check=True)
    r = n.run("rdmalogctl node set priority 255 lead yes failover auto",
              timeout=60)
    assert r.rc == 0, r.out
    st = status(n)
    assert (st["node"]["failover"], st["node"]["priority"],
            st["node"]["lead"]) == ("auto", 255, True), st["node"]
    assert st["log"]["up"] is True and st["log"]["next_lsn"] == 2, st["log"]
    # the tool refuses bad values; so does the kernel, saying which
    r = n.run("rdmalogctl node set priority 256", timeout=60)
    assert r.rc != 0 and "0..255" in r.out, r.out
    r = n.run("printf 'cluster 7\\nnode 1 address 198.18.0.1 lead\\n"
              "primary 1\\n' | rdmalogctl apply --check -", timeout=60)
    assert r.rc != 0 and "'lead' needs a value" in r.out, r.out
    assert status(n)["node"]["priority"] == 255


@test
def errors_print_extack(c):
    n = c[1]
    reload(n)
    # the kernel refuses max_record > capacity / 4 (64M by default)
    r = n.run("rdmalogctl log set max-record 100M", timeout=60)
    assert r.rc == 1, f"rc={r.rc} (1: the kernel refused):\n{r.out}"
    assert re.search(r"max.?record|capacity", r.out, re.I), \
        f"no kernel message about max-record/capacity:\n{r.out}"
    assert re.search(r"^rdmalogctl: .*\S.* \(Invalid argument\)", r.out,
                     re.M), f"not 'rdmalogctl: what: message (error)':\n" \
        f"{r.out}"
    # nothing changed
    r = n.run("rdmalogctl -j log show 2>/dev/null", timeout=60, check=True)
    assert json.loads(r.out)["max_record"] == 1 << 20, r.out

    # up without a node id
    r = n.run("rdmalogctl node up", timeout=60)
    assert r.rc == 1, r.out
    assert re.search(r"node.?id|\bid\b", r.out, re.I), r.out

    # unknown peer: the kernel's message, ENOENT
    r = n.run("rdmalogctl peer del id 99", timeout=60)
    assert r.rc == 1, r.out
    m = re.search(r"^rdmalogctl: [^:]+: (.*) \(No such file or directory\)",
                  r.out, re.M)
    assert m and m.group(1).strip(), f"no extack message:\n{r.out}"

    # busy while up
    configure_up(n)
    r = n.run("rdmalogctl log set capacity 2M", timeout=60)
    assert r.rc == 1, r.out
    assert re.search(r"Device or resource busy", r.out), r.out
    assert re.search(r"down|up|capacity", r.out, re.I), r.out

    # EPERM adds a CAP_NET_ADMIN hint (busybox setpriv may be missing:
    # then run it as nobody through su)
    r = n.run("su -s /bin/sh nobody -c 'rdmalogctl node down' 2>&1",
              timeout=60)
    if "not found" not in r.out and "unknown user" not in r.out.lower():
        assert r.rc == 1, r.out
        assert "CAP_NET_ADMIN" in r.out, r.out
    assert status(n)["log"]["up"] is True


def as_nobody(node, cmd):
    """cmd run as uid 65534 with no capabilities (stdout and stderr)."""
    return node.run(f"su -s /bin/sh nobody -c {shlex.quote(cmd)} 2>&1",
                    timeout=60)


@test
def unprivileged_sees_no_cluster_id_or_addresses(c):
    """Without CAP_NET_ADMIN the kernel withholds the cluster id and every
    address and port: rdmalogctl shows "-" (text) and null (JSON) for them
    and everything else as root sees it; apply says it needs
    CAP_NET_ADMIN instead of planning from what it cannot see."""
    n = c[1]
    reload(n)
    n.run("rdmalogctl node set id 1 cluster 4242 address 198.18.0.1 "
          "role primary && "
          "rdmalogctl peer add id 2 address 198.18.0.2 port 7472 && "
          "rdmalogctl peer add id 3 address fd00::3 port 7473",
          timeout=60, check=True)
    r = as_nobody(n, "id -u")
    if r.rc != 0 or r.out.strip() != "65534":
        skip(f"cannot run a command as nobody: {r.out.strip()}")

    # root sees them
    st = status(n)
    assert st["node"]["cluster_id"] == 4242, st["node"]
    assert st["node"]["address"] == "198.18.0.1", st["node"]
    assert st["node"]["port"] == 7471, st["node"]
    assert sorted((p["id"], p["address"], p["port"]) for p in st["peers"]) \
        == [(2, "198.18.0.2", 7472), (3, "fd00::3", 7473)], st["peers"]

    hidden = ("4242", "198.18.0", "fd00::3", "7471", "7472", "7473",
              "0.0.0.0")
    for cmd in ("node show", "peer show", "status", "-j node show",
                "-j peer show", "-j status"):
        r = as_nobody(n, f"rdmalogctl {cmd}")
        assert r.rc == 0, f"{cmd} as nobody: rc={r.rc}\n{r.out}"
        for h in hidden:
            assert h not in r.out, f"{cmd} as nobody shows {h}:\n{r.out}"

    r = as_nobody(n, "rdmalogctl node show")
    assert re.search(r"^id +1$", r.out, re.M), r.out
    assert re.search(r"^role +primary$", r.out, re.M), r.out
    for key in ("cluster", "address", "port"):
        assert re.search(rf"^{key} +-$", r.out, re.M), (key, r.out)
    r = as_nobody(n, "rdmalogctl peer show")
    rows = [x.split() for x in r.out.splitlines()[1:]]
    assert sorted((x[0], x[1], x[2]) for x in rows) == \
        [("2", "-", "-"), ("3", "-", "-")], r.out

    node = json.loads(as_nobody(n, "rdmalogctl -j node show").out)
    assert node["id"] == 1 and node["role"] == "primary", node
    assert (node["cluster_id"], node["address"], node["port"]) == \
        (None, None, None), node
    peers = json.loads(as_nobody(n, "rdmalogctl -j peer show").out)
    assert sorted(p["id"] for p in peers) == [2, 3], peers
    for p in peers:
        assert p["address"] is None and p["port"] is None, p
        assert p["state"] == "configured", p
    st = json.loads(as_nobody(n, "rdmalogctl -j status").out)
    assert st["node"]["id"] == 1, st["node"]
    assert (st["node"]["cluster_id"], st["node"]["address"],
            st["node"]["port"]) == (None, None, None), st["node"]
    assert sorted(p["id"] for p in st["peers"]) == [2, 3], st["peers"]
    assert all(p["address"] is None and p["port"] is None
               for p in st["peers"]), st["peers"]

    n.put(CLUSTER_FILE, "/tmp/cluster.conf")
    for cmd in ("apply --dry-run /tmp/cluster.conf",
                "apply /tmp/cluster.conf"):
        r = as_nobody(n, f"rdmalogctl {cmd}")
        assert r.rc == 1, f"{cmd} as nobody: rc={r.rc}\n{r.out}"
        assert "CAP_NET_ADMIN" in r.out, r.out
    # nothing changed
    st = status(n)
    assert st["node"]["cluster_id"] == 4242 and st["log"]["up"] is False, st


@test(timeout=300)
def monitor_prints_events(c):
    """rdmalogctl -j monitor prints one JSON object per event, in order."""
    nd = c[1]
    reload(nd)
    nd.run("rdmalogctl log set capacity 1M max-record 64K durability async "
           "&& rdmalogctl node set id 1 role primary failover manual",
           timeout=60, check=True)
    job = nd.spawn("rdmalogctl -j monitor --count 5", timeout=240)
    # the subscription must be in place before the first change
    time.sleep(1)
    nd.run("rdmalogctl peer add id 2 address 198.18.0.2 && "
           "rdmalogctl node up && rdmalogcat -a one two three >/dev/null && "
           "rdmalogctl log trim 3 && rdmalogctl peer del id 2 && "
           "rdmalogctl node down", timeout=120, check=True)
    res = job.wait(180)
    assert res.ok, f"monitor rc={res.rc}: {res.out}"
    events = [json.loads(line) for line in res.out.splitlines() if line]
    kinds = [e["event"] for e in events]
    assert kinds == ["peer_added", "up", "trimmed", "peer_removed", "down"], \
        kinds
    assert events[0]["peer"]["id"] == 2, events[0]
    assert events[2]["first_lsn"] == 3, events[2]
    for e in events:
        assert e["node_id"] == 1, e
