# SPDX-License-Identifier: GPL-2.0
"""The connection layer: rdma_cm connections between three soft-RoCE nodes.

Every node listens, the smaller node id connects to the larger, heartbeats
detect dead peers, the connecting side reconnects, handshakes are refused
with a reason both sides can see, RDMA device removal and module unload
are clean. States are read with 'rdmalogctl -j status' and polled: nothing
here depends on how fast TCG runs, only on things happening eventually.
"""

import json
import re
import time

import testlib
from testlib import test, wait_for
import rlnode
from rlnode import peers, stats, status

NODES = 3
TIMEOUT = 600


def cluster_file(cluster=42, capacity="1M", nodes=(1, 2, 3),
                 addr="198.18.0.{}"):
    # wider timers than the defaults (100 ms / 1 s): TCG VMs on a shared
    # host stall for hundreds of milliseconds
    return rlnode.cluster_file(capacity, "async", nodes=nodes,
                               cluster=cluster, addr=addr)


BASE = cluster_file()
CONF = "/etc/rdmalog.conf"
# How long to wait for a connection state to show (TCG: generous).
WAIT = 180


def apply(nd, text):
    """Make nd match the cluster file text (down first if it must)."""
    nd.put(text, CONF)
    r = nd.run("lsmod | grep -qw '^rdmalog' || modprobe rdmalog; "
               f"rdmalogctl apply {CONF} 2>&1 || "
               f"{{ rdmalogctl node down; rdmalogctl apply {CONF}; }}",
               timeout=120)
    assert r.rc == 0, f"{nd.name}: apply failed (rc {r.rc}):\n{r.out}"


def describe(c, nodes=None):
    out = []
    for nd in c:
        if nodes and nd.index not in nodes:
            continue
        try:
            ps = peers(nd)
        except Exception as e:      # noqa: BLE001 (diagnostics only)
            out.append(f"{nd.name}: {e}")
            continue
        out.append(f"{nd.name}: " + ", ".join(
            f"{i}={p['state']}({p['msg']!r})" for i, p in sorted(ps.items())))
    return "\n".join(out)


def wait_states(c, want, timeout=WAIT):
    """want: {node index: {peer id: state or (state, msg regex)}}."""
    def ok():
        for n, exp in want.items():
            ps = peers(c[n])
            for pid, st in exp.items():
                if pid not in ps:
                    return False
                state, rx = st if isinstance(st, tuple) else (st, None)
                if ps[pid]["state"] != state:
                    return False
                if rx and not re.search(rx, ps[pid]["msg"] or "", re.I):
                    return False
        return True
    try:
        wait_for(ok, timeout=timeout, interval=2, what=f"states {want}")
    except AssertionError as e:
        raise AssertionError(f"{e}\n{describe(c)}") from None


def all_connected(ids=(1, 2, 3)):
    return {n: {p: "connected" for p in ids if p != n} for n in ids}


def baseline(c):
    """Every node up with BASE and connected to the two others."""
    for nd in c:
        apply(nd, BASE)
    wait_states(c, all_connected())


def setup(c):
    for nd in c:
        nd.run("modprobe rdmalog", timeout=60, check=True)


@test
def all_peers_connect(c):
    baseline(c)
    for nd in c:
        st = status(nd)
        assert st["node"]["heartbeat_ms"] == 250, st["node"]
        assert st["node"]["peer_timeout_ms"] == \
            int(5000 * testlib.TIMEOUT_SCALE), st["node"]
        for p in st["peers"]:
            assert set(p) >= {"id", "address", "port", "state", "msg",
                              "reconnects", "refusals", "last_rx_ms",
                              "epoch", "first_lsn", "commit_lsn",
                              "next_lsn"}, p
            assert p["msg"] == "", p
    # heartbeats flow both ways: the counters move, the last message is
    # recent (seconds, not minutes, even under TCG)
    before = stats(c[1])
    wait_for(lambda: stats(c[1])["msgs_received"] >
             before["msgs_received"] + 5, timeout=WAIT, interval=2,
             what="heartbeats received on node1")
    assert stats(c[1])["bad_msgs"] == 0
    # the peers' log positions arrive with the heartbeats (appended on
    # the primary: a backup's write() is forwarded there)
    r = c[1].run("rdmalogcat -a one two", timeout=60, check=True)
    nxt = int(r.out.split()[-1]) + 1
    for n in (2, 3):
        wait_for(lambda: peers(c[n])[1]["next_lsn"] == nxt, timeout=WAIT,
                 interval=2, what=f"node{n} sees node1's next LSN {nxt}")
    r = c[1].run("rdmalogctl status", timeout=60, check=True)
    assert re.search(r"^\s+2\s+198\.18\.0\.2\s+7471\s+connected", r.out,
                     re.M), r.out


