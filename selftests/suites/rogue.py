# SPDX-License-Identifier: GPL-2.0
"""A rogue primary: remote access to a backup's ring is least-privilege.

Three soft-RoCE nodes, node 1 primary, quorum. After a few records are
replicated, node 1 drops node 2 (peer del: node 1 keeps its log, so node 2
can rejoin in sync afterwards), and build/selftests/rogue_peer, run on node
1's VM with node 1's address and node id, speaks the wire protocol to node
2 as its primary: node 2 grants it its ring (RING) and then

  * a WRITE of a few bytes inside the ring above node 2's head succeeds,
  * a WRITE just past the end of the ring, same rkey, fails at the NIC,
  * a READ of the ring fails (the grant is REMOTE_WRITE only),
  * a WRITE with the previous connection's rkey fails.

Node 2 must come out of it healthy: the same committed records, the
connection to node 1 gone with a message, no kernel problem (the runner
checks every console), and once node 1 takes it back (apply the cluster
file again) a new record commits and reaches it. States are polled.
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
CLUSTER = 45
CAPACITY = 1 << 20
ROGUE = "/usr/lib/rdmalog/selftests/rogue_peer"


def cluster_file():
    return rlnode.cluster_file(cluster=CLUSTER)


def peer(nd, pid):
    return {p["id"]: p for p in status(nd)["peers"]}[pid]


def wait_connected(c, n, nodes=(1, 2, 3)):
    wait_for(lambda: all(p["state"] == "connected"
                         for p in status(c[n])["peers"] if p["id"] in nodes),
             timeout=WAIT, interval=2, what=f"node {n} connected to {nodes}")


def wait_commit(c, lsn, nodes=(1, 2, 3)):
    wait_for(lambda: all(status(c[n])["log"]["commit_lsn"] >= lsn
                         for n in nodes),
             timeout=WAIT, interval=1,
             what=f"commit LSN {lsn} on nodes {nodes}")


def append(nd, lines):
    r = nd.run(f"printf '{''.join(x + chr(92) + 'n' for x in lines)}' | "
               "rdmalogcat -a", timeout=300, check=True)
    return [int(x) for x in r.out.split()]


def rogue_result(out):
    lines = [x for x in out.splitlines() if x.startswith("{")]
    assert lines, f"rogue_peer printed no JSON summary:\n{out}"
    return json.loads(lines[-1])


def setup(c):
    for nd in c:
        nd.run("modprobe rdmalog", timeout=60, check=True)


@test
def rogue_primary_cannot_escape_the_ring(c):
    text = cluster_file()
    for nd in c:
        nd.run("rdmalogctl node down 2>/dev/null; true", timeout=120)
    for nd in c:
        nd.put(text, CONF)
        nd.run(f"rdmalogctl apply {CONF}", timeout=120, check=True)
    wait_connected(c, 1)
    wait_for(lambda: status(c[1])["durability"]["effective"] == "quorum",
             timeout=WAIT, interval=2, what="quorum in force")

    lsns = append(c[1], [f"before-rogue-{i}" for i in range(1, 6)])
    assert lsns == [1, 2, 3, 4, 5], lsns
    wait_commit(c, 6)
    base = records(c[1])
    assert len(base) == 5, base
    assert records(c[2]) == base, records(c[2])
    log2 = status(c[2])["log"]

    # node 2 loses its primary and waits for node 1 to connect again
    c[2].run("dmesg -c >/dev/null", timeout=60, check=True)
    c[1].run("rdmalogctl peer del id 2", timeout=120, check=True)
    wait_for(lambda: peer(c[2], 1)["state"] != "connected",
             timeout=WAIT, interval=1, what="node 2 lost node 1")

    r = c[1].run(f"{ROGUE} -a 198.18.0.2 -n 1 -d 2 -c {CLUSTER} "
                 f"-C {CAPACITY}", timeout=600)
    print(r.out)
    res = rogue_result(r.out)
    assert res["inside"] == "IBV_WC_SUCCESS", res
    for k in ("past_end", "read"):
        assert res.get(k, "").startswith("IBV_WC_REM_"), (k, res)
    assert res.get("stale", "").startswith("IBV_WC_REM_") or \
        res.get("stale") == "skip", res
    assert r.rc == 0 and res["pass"], (r.rc, res)

    # node 2 is healthy: the connection is gone and says why
    def dropped():
        p = peer(c[2], 1)
        return p["state"] != "connected" and p.get("msg") and p
    p = wait_for(dropped, timeout=WAIT, interval=1,
                 what="node 2 dropped the rogue connection with a message")
    print(f"node 2's peer 1 after the rogue: {p['state']}: {p['msg']}")
    st2 = status(c[2])
    assert st2["node"]["role"] == "backup", st2
    for k in ("first_lsn", "commit_lsn", "next_lsn"):
        assert st2["log"][k] == log2[k], (k, st2["log"], log2)
    assert records(c[2]) == base, records(c[2])
    d = c[2].run("dmesg", timeout=60, check=True).out
    print("node 2 kernel log during the rogue session:\n" + d)
    assert not re.search(r"Oops|WARNING:|BUG:|general protection", d), d

    # node 1 takes node 2 back: it rejoins in sync and replicates again
    c[1].run(f"rdmalogctl apply {CONF}", timeout=120, check=True)
    wait_connected(c, 1)
    wait_connected(c, 2, nodes=(1,))
    lsns = append(c[1], ["after-rogue"])
    assert lsns == [6], lsns
    wait_commit(c, 7)
    want = records(c[1])
    assert len(want) == 6 and want[:5] == base, want
    wait_for(lambda: records(c[2]) == want, timeout=WAIT, interval=1,
             what="node 2 holds the new record")
    assert records(c[3]) == want, records(c[3])


@test
def grant_is_limited_to_its_connection(c):
    """proto.h: every rkey of a RING grants REMOTE_WRITE "to this
    connection's queue pair only". A rogue node 1 holds node 2's grant
    while a rogue node 3 (node 2 connects to it: 2 < 3) writes to the
    granted bytes with that rkey over its own connection with node 2,
    which was granted nothing: that WRITE must fail."""
    text = cluster_file()
    for nd in c:
        if not status(nd)["log"]["up"]:
            nd.put(text, CONF)
            nd.run(f"rdmalogctl apply {CONF}", timeout=120, check=True)
    wait_connected(c, 1)
    wait_connected(c, 2)
    base = records(c[2])
    log2 = status(c[2])["log"]

    # node 3's real node goes away (its port is the rogue's), node 1
    # drops nodes 2 and 3: node 2 waits for node 1 and keeps calling node 3
    c[3].run("rdmalogctl node down", timeout=120, check=True)
    # node 1 must not call the rogue node 3 either (1 < 3 connects)
    c[1].run("rdmalogctl peer del id 2 && rdmalogctl peer del id 3",
             timeout=120, check=True)
    wait_for(lambda: peer(c[2], 1)["state"] != "connected" and
             peer(c[2], 3)["state"] != "connected",
             timeout=WAIT, interval=1, what="node 2 lost nodes 1 and 3")

    holder = c[1].spawn(f"{ROGUE} -a 198.18.0.2 -n 1 -d 2 -c {CLUSTER} "
                        f"-C {CAPACITY} --no-read --no-stale --hold 60000",
                        timeout=300)
    m = wait_for(lambda: re.search(r"GRANT addr (0x[0-9a-f]+) rkey "
                                   r"(0x[0-9a-f]+)", holder.output()),
                 timeout=WAIT, interval=1, what="node 2's grant to node 1")
    r = c[3].run(f"{ROGUE} --listen -a 198.18.0.3 -n 3 -d 2 -c {CLUSTER} "
                 f"-C {CAPACITY} --cross-addr {m.group(1)} "
                 f"--cross-rkey {m.group(2)}", timeout=120)
    print(r.out)
    holder.wait(300)
    print(holder.output())
    cross = rogue_result(r.out)

    # whatever happened, node 2 must be fine and take its peers back
    for n in (1, 3):
        c[n].put(text, CONF)
        c[n].run(f"rdmalogctl apply {CONF}", timeout=120, check=True)
    wait_connected(c, 1)
    wait_connected(c, 2)
    assert records(c[2])[:len(base)] == base
    assert status(c[2])["log"]["first_lsn"] == log2["first_lsn"]

    assert cross.get("cross", "").startswith("IBV_WC_REM_"), \
        ("node 3's connection to node 2 wrote into the ring node 2 granted "
         f"to node 1: {cross}")
    assert r.rc == 0, r.out
