# SPDX-License-Identifier: GPL-2.0
"""What the suites ask of a node: its status, stats and log, and a cluster
file to configure it with (rdmalogctl apply). Shared by the multi-VM suites
so that they read the same JSON the same way."""

import json

from testlib import TIMEOUT_SCALE, wait_for

CONF = "/etc/rdmalog.conf"


# Kernel command line of the guests of the suites whose bugs are
# lifetime races and ring DMA (catchup, datapath; testing.rst "Guests"):
# SLUB poisons freed objects, and swiotlb bounces what uses the DMA API.
DEBUG_APPEND = "slub_debug=FZP init_on_free=1 swiotlb=force"


def scaled(ms):
    """A timer of a cluster file as the guests get it: times TIMEOUT_SCALE
    (make check-debug), else as it is."""
    return int(ms * TIMEOUT_SCALE)


def cluster_file(capacity="1M", durability="quorum", max_record="64K",
                 timeout=3000, nodes=(1, 2, 3), *, cluster=44, primary=1,
                 heartbeat=250, peer_timeout=5000, addr="198.18.0.{}",
                 scale=True, failover="manual"):
    """A cluster file: node N at addr.format(N), `primary` the primary.
    Leader change is by hand only (failover manual) unless failover="auto":
    the suites that take a primary down expect its backups to wait.
    The commit and peer timeouts are times TIMEOUT_SCALE (make
    check-debug): a slow kernel must not look like a dead peer. A caller
    that times faults or bounds by its timers scales them itself (see
    scaled()) and passes scale=False."""
    if scale:
        timeout = scaled(timeout)
        peer_timeout = scaled(peer_timeout)
    return (f"cluster {cluster}\n"
            f"log capacity {capacity} max-record {max_record} "
            f"durability {durability} commit-timeout {timeout}\n"
            f"timers heartbeat {heartbeat} peer-timeout {peer_timeout}\n"
            + "".join(f"node {i} address {addr.format(i)}\n" for i in nodes)
            + f"primary {primary}\nfailover {failover}\n")


def apply(nd, text, conf=CONF):
    nd.put(text, conf)
    nd.run(f"rdmalogctl apply {conf}", timeout=120, check=True)


def wait(nd, what, timeout=180):
    """`rdmalogctl wait WHAT` on nd (up, connected [ID], in-sync [ID],
    durable): follows the events rather than polling; raises
    AssertionError with its output unless the state came in time."""
    timeout = int(timeout * TIMEOUT_SCALE)
    r = nd.run(f"rdmalogctl wait {what} --timeout {timeout}",
               timeout=timeout + 60)
    if r.rc != 0:
        raise AssertionError(f"{nd.name}: wait {what}: rc {r.rc}"
                             f"{' (timeout)' if r.rc == 5 else ''}: {r.out}")


def inject(nd, point, ms):
    """Set the module's test-only delay point inject_<point>_ms on nd
    (kmod/inject.h, Documentation/testing.rst "Delay points")."""
    nd.run(f"echo {ms} > /sys/module/rdmalog/parameters/inject_{point}_ms",
           timeout=60, check=True)


def status(nd):
    return json.loads(nd.run("rdmalogctl -j status", timeout=60,
                             check=True).out)


def wait_learned(c, nodes=None, timeout=180):
    """Until every node of c (or those of nodes) may vote: after its
    module was loaded, a node counts what it hears only once every
    candidacy that may count a vote it cast before has ended (three peer
    timeouts and two seconds after it came up), then needs a majority of
    its peers (Documentation/leader-change.rst, "Terms")."""
    for nd in (c if nodes is None else [c[n] for n in nodes]):
        wait_for(lambda: status(nd)["election"]["learned"] is True,
                 timeout=timeout * TIMEOUT_SCALE, interval=1,
                 what=f"{nd.name} may vote")


def stats(nd):
    return json.loads(nd.run("rdmalogctl -j stats", timeout=60,
                             check=True).out)


def peers(nd):
    """{peer id: its entry of `rdmalogctl -j status`}"""
    return {p["id"]: p for p in status(nd)["peers"]}


def records(nd):
    """[(lsn, len, payload text)] of every committed record of nd."""
    out = nd.run("rdmalogcat -j", timeout=300, check=True).out
    return [(r["lsn"], r.get("len"), r.get("data"))
            for r in map(json.loads, out.splitlines())]


def same_log(c, nodes=(2, 3), of=1):
    """Assert that every node of nodes holds the same committed records
    as node of (rdmalogcat -j, byte for byte); return that text."""
    base = c[of].run("rdmalogcat -j", timeout=120, check=True).out
    for n in nodes:
        assert c[n].run("rdmalogcat -j", timeout=120,
                        check=True).out == base, n
    return base


def log_of(nd):
    st = status(nd)
    return st["log"]


def peer_state(nd, peer):
    for p in status(nd)["peers"]:
        if p["id"] == peer:
            return p["state"]
    return None


def dump(nd):
    """Every retained committed record of nd, headers and payloads.

    Returns {"sha": sha256 of "rdmalogcat -j -H", "hdrs": [header dicts
    without the payload], "count": n}; the payloads stay in the guest
    (only their hash and CRCs travel).
    """
    r = nd.run("rdmalogcat -j -H > /tmp/dump.json && "
               "sha256sum < /tmp/dump.json && "
               "sed 's/,\"data\":.*/}/' /tmp/dump.json",
               timeout=300, check=True)
    lines = r.out.splitlines()
    sha = lines[0].split()[0]
    hdrs = [json.loads(x) for x in lines[1:] if x.strip()]
    return {"sha": sha, "hdrs": hdrs, "count": len(hdrs)}


def assert_gapless(d, first, upto, who):
    lsns = [h["lsn"] for h in d["hdrs"]]
    assert lsns == list(range(first, upto)), \
        (who, f"LSNs {lsns[:3]}..{lsns[-3:]} ({len(lsns)}), "
              f"expected {first}..{upto - 1}")


def assert_same_logs(c, nodes=(1, 2, 3), timeout=180):
    """Logs of nodes equal to node 1's (idle: commit and first equal
    everywhere first); returns node 1's dump and log state."""
    st = wait_idle(c, nodes, timeout)
    base = dump(c[nodes[0]])
    assert_gapless(base, st["first_lsn"], st["commit_lsn"], c[nodes[0]].name)
    for n in nodes[1:]:
        d = dump(c[n])
        if d["sha"] != base["sha"]:
            diff = [(a, b) for a, b in zip(base["hdrs"], d["hdrs"]) if a != b]
            raise AssertionError(
                f"node{n}'s log differs from node{nodes[0]}'s: "
                f"{d['count']} vs {base['count']} records, first "
                f"differences {diff[:3]}")
    return base, st


def wait_idle(c, nodes=(1, 2, 3), timeout=180):
    """Wait until every node's commit LSN is the primary's next LSN and
    every node retains from the same first LSN; return that log state."""
    box = {}

    def idle():
        logs = [log_of(c[n]) for n in nodes]
        box["logs"] = logs
        p = logs[0]
        return p["commit_lsn"] == p["next_lsn"] and all(
            lg["commit_lsn"] == p["commit_lsn"] and
            lg["first_lsn"] == p["first_lsn"] for lg in logs) and p
    try:
        return wait_for(idle, timeout=timeout, interval=1,
                        what=f"commit and first LSN equal on {nodes}")
    except AssertionError as e:
        raise AssertionError(f"{e}; last states "
                             f"{[(lg['first_lsn'], lg['commit_lsn'], lg['next_lsn']) for lg in box.get('logs', [])]}")