@test(timeout=900)
def heartbeat_detects_dead_peer(c):
    baseline(c)
    before = {n: peers(c[n])[3]["reconnects"] for n in (1, 2)}
    c[3].kill()
    wait_states(c, {1: {2: "connected", 3: "disconnected"},
                    2: {1: "connected", 3: "disconnected"}})
    # no CM event arrives from a dead VM: a timeout noticed it
    noticed = sum(stats(c[n])["heartbeat_timeouts"] +
                  stats(c[n])["completion_errors"] for n in (1, 2))
    assert noticed >= 1, "neither a peer timeout nor a transport error?"
    c[3].boot()
    apply(c[3], BASE)
    wait_states(c, all_connected())
    for n in (1, 2):
        p = peers(c[n])[3]
        assert p["reconnects"] > before[n], (c[n].name, before[n], p)


@test(timeout=900)
def qp_error_alone_ends_the_connection(c):
    """A QP that goes to the error state without a close of ours (rxe puts
    it there when a local operation fails) flushes its work requests: the
    flushes alone end the connection on this side, and it comes back. The
    peer timeout is a minute, so without that only a minute of silence
    would end it."""
    text = rlnode.cluster_file("1M", "async", cluster=42,
                               peer_timeout=60000)
    for nd in c:
        apply(nd, text)
    wait_states(c, all_connected())
    hb = {n: stats(c[n])["heartbeat_timeouts"] for n in (1, 2, 3)}
    rec = sum(p["reconnects"] for p in peers(c[1]).values())
    param = "/sys/module/rdmalog/parameters/inject_qp_error"
    c[1].run(f"echo 1 > {param}", timeout=30, check=True)
    wait_for(lambda: "work requests flushed" in c[1].console_text(),
             timeout=45, interval=1, what="node1 ends the connection "
             "whose QP went to error")
    assert c[1].run(f"cat {param}", timeout=30).out.strip() == "0"
    wait_states(c, all_connected())
    assert sum(p["reconnects"] for p in peers(c[1]).values()) > rec
    # ended by node1 itself, not by a peer's timeout
    assert {n: stats(c[n])["heartbeat_timeouts"] for n in (1, 2, 3)} == hb


@test(timeout=900)
def link_cut_and_back(c):
    baseline(c)
    mon = c[1].spawn("timeout 400 rdmalogctl -j monitor >/tmp/events 2>&1")
    time.sleep(2)
    c[2].link(False)
    try:
        wait_states(c, {1: {2: "disconnected", 3: "connected"},
                        3: {2: "disconnected", 1: "connected"}})
    finally:
        c[2].link(True)
    wait_states(c, all_connected())
    mon.kill()
    events = [json.loads(line) for line in
              c[1].run("cat /tmp/events", timeout=60).out.splitlines()
              if line.startswith("{")]
    seen = [(e["peer"]["id"], e["peer"]["state"]) for e in events
            if e.get("event") == "peer_state"]
    assert (2, "disconnected") in seen and (2, "connected") in seen, seen


@test(timeout=900)
def new_connection_replaces_stale_one(c):
    """node1 restarts while node2 cannot hear it; node2 still believes in
    the old connection when node1's new one arrives, and takes the new one.
    """
    baseline(c)
    # node2 sends (almost) no heartbeats: no transport error, no timeout
    c[2].run("rdmalogctl node set heartbeat 30000 peer-timeout 60000",
             timeout=60, check=True)
    before = peers(c[2])[1]["reconnects"]
    time.sleep(2)
    c[2].blackhole(True)
    try:
        c[1].run("rdmalogctl node down && rdmalogctl node up", timeout=120,
                 check=True)
        assert peers(c[2])[1]["state"] == "connected", describe(c)
    finally:
        c[2].blackhole(False)
    wait_states(c, all_connected())
    assert peers(c[2])[1]["reconnects"] > before, describe(c)
    r = c[2].run("dmesg | grep 'replaced by a new connection from node 1'",
                 timeout=60)
    assert r.rc == 0, "node2 did not replace the connection"
    baseline(c)


@test(timeout=900)
def refused_cluster_id(c):
    baseline(c)
    apply(c[2], cluster_file(cluster=43))
    wait_states(c, {
        1: {2: ("refused", "cluster id"), 3: "connected"},
        3: {2: ("refused", "cluster id"), 1: "connected"},
        2: {1: ("refused", "cluster id"), 3: ("refused", "cluster id")},
    })
    assert peers(c[1])[2]["refusals"] >= 1
    assert stats(c[2])["refusals_sent"] + stats(c[2])["refusals_received"] \
        >= 2
    r = c[3].run("dmesg | grep -i 'refused.*cluster id'", timeout=60)
    assert r.rc == 0, "no refusal in node3's kernel log"
    baseline(c)


@test(timeout=900)
def refused_ring_capacity(c):
    baseline(c)
    apply(c[3], cluster_file(capacity="2M"))
    wait_states(c, {
        1: {3: ("refused", "capacity"), 2: "connected"},
        2: {3: ("refused", "capacity"), 1: "connected"},
        3: {1: ("refused", "capacity"), 2: ("refused", "capacity")},
    })
    baseline(c)


@test(timeout=900)
def refused_unknown_host(c):
    """node1 does not list node3; node3 lists node1: node1 refuses it."""
    baseline(c)
    apply(c[1], cluster_file(nodes=(1, 2)))
    assert 3 not in peers(c[1])
    wait_states(c, {
        1: {2: "connected"},
        2: {1: "connected", 3: "connected"},
        3: {1: ("refused", "not one of its configured peers"),
            2: "connected"},
    })
    r = c[1].run("dmesg | grep 'not a configured peer'", timeout=60)
    assert r.rc == 0, "node1 did not log the refusal"
    # node1 learns about node3 again: connected
    baseline(c)


@test
def foreign_client_refused(c):
    """A non-rdmalog rdma_cm client (rping: no handshake) is refused."""
    baseline(c)
    before = stats(c[1])["refusals_sent"]
    r = c[3].run("rping -c -a 198.18.0.1 -p 7471 -C 1 -v", timeout=120)
    assert r.rc != 0, f"rping got through:\n{r.out}"
    assert re.search(r"REJECTED", r.out), r.out
    assert stats(c[1])["refusals_sent"] > before
    # nothing else noticed
    wait_states(c, all_connected(), timeout=60)
    assert stats(c[1])["bad_msgs"] == 0


@test(timeout=900)
def rdma_device_removal(c):
    baseline(c)
    c[2].run("rdma link delete rxe0", timeout=120, check=True)
    wait_states(c, {1: {2: "disconnected", 3: "connected"},
                    3: {2: "disconnected", 1: "connected"},
                    2: {1: "disconnected", 3: "disconnected"}})
    st = status(c[2])
    assert re.search(r"listen", st["message"]), st["message"]
    c[2].run("rdma link add rxe0 type rxe netdev eth0", timeout=120,
             check=True)
    wait_states(c, all_connected())
    assert status(c[2])["message"].find("listen") < 0, status(c[2])


@test(timeout=900)
def ipv6_addresses(c):
    """The same cluster over IPv6 (RoCE v2 with IPv6 GIDs)."""
    baseline(c)
    v6 = "fd00:18::{}"
    try:
        for nd in c:
            nd.run(f"ip -6 addr add {v6.format(nd.index)}/64 dev eth0 nodad",
                   timeout=60, check=True)
        for nd in c:
            # rxe learns the address (its GID table) from netdev events
            gid = f"fd00:0018:0000:0000:0000:0000:0000:{nd.index:04x}"
            nd.wait_until("cat /sys/class/infiniband/rxe0/ports/1/gids/* "
                          f"2>/dev/null | grep -q '^{gid}$'", timeout=WAIT)
        for nd in c:
            apply(nd, cluster_file(addr=v6))
        wait_states(c, all_connected())
        p = peers(c[1])[2]
        assert p["address"] == v6.format(2), p
    finally:
        for nd in c:
            nd.run("rdmalogctl node down; "
                   f"ip -6 addr del {v6.format(nd.index)}/64 dev eth0",
                   timeout=60)
    baseline(c)


@test(timeout=1200)
def down_up_cycles(c):
    baseline(c)
    for i in range(10):
        c[2].run("rdmalogctl node down && rdmalogctl node up", timeout=120,
                 check=True)
        if i % 3 == 2:
            wait_states(c, all_connected())
    wait_states(c, all_connected())
    for i in range(3):
        # down while connections are being set up
        c[1].run("rdmalogctl node down && rdmalogctl node up && "
                 "sleep 0.$RANDOM && rdmalogctl node down && "
                 "rdmalogctl node up", timeout=120, check=True)
    wait_states(c, all_connected())


@test(timeout=900)
def rmmod_while_connected(c):
    baseline(c)
    nd = c[3]
    r = nd.run("rdmalogctl node down && rmmod rdmalog && echo RMMOD-OK",
               timeout=180)
    assert "RMMOD-OK" in r.out, r.out
    wait_states(c, {1: {3: "disconnected"}, 2: {3: "disconnected"}})
    apply(nd, BASE)
    wait_states(c, all_connected())
    # up and connected: rmmod takes the node down itself
    r = nd.run("rmmod rdmalog && echo RMMOD-OK", timeout=180)
    assert "RMMOD-OK" in r.out, r.out
    r = nd.run("grep -w '^rdmalog' /proc/modules", timeout=60)
    assert r.rc != 0, "still loaded"
    wait_states(c, {1: {3: "disconnected"}, 2: {3: "disconnected"}})
    # and the cluster comes back for whatever runs next
    baseline(c)
