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

With --garbage KIND the rogue sends node 2 one bad control message per
connection instead (bad magic, version, type or length, truncated,
oversized, sequence gap or repeat, too many credits, a second HELLO, a
RING, APPENDs with inconsistent, backward, garbage, wrong-epoch or torn
commits, a HELLO of another log asking for a trim and its APPEND, an
ACK, an unknown FWD_DONE, a JOIN, CATCHUPs with a bad range, segments,
flags or start, or one that would move node 2's log back, and
CATCHUPs whose range node 2 pulls with RDMA READ from the rogue's memory
to find random bytes or a torn record): node 2 drops each connection,
counts it (bad_msgs, completion_errors or crc_errors), logs the reason
once, keeps its log, and takes the real node 1 back afterwards.

With --ballot-probe tamper:E the rogue, granted node 3's ballot word,
swaps a vote into it while it is closed: node 3 catches the change the
next time it acts on the word, takes the vote and turns the word off.
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


SECRET = "/etc/rdmalog.secret"


def fresh(c, text, secret=None):
    """A new log on every node, with the cluster file text and the shared
    secret (None: none; else the file gets a secret-file statement);
    node 1 connected to both."""
    if secret is not None:
        text = text.rstrip("\n") + f"\nsecret-file {SECRET}\n"
    for nd in c:
        nd.run("rdmalogctl node down 2>/dev/null; true", timeout=120)
    for nd in c:
        if secret is None:
            nd.run("rdmalogctl node set secret none", timeout=120,
                   check=True)
        else:
            nd.put(secret + "\n", SECRET)
        nd.put(text, CONF)
        nd.run(f"rdmalogctl apply {CONF}", timeout=120, check=True)
    wait_connected(c, 1)


def setup(c):
    for nd in c:
        nd.run("modprobe rdmalog", timeout=60, check=True)


@test
def rogue_primary_cannot_escape_the_ring(c):
    text = cluster_file()
    fresh(c, text)
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
    # the cross WRITE is done: the holder need not sit out its hold
    holder.kill()
    holder.wait(120)
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


# --garbage KIND of rogue_peer: what node 2 must count and log for it.
# (kind, counter, the reason in node 2's kernel log and peer message:
# text for bad_msgs, a regular expression for the others)
BAD = "bad_msgs"
GARBAGE = [
    ("magic", BAD, "bad message magic"),
    ("stale_epoch", BAD, "message of a stale epoch"),
    ("version", BAD, "unknown message version"),
    ("type", BAD, "unknown message type"),
    ("length", BAD, "message length differs from the bytes received"),
    ("short_hdr", BAD, "message shorter than a header"),
    ("short_body", BAD, "message length wrong for its type"),
    ("standing", BAD, "HEARTBEAT with unknown standing bits"),
    ("ballot_block", BAD, "HEARTBEAT with a malformed ballot block"),
    # rxe completes the receive with a local QP operation error; a
    # NIC may say local length error
    ("oversized", "completion_errors",
     r"receive completion: local (length|QP operation) error"),
    ("seq_gap", BAD, "message out of sequence"),
    ("seq_repeat", BAD, "message out of sequence"),
    ("credits", BAD, "peer handed back more credits than it has buffers"),
    ("hello2", BAD, "second HELLO"),
    ("ring", BAD, "RING sent to a node that is not the primary"),
    ("append_pos", BAD, "notice with inconsistent positions"),
    ("append_lsn", BAD, "notice with inconsistent positions"),
    ("append_back", BAD, "notice moved the commit or first LSN back"),
    ("append_garbage", "crc_errors",
     r"record failed verification: bad record magic, version or flags"),
    ("epoch", BAD, "data of another epoch than the primary's HELLO"),
    ("record_epoch", "crc_errors",
     r"record failed verification: record of a later epoch than its "
     r"primary's"),
    ("ack", BAD, "ACK before RING"),
    ("fwd_done", BAD, "FWD_DONE for a request not outstanding"),
    ("fwd_close_flags", BAD, "FWD_CLOSE with unknown flags"),
    ("fwd_closed", BAD, "FWD_CLOSED not asked for"),
    ("catchup_range", BAD, "CATCHUP with an inconsistent range"),
    ("catchup_segs", BAD,
     "ring segments that do not add up to the ring capacity"),
    ("catchup_flags", BAD, "CATCHUP with unknown flags"),
    ("catchup_start", BAD, "CATCHUP does not start at our head"),
    ("catchup_back", BAD, "CATCHUP would move our log back"),
    # node 2 pulls the rogue's ring with RDMA READ and rejects what came:
    # a failed READ would be a completion error, not a verification
    ("catchup_garbage", "crc_errors",
     r"pulled record failed verification: "
     r"bad record magic, version or flags"),
    ("catchup_torn", "crc_errors",
     r"pulled record failed verification: record payload CRC32C mismatch"),
    ("append_torn", "crc_errors",
     r"record failed verification: record payload CRC32C mismatch"),
    ("join", BAD, "JOIN before RING"),
    # review-kernel.md #1: no trim on the word of another log's HELLO
    # (node 2's first LSN is checked unchanged), and none of its APPENDs
    ("other_log", BAD, "notice from the primary of another log"),
    # a peer's grant of its ballot word (protocol.rst, "Ballot grant"):
    # node 2's device has atomics, so a BALLOT is one it may take
    ("ballot_key", BAD, "BALLOT with a zero key"),
    ("ballot_align", BAD, "BALLOT with a misaligned ballot word"),
    ("ballot_reserved", BAD, "BALLOT with reserved bits set"),
    ("ballot2", BAD, "second BALLOT"),
    # a VOTE node 2 never asked for, announcing an election epoch of
    # 2^40: dropped, and node 2's election epoch unchanged (checked below)
    ("vote_unasked", BAD, "VOTE that answers no VOTE_REQ of ours"),
    # LEAD (protocol.rst, "LEAD"): after a HELLO that said primary, and
    # (the others) after one that said backup
    ("lead_primary", BAD, "LEAD from a primary"),
    ("lead_reserved", BAD, "LEAD with unknown flags or reserved bits set"),
    ("lead_log0", BAD, "LEAD with log id 0"),
    ("lead_epoch", BAD, "LEAD of an epoch not above its HELLO's"),
    ("lead_other_log", BAD, "LEAD of another log than its HELLO"),
]
COUNTERS = ("bad_msgs", "completion_errors", "crc_errors",
            "heartbeat_timeouts")
MARK = "rogue-garbage-checked"


def node2_view(c):
    """stats, status, records and the kernel log since the last view of
    node 2, in one command (each one costs seconds under TCG)."""
    out = c[2].run("rdmalogctl -j stats; echo @@; rdmalogctl -j status; "
                   "echo @@; rdmalogcat -j; echo @@; dmesg; "
                   f"echo {MARK} >/dev/kmsg", timeout=300, check=True).out
    st, status_, recs, dm = out.split("@@\n")
    return (json.loads(st), json.loads(status_),
            [(r["lsn"], r.get("len"), r.get("data"))
             for r in map(json.loads, recs.splitlines())],
            dm.rsplit(MARK, 1)[-1])


@test
def garbage_control_messages_drop_the_connection(c):
    """A rogue node 1 completes the handshake and the HELLO/RING exchange
    with node 2 and sends one bad control message per connection: each
    kind of GARBAGE. Node 2 must drop the connection (the rogue sees it
    go within 15 s), count it, log the reason once, keep its log as it
    was, and take the real node 1 back afterwards. A valid HEARTBEAT
    (the control) must not be dropped."""
    text = cluster_file()
    for nd in c:
        if not status(nd)["log"]["up"]:
            nd.put(text, CONF)
            nd.run(f"rdmalogctl apply {CONF}", timeout=120, check=True)
    wait_connected(c, 1)
    wait_connected(c, 2)
    nxt = status(c[1])["log"]["next_lsn"]
    lsns = append(c[1], ["before-garbage-1", "before-garbage-2"])
    assert lsns == [nxt, nxt + 1], lsns
    wait_commit(c, nxt + 2)

    # node 2 loses its primary and waits for node 1 to connect again
    c[1].run("rdmalogctl peer del id 2", timeout=120, check=True)
    wait_for(lambda: peer(c[2], 1)["state"] != "connected",
             timeout=WAIT, interval=1, what="node 2 lost node 1")
    stats0, st0, base, _ = node2_view(c)
    log0 = st0["log"]
    assert base and base[-1][0] == nxt + 1, base

    # Node 2 logs each drop rate-limited: at most 10 lines per call site
    # in 5 s (printk's default), and under TCG a kind takes well under a
    # second. Emulate that limit with the guest timestamps of the lines
    # and let node 2's clock leave a full window before a kind whose line
    # might be swallowed.
    window = {"begin": None, "lines": 0}

    def uptime():
        return float(c[2].run("cat /proc/uptime", timeout=60,
                              check=True).out.split()[0])

    # the rogue primary speaks in the epoch of node 2's log
    rogue = (f"{ROGUE} -a 198.18.0.2 -n 1 -d 2 -c {CLUSTER} -C {CAPACITY} "
             f"--primary-epoch {log0['epoch']}")
    for kind, counter, why in [("valid", None, None)] + GARBAGE:
        if window["lines"] >= 8:
            end = window["begin"] + 6
            print(f"pacing before {kind}: {window['lines']} lines since "
                  f"{window['begin']} s")
            wait_for(lambda: uptime() > end, timeout=WAIT, interval=0.5,
                     what="node 2's log rate limit window to pass")
        r = c[1].run(f"{rogue} --garbage {kind}", timeout=300)
        print(r.out)
        res = rogue_result(r.out)
        assert res.get("garbage") == kind, res
        if counter is None:
            assert r.rc == 0 and res["dropped"] is False, (kind, r.rc, res)
        else:
            assert r.rc == 0 and res["dropped"] is True, \
                (f"node 2 did not drop the connection after {kind}", res)

        seen = []   # the kernel log accumulates over the views

        # Node 2 keeps dialling node 1, whose real module refuses it
        # (node 1 deleted peer 2): a slow poll may find that refusal in
        # the peer's state and message instead of the rogue's drop.
        def settled():
            v = node2_view(c)
            seen.append(v[3])
            p = {x["id"]: x for x in v[1]["peers"]}[1]
            return p["state"] != "connected" and v
        stats1, st1, recs, _ = wait_for(
            settled, timeout=WAIT, interval=1,
            what=f"node 2 off the rogue connection after {kind}")
        dm = "".join(seen)
        for t in re.findall(r"\[\s*(\d+\.\d+)\] rdmalog: node 2: "
                            r"connection to node 1 failed", dm):
            if window["begin"] is None or float(t) > window["begin"] + 5:
                window["begin"], window["lines"] = float(t), 0
            window["lines"] += 1
        p = {x["id"]: x for x in st1["peers"]}[1]
        delta = {k: stats1[k] - stats0[k] for k in COUNTERS}
        print(f"{kind}: peer 1 {p['state']}: {p.get('msg')}; {delta}")
        assert delta["heartbeat_timeouts"] == 0, (kind, delta)
        drops = re.findall(r"node 2: dropping the connection to node 1: "
                           r"(.*)", dm)
        if counter is None:
            assert not any(delta.values()), (kind, delta)
            assert not drops, (kind, dm)
        else:
            if counter == BAD:
                assert delta[BAD] == 1, (kind, delta)
                assert len(drops) == 1 and drops[0].startswith(why), \
                    (kind, drops, dm)
            else:
                # a receive error may come with a queue pair event
                assert delta[counter] >= 1 if counter != "crc_errors" \
                    else delta[counter] == 1, (kind, delta)
                assert re.search(r"node 2: connection to node 1 failed: "
                                 + why, dm), (kind, dm)
                if counter == "crc_errors":
                    # catch-up (RDMA READ) or replication (APPEND) path
                    how = "pulled " if why.startswith("pulled ") else ""
                    assert re.search(rf"node 2: a record {how}from "
                                     r"primary 1 failed verification: "
                                     + why.split(": ", 1)[1], dm), (kind, dm)
            if p["state"] == "refused":
                # overtaken by the redial: the reason was checked in the
                # kernel log above; the refusal must be node 1's own
                assert p.get("refusal") == "unknown_peer", (kind, p)
                assert (p.get("msg") or "").startswith("refused by node 1"), \
                    (kind, p)
            else:
                assert re.search(why if counter != BAD
                                 else re.escape(why),
                                 p.get("msg") or ""), (kind, p)
                assert p["state"] == "disconnected", (kind, p)
        assert st1["node"]["role"] == "backup", st1
        for k in ("first_lsn", "commit_lsn", "next_lsn"):
            assert st1["log"][k] == log0[k], (kind, k, st1["log"], log0)
        # what a dropped message said is not used: no election epoch
        # learned from it (the control's HEARTBEAT says the log's)
        assert st1["election"]["epoch"] == st0["election"]["epoch"], \
            (kind, st0["election"], st1["election"])
        assert recs == base, (kind, recs, base)
        assert not re.search(r"Oops|WARNING:|BUG:|general protection", dm)
        stats0, st0 = stats1, st1

    # node 1 takes node 2 back: it rejoins in sync and replicates again
    c[1].run(f"rdmalogctl apply {CONF}", timeout=120, check=True)
    wait_connected(c, 1)
    wait_connected(c, 2, nodes=(1,))
    lsns = append(c[1], ["after-garbage"])
    assert lsns == [nxt + 2], lsns
    wait_commit(c, nxt + 3)
    wait_for(lambda: records(c[2]) == records(c[1]), timeout=WAIT,
             interval=1, what="node 2 holds the new record")
    assert records(c[2])[:len(base)] == base
    assert records(c[2])[-1][2] == "after-garbage", records(c[2])


def pages_allocated(nd):
    """Pages the guest's kernel allocated so far (every zone)."""
    out = nd.run("cat /proc/vmstat", timeout=60, check=True).out
    return sum(int(v) for k, v in (x.split() for x in out.splitlines())
               if k.startswith("pgalloc_"))


@test
def oversized_forward_is_refused_before_allocation(c):
    """review-kernel.md #12: a rogue backup (node 3) asks the primary to
    pull payloads of max_record (16 MiB) bytes, more than one of its
    registrations covers (2 MiB on rxe), from memory it never registered.
    The primary answers each with EMSGSIZE before it allocates anything:
    before the fix it took 16 MiB of pages for each first."""
    fwds, size = 32, 16 << 20
    text = rlnode.cluster_file(cluster=CLUSTER, capacity="64M",
                               max_record="16M")
    fresh(c, text)
    # the rogue takes node 3's place; node 1 (1 < 3) calls it
    c[3].run("rdmalogctl node down", timeout=120, check=True)
    before = pages_allocated(c[1])
    r = c[3].run(f"{ROGUE} --listen -a 198.18.0.3 -n 3 -d 1 -c {CLUSTER} "
                 f"-C {64 << 20} --max-record {size} --fwd-len {size} "
                 f"--fwd-count {fwds}", timeout=180)
    print(r.out)
    used = pages_allocated(c[1]) - before
    print(f"node 1 allocated {used} pages during the flood")
    res = rogue_result(r.out)
    assert r.rc == 0, r.out
    assert res.get("fwd_status") == {"90": fwds}, res
    # one 16 MiB payload is 4096 pages: the flood allocated none of them
    assert used < fwds * (size >> 12) // 8, \
        f"node 1 allocated {used} pages while it refused {fwds} FWDs"
    # the real node 3 comes back and node 1 replicates as before
    c[3].put(text, CONF)
    c[3].run(f"rdmalogctl apply {CONF}", timeout=120, check=True)
    wait_connected(c, 1)
    lsn = append(c[1], ["after-rogue-fwd"])[0]
    wait_commit(c, lsn + 1)


def grant_probe(nd, node, dst, extra=""):
    r = nd.run(f"{ROGUE} -a 198.18.0.{dst} -n {node} -d {dst} "
               f"-c {CLUSTER} -C {CAPACITY} --grant-probe {extra}",
               timeout=180)
    print(r.out)
    assert r.rc == 0, r.out
    return rogue_result(r.out)


def wait_refused_auth(nd, pid, why):
    """nd refused node pid for the shared secret, saying why: in its peer
    pid's state or, where nd's own redial to the real node pid (which
    refuses it: it deleted nd) overtook that state before the poll, in
    its kernel log (the same refusal's line)."""
    def seen():
        p = peer(nd, pid)
        if p["state"] == "refused" and p.get("refusal") == "auth" and \
                why in (p.get("msg") or ""):
            return p["msg"]
        d = nd.run("dmesg", timeout=60, check=True).out
        m = re.search(rf"node {nd.index}: refused node {pid}: .*"
                      + re.escape(why), d)
        return m and m.group(0)
    return wait_for(seen, timeout=WAIT, interval=1,
                    what=f"node {nd.index} refused node {pid}: {why}")


@test
def peers_prove_the_shared_secret(c):
    """Issue 10 section 6: with a shared secret set, a node that does not
    prove it is refused before it is granted anything. Node 2 waits for
    its primary; a rogue node 1 asks it for its ring without a secret
    (refused at the handshake), with the wrong one (its HELLO's MAC fails:
    dropped, peer "refused: auth") and with the right one (granted: the
    MAC as protocol.rst defines it, computed by the rogue's own SHA-256).
    Node 2's log is untouched; the secret is never shown and cannot change
    while up; the real cluster replicates with it."""
    secret = "rogue-suite-secret-0123456789"
    text = cluster_file()
    fresh(c, text, secret=secret)
    for nd in c:
        out = nd.run("rdmalogctl -j status; rdmalogctl node show; "
                     "rdmalogctl status", timeout=120, check=True).out
        assert secret not in out, out
        assert status(nd)["node"]["auth"] == "hmac-sha256", out
        assert "auth            hmac-sha256" in out, out
    r = c[2].run(f"echo other-secret > /tmp/other; "
                 f"rdmalogctl node set secret-file /tmp/other", timeout=120)
    assert r.rc != 0 and "cannot change the shared secret while the log " \
        "is up" in r.out, (r.rc, r.out)
    r = c[2].run(f"rdmalogctl node set secret {secret}", timeout=120)
    assert r.rc != 0 and "secret-file" in r.out, r.out

    lsns = append(c[1], ["authenticated-1", "authenticated-2"])
    wait_commit(c, lsns[-1] + 1)
    base = records(c[2])
    log2 = status(c[2])["log"]
    c[1].run("rdmalogctl peer del id 2", timeout=120, check=True)
    wait_for(lambda: peer(c[2], 1)["state"] != "connected",
             timeout=WAIT, interval=1, what="node 2 lost node 1")
    c[1].put("not-" + secret + "\n", "/tmp/wrong")

    res = grant_probe(c[1], 1, 2)
    assert res["outcome"] == "no connection" and \
        res.get("rejected") == "auth", res
    msg = wait_refused_auth(c[2], 1, "this node has a shared secret and "
                            "it has none")
    print(f"no secret: node 2's peer 1: {msg}")

    res = grant_probe(c[1], 1, 2, f"--secret /tmp/wrong")
    assert res["outcome"] == "dropped", res
    msg = wait_refused_auth(c[2], 1, "does not prove our shared secret")
    print(f"wrong secret: node 2's peer 1: {msg}")
    assert records(c[2]) == base, records(c[2])

    res = grant_probe(c[1], 1, 2, f"--secret {SECRET}")
    assert res["outcome"] == "ring", res
    for k in ("first_lsn", "commit_lsn", "next_lsn"):
        assert status(c[2])["log"][k] == log2[k], (k, log2)
    assert records(c[2]) == base, records(c[2])

    # the real node 1 takes node 2 back, authenticated
    c[1].run(f"rdmalogctl apply {CONF}", timeout=120, check=True)
    wait_connected(c, 1)
    lsn = append(c[1], ["authenticated-3"])[0]
    wait_commit(c, lsn + 1)
    wait_for(lambda: records(c[2]) == records(c[1]), timeout=WAIT,
             interval=1, what="node 2 holds the new record")
    d = c[2].run("dmesg", timeout=60, check=True).out
    assert not re.search(r"Oops|WARNING:|BUG:|general protection", d), d
    # the next test's fresh() removes the secret


@test
def a_backup_serves_one_primary(c):
    """Issue 10 section 6: node 3 is a backup of node 1. A rogue node 2
    (node 2's real node down; 2 < 3 connects) says it is primary too:
    node 3 refuses it (peer 2 "refused: second_primary") and never grants
    it its ring, and keeps taking node 1's records. Before the fix, it
    granted its ring to both."""
    text = cluster_file()
    fresh(c, text)
    assert status(c[3])["node"]["auth"] == "none", status(c[3])
    wait_connected(c, 3, nodes=(1,))
    lsns = append(c[1], ["one-primary-1"])
    wait_commit(c, lsns[-1] + 1)
    c[2].run("rdmalogctl node down", timeout=120, check=True)
    base = records(c[3])

    res = grant_probe(c[2], 2, 3)
    assert res["outcome"] == "dropped", res
    p = wait_for(lambda: (lambda p: p["state"] == "refused" and p)(
        peer(c[3], 2)), timeout=WAIT, interval=1,
        what="node 3 refused the second primary")
    print(f"node 3's peer 2: {p['msg']}")
    assert p.get("refusal") == "second_primary", p
    assert "node 1 is our primary" in p["msg"], p
    assert peer(c[3], 1)["state"] == "connected", status(c[3])
    assert records(c[3]) == base, records(c[3])
    lsn = append(c[1], ["one-primary-2"])[0]
    wait_commit(c, lsn + 1, nodes=(1, 3))
    wait_for(lambda: records(c[3]) == records(c[1]), timeout=WAIT,
             interval=1, what="node 3 holds node 1's new record")


def lead_probe(c, extra):
    """Node 3 a backup of node 1 (epoch e), node 2's module down; a rogue
    node 2 connects to node 3, says backup in its HELLO, then LEAD in
    epoch e + 1 (with @extra). Returns (rogue result, e, node 3's stats
    before, node 3's kernel lines since)."""
    fresh(c, cluster_file())
    wait_connected(c, 3, nodes=(1,))
    lsns = append(c[1], ["lead-1"])
    wait_commit(c, lsns[-1] + 1)
    e = status(c[1])["log"]["epoch"]
    c[2].run("rdmalogctl node down", timeout=120, check=True)
    wait_for(lambda: peer(c[3], 2)["state"] != "connected", timeout=WAIT,
             interval=1, what="node 3 lost node 2")
    c[3].run("dmesg -c >/dev/null", timeout=60, check=True)
    s3 = rlnode.stats(c[3])
    res = grant_probe(c[2], 2, 3, f"--lead {e + 1} {extra}")
    log = c[3].run("dmesg", timeout=60, check=True).out
    print(log)
    return res, e, s3, log


@test
def a_lead_takes_the_ring_from_an_older_primary(c):
    """LEAD, wire version 9 (protocol.rst, "LEAD"): a peer that was a
    backup when the connection was made says it leads now. Node 3, a
    backup of node 1 in epoch e, takes a rogue node 2's LEAD of its log
    in epoch e + 1: it fences node 1 first (closes its connection and
    waits for its queue pair), then grants the rogue its ring on the
    same connection. Without the fence node 3 would refuse it as a
    second primary; without LEAD it would drop the connection (unknown
    message type)."""
    res, e, s3, log = lead_probe(c, "")
    # a ring while node 1 still held it would have been refused (second
    # primary): the grant came after node 1's fence
    assert res["outcome"] == "ring", res
    assert f"node 3: node 2 leads epoch {e + 1} on our connection" in log
    assert re.search(r"node 3: connection to node 1 closed: (connection "
                     rf"failed: )?fenced: node 2 leads epoch {e + 1}\b",
                     log), log
    t3 = rlnode.stats(c[3])
    assert t3["leads_received"] == s3["leads_received"] + 1, (s3, t3)
    assert t3["bad_msgs"] == s3["bad_msgs"], (s3, t3)
    # node 1's epoch is fenced on node 3 from now on: node 1 (quorum,
    # node 2 down) commits nothing more there
    p = wait_for(lambda: (lambda p: p["state"] != "connected" and p)(
        peer(c[3], 1)), timeout=WAIT, interval=1,
        what="node 3 cut node 1 off")
    print(f"node 3's peer 1: {p}")
    # and refused when it comes back: its epoch is below the fence
    wait_for(lambda: f"it leads epoch {e}, below epoch {e + 1} to which "
             "this node is fenced" in c[3].run("dmesg", timeout=60).out,
             timeout=WAIT, interval=2, what="node 3 refused node 1 again")
    base = records(c[3])
    r = c[1].run("printf 'after-lead\\n' | timeout 60 rdmalogcat -a",
                 timeout=120)
    print(r.rc, r.out)
    got = records(c[3])
    assert all(x[2] != "after-lead" for x in got), got
    assert got[:len(base)] == base, (base, got)


@test
def a_lead_of_another_log_does_not_fence(c):
    """A LEAD whose log is not the one node 3 follows (its HELLO named
    none) fences nothing: node 3 refuses it as a second primary while
    node 1 holds its ring, and keeps taking node 1's records."""
    res, e, s3, log = lead_probe(c, "--lead-other-log")
    assert res["outcome"] == "dropped", res
    assert "fenced" not in log, log
    p = wait_for(lambda: (lambda p: p["state"] == "refused" and p)(
        peer(c[3], 2)), timeout=WAIT, interval=1,
        what="node 3 refused the second primary")
    assert p.get("refusal") == "second_primary", p
    assert "node 1 is our primary" in p["msg"], p
    assert peer(c[3], 1)["state"] == "connected", status(c[3])
    lsn = append(c[1], ["lead-other-2"])[0]
    wait_commit(c, lsn + 1, nodes=(1, 3))


def es_end(nd):
    """(stream position, LSN) where nd's log ends: every record kept
    from LSN 1, each ALIGN(48 + len, 8) bytes (uapi/rdmalog.h)."""
    rs = records(nd)
    assert rs and rs[0][0] == 1, rs
    return sum((48 + n + 7) // 8 * 8 for _, n, _ in rs), rs[-1][0] + 1


@test
def a_lead_names_an_epoch_start_record_node_3_holds(c):
    """Wire version 10 (protocol.rst, "The epoch-start record travels
    with the LEAD"): a LEAD names the new primary's epoch-start record.
    Node 3's ring ends exactly where the rogue's record starts (same
    position, LSN, epoch and generation of the record before): it writes
    the record into its ring before its RING, and its RING says so
    (RDMALOG_RING_F_EPOCH_START). Without the LEAD's record node 3's RING
    had no flag; a primary would have had to WRITE the record."""
    fresh(c, cluster_file())
    wait_connected(c, 3, nodes=(1,))
    lsns = append(c[1], ["es-1", "es-two"])
    wait_commit(c, lsns[-1] + 1)
    e = status(c[1])["log"]["epoch"]
    pos, lsn = es_end(c[3])
    assert lsn == lsns[-1] + 1, (lsn, lsns)
    c[2].run("rdmalogctl node down", timeout=120, check=True)
    wait_for(lambda: peer(c[3], 2)["state"] != "connected", timeout=WAIT,
             interval=1, what="node 3 lost node 2")
    c[3].run("dmesg -c >/dev/null", timeout=60, check=True)
    s3 = rlnode.stats(c[3])
    res = grant_probe(c[2], 2, 3, f"--lead {e + 1} --lead-es {pos},{lsn},{e},0")
    log = c[3].run("dmesg", timeout=60, check=True).out
    print(log)
    assert res["outcome"] == "ring" and res["ring_flags"] == 1, res
    assert f"node 3: holds node 2's epoch-start record, LSN {lsn} of " \
        f"epoch {e + 1}, before it grants its ring" in log, log
    assert rlnode.stats(c[3])["bad_msgs"] == s3["bad_msgs"]


@test
def a_lead_naming_a_record_node_3_does_not_hold_changes_nothing(c):
    """A LEAD whose epoch-start record fields come without its flag is
    dropped (bad_msgs); one naming a record 8 bytes past where node 3's
    ring ends is granted the ring as any LEAD, with no record written and
    no flag in its RING, and node 3 still holds only node 1's records."""
    fresh(c, cluster_file())
    wait_connected(c, 3, nodes=(1,))
    lsns = append(c[1], ["es-1", "es-two"])
    wait_commit(c, lsns[-1] + 1)
    e = status(c[1])["log"]["epoch"]
    pos, lsn = es_end(c[3])
    c[2].run("rdmalogctl node down", timeout=120, check=True)
    wait_for(lambda: peer(c[3], 2)["state"] != "connected", timeout=WAIT,
             interval=1, what="node 3 lost node 2")
    s3 = rlnode.stats(c[3])
    res = grant_probe(c[2], 2, 3,
                      f"--lead {e + 1} --lead-es {pos},{lsn},{e},0,nf")
    assert res["outcome"] == "dropped", res
    wait_for(lambda: rlnode.stats(c[3])["bad_msgs"] > s3["bad_msgs"],
             timeout=WAIT, interval=1, what="node 3 counted the bad LEAD")
    d = c[3].run("dmesg -c", timeout=60, check=True).out
    assert "LEAD naming no epoch-start record, with fields of one" in d, d
    assert peer(c[3], 1)["state"] == "connected", status(c[3])
    base = records(c[3])
    res = grant_probe(c[2], 2, 3,
                      f"--lead {e + 1} --lead-es {pos + 8},{lsn},{e},0")
    log = c[3].run("dmesg", timeout=60, check=True).out
    print(log)
    assert res["outcome"] == "ring" and res["ring_flags"] == 0, res
    assert f"node 3: does not hold node 2's epoch-start record (LSN {lsn} " \
        f"at {pos + 8}): -116" in log, log
    assert "holds node 2's epoch-start record" not in log, log
    assert records(c[3]) == base, (records(c[3]), base)


@test
def catchup_grant_covers_only_the_range(c):
    """Issue 10 section 6, review-kernel.md #9: a rogue node 3 (node 3
    down; node 1 connects to it) joins as an empty backup; node 1 must
    grant it REMOTE_READ on [start, target) of its ring only: a READ at
    the start of the range works, one just past its end fails at node 1's
    NIC. Before the fix the whole ring was readable. Node 1 keeps its log
    and replicates to node 2 afterwards."""
    text = cluster_file()
    fresh(c, text)
    lsns = append(c[1], [f"range-{i:03d}" for i in range(40)])
    wait_commit(c, lsns[-1] + 1)
    base = records(c[1])
    c[3].run("rdmalogctl node down", timeout=120, check=True)
    r = c[3].run(f"{ROGUE} --listen -a 198.18.0.3 -n 3 -d 1 -c {CLUSTER} "
                 f"-C {CAPACITY} --catchup-probe", timeout=180)
    print(r.out)
    res = rogue_result(r.out)
    assert res.get("cu_inside") == "IBV_WC_SUCCESS", res
    assert res.get("cu_past_target", "").startswith("IBV_WC_REM_"), res
    assert r.rc == 0, r.out
    assert records(c[1]) == base
    lsn = append(c[1], ["after-range"])[0]
    wait_commit(c, lsn + 1, nodes=(1, 2))
    c[3].put(text, CONF)
    c[3].run(f"rdmalogctl apply {CONF}", timeout=120, check=True)
    wait_connected(c, 1)
    wait_commit(c, lsn + 1)


def election_epoch(nd):
    return status(nd)["election"]["epoch"]


@test
def an_announced_election_epoch_spreads(c):
    """A peer's HELLO and HEARTBEATs announce its election epoch
    (protocol.rst, "Election state"): a rogue node 1 announces one far
    above the log's. Node 2 takes it as the highest epoch it knows of and
    announces it in turn, so node 3 learns it from node 2 and the real
    node 1 from node 3; a new log of node 1 then takes an epoch above it,
    so a primary never reuses an epoch an election may have used."""
    fresh(c, cluster_file())
    wait_connected(c, 2)
    wait_connected(c, 3)
    # learned first: a node that learns hears the epoch as a vote floor
    rlnode.wait_learned(c)
    e0 = status(c[1])["log"]["epoch"]
    vote = e0 + 40
    for nd in c:
        assert election_epoch(nd) == e0, (nd.name, status(nd)["election"])
    c[1].run("rdmalogctl peer del id 2", timeout=120, check=True)
    wait_for(lambda: peer(c[2], 1)["state"] != "connected",
             timeout=WAIT, interval=1, what="node 2 lost node 1")
    r = c[1].run(f"{ROGUE} -a 198.18.0.2 -n 1 -d 2 -c {CLUSTER} "
                 f"-C {CAPACITY} --garbage valid --vote-epoch {vote}",
                 timeout=300)
    print(r.out)
    res = rogue_result(r.out)
    assert r.rc == 0 and res["dropped"] is False, (r.rc, res)
    for n in (2, 3, 1):
        wait_for(lambda: election_epoch(c[n]) == vote, timeout=WAIT,
                 interval=1, what=f"node {n} knows election epoch {vote}")
    # the log epochs did not move: nobody voted or led in it
    assert status(c[3])["log"]["epoch"] == e0, status(c[3])["log"]
    assert status(c[2])["election"]["vote"] is None, status(c[2])
    fresh(c, cluster_file())
    assert status(c[1])["log"]["epoch"] == vote + 1, status(c[1])["log"]


def ask_vote(nd, args):
    """Run the rogue as a candidate on nd; its JSON's "vote" object."""
    r = nd.run(f"{ROGUE} -c {CLUSTER} -C {CAPACITY} {args}", timeout=300)
    print(r.out)
    res = rogue_result(r.out)
    assert r.rc == 0 and res.get("vote"), (r.rc, res)
    return res["vote"]


@test
def the_ballot_grant_is_least_access(c):
    """A rogue node 2 whose HELLO says it has atomics is granted node 3's
    ballot word and block (BALLOT; protocol.rst, "Ballot grant"): a
    fetch-and-add of 0 on the word returns what node 3's status shows and
    a READ of the block works, while a READ of the word, a WRITE to the
    word or the block, an atomic on the block's key and a READ past the
    block each fail at node 3's NIC. Node 3 goes on following node 1, its
    word unchanged."""
    fresh(c, cluster_file())
    wait_connected(c, 1)
    wait_connected(c, 3)
    c[2].run("rdmalogctl node down", timeout=120, check=True)
    wait_for(lambda: peer(c[3], 2)["state"] != "connected", timeout=WAIT,
             interval=1, what="node 3 lost node 2")
    wait_for(lambda: status(c[3])["ballot"]["state"] == "ready",
             timeout=WAIT, interval=1, what="node 3's ballot word ready")
    grants = rlnode.stats(c[3])["ballot_grants"]
    word = status(c[3])["ballot"]["word"]
    args = f"-a 198.18.0.3 -n 2 -d 3 -c {CLUSTER} -C {CAPACITY}"
    for kind in ("ok", "word_read", "word_write", "block_write",
                 "block_atomic", "past_block"):
        r = c[2].run(f"{ROGUE} {args} --ballot-probe {kind}", timeout=300)
        print(r.out)
        res = rogue_result(r.out)
        assert r.rc == 0 and res["pass"], (kind, r.rc, res)
        if kind == "ok":
            assert res["word"] == word, (res, word)
        else:
            assert res[kind] in ("IBV_WC_REM_ACCESS_ERR",
                                 "IBV_WC_REM_INV_REQ_ERR",
                                 "IBV_WC_REM_OP_ERR"), (kind, res)
    assert rlnode.stats(c[3])["ballot_grants"] >= grants + 6
    b = status(c[3])["ballot"]
    assert (b["state"], b["word"]) == ("ready", word), (b, word)
    assert rlnode.stats(c[3])["ballot_tampered"] == 0
    assert peer(c[3], 1)["state"] == "connected", peer(c[3], 1)
    nxt = status(c[1])["log"]["next_lsn"]
    append(c[1], ["after-ballot-probes"])
    wait_commit(c, nxt + 1, nodes=(1, 3))


@test
def a_vote_fences_the_primary_first(c):
    """The voter's rules (protocol.rst, "Votes") with a rogue candidate.
    Node 2's module goes down and a rogue node 2 asks node 3, a backup of
    node 1, for its vote in the next epoch: one record behind node 3 it
    is refused and nothing changes; with node 3's position it is granted,
    and node 3 first fenced node 1: it closed node 1's connection and
    never grants node 1 its ring again, so node 1 (quorum, node 2 down)
    can commit nothing more and node 3's log does not take its record. A
    rogue node 1 then asks for the same epoch and is refused: node 3
    voted in it already. Pre-votes change nothing: refused while node 3
    follows its live primary, granted once it fenced it."""
    fresh(c, cluster_file())
    wait_connected(c, 1)
    wait_connected(c, 3)
    rlnode.wait_learned(c)
    nxt = status(c[1])["log"]["next_lsn"]
    append(c[1], ["before-vote-1", "before-vote-2"])
    wait_commit(c, nxt + 2)
    e = status(c[1])["log"]["epoch"]
    c[2].run("rdmalogctl node down", timeout=120, check=True)
    wait_for(lambda: peer(c[3], 2)["state"] != "connected", timeout=WAIT,
             interval=1, what="node 3 lost node 2")
    c[3].run("dmesg -c >/dev/null", timeout=60, check=True)
    as_2 = "-a 198.18.0.3 -n 2 -d 3"
    held = {"epoch": e, "gen": 0, "lsn": nxt + 1}

    # a pre-vote while node 1 holds node 3's ring: node 3 follows a live
    # primary, and nothing changes
    v = ask_vote(c[2], f"{as_2} --vote {e + 1} --vote-pos-epoch {e} --vote-pre")
    assert v == {"epoch": e + 1, "reason": "has_primary", "vote_epoch": 0,
                 "vote_for": 0, "pos": held, "pre": True}, v
    assert status(c[3])["election"]["vote"] is None, status(c[3])
    assert status(c[3])["election"]["epoch"] == e, status(c[3])

    v = ask_vote(c[2], f"{as_2} --vote {e + 1} --vote-pos-epoch {e} --vote-behind 1")
    assert v == {"epoch": e + 1, "reason": "behind", "vote_epoch": 0,
                 "vote_for": 0, "pos": held}, v
    assert status(c[3])["election"]["vote"] is None, status(c[3])
    assert peer(c[3], 1)["state"] == "connected", peer(c[3], 1)

    v = ask_vote(c[2], f"{as_2} --vote {e + 1} --vote-pos-epoch {e}")
    assert v == {"epoch": e + 1, "reason": "granted", "vote_epoch": e + 1,
                 "vote_for": 2, "pos": held}, v
    assert status(c[3])["election"]["vote"] == {"epoch": e + 1, "for": 2}
    # node 1 is fenced: a pre-vote for the next epoch would be granted,
    # and changes neither the vote nor the epoch node 3 announces
    v = ask_vote(c[2], f"{as_2} --vote {e + 2} --vote-pos-epoch {e} --vote-pre")
    assert v == {"epoch": e + 2, "reason": "granted", "vote_epoch": e + 1,
                 "vote_for": 2, "pos": held, "pre": True}, v
    assert status(c[3])["election"]["vote"] == {"epoch": e + 1, "for": 2}
    assert status(c[3])["election"]["epoch"] == e + 1, status(c[3])
    d = c[3].run("dmesg", timeout=60, check=True).out
    assert f"node 3: refused node 2 a vote in epoch {e + 1}: its log is " \
        "behind ours" in d, d
    assert f"node 3: voted for node 2 in epoch {e + 1}, its primary " \
        f"fenced (holding epoch {e}, generation 0, LSN {nxt + 1})" in d, d
    # node 1 comes back and is refused the ring for good
    wait_for(lambda: f"it leads epoch {e}, below epoch {e + 1} to which "
             "this node is fenced" in
             c[3].run("dmesg", timeout=60, check=True).out,
             timeout=WAIT, interval=2, what="node 3 refusing node 1's epoch")
    r = c[1].run("echo after-fence | rdmalogcat -a", timeout=300)
    assert r.rc != 0 and "timed out" in r.out, \
        ("a fenced primary committed", r.rc, r.out)
    assert [x[2] for x in records(c[3])][-2:] == \
        ["before-vote-1", "before-vote-2"], records(c[3])
    assert status(c[3])["log"]["next_lsn"] == nxt + 2, status(c[3])["log"]

    # another candidate in the same epoch
    wait_for(lambda: status(c[1])["election"]["epoch"] >= e + 1,
             timeout=WAIT, interval=1, what="node 1 learned epoch e+1")
    c[1].run("rdmalogctl node down", timeout=120, check=True)
    v = ask_vote(c[1], f"-a 198.18.0.3 -n 1 -d 3 --vote {e + 1} --vote-pos-epoch {e}")
    assert v["reason"] == "voted" and v["vote_epoch"] == e + 1 and \
        v["vote_for"] == 2, v
    # the primary of epoch e is still refused the ring ...
    new = (f"{ROGUE} -a 198.18.0.3 -n 2 -d 3 -c {CLUSTER} -C {CAPACITY} "
           "--garbage new_epoch --primary-epoch")
    r = c[2].run(f"{new} {e}", timeout=300)
    print(r.out)
    assert r.rc == 2 and "no RING" in r.out, (r.rc, r.out)
    # ... the primary of epoch e + 1 of the same log is granted it, and
    # node 3 takes its record after those of epoch e: the log goes on
    r = c[2].run(f"{new} {e + 1}", timeout=300)
    print(r.out)
    res = rogue_result(r.out)
    assert r.rc == 0 and res["dropped"] is False, (r.rc, res)
    out = c[3].run("rdmalogcat -j --headers", timeout=300, check=True).out
    epochs = [(x["lsn"], x["epoch"]) for x in map(json.loads,
                                                   out.splitlines())]
    assert epochs[-3:] == [(nxt, e), (nxt + 1, e), (nxt + 2, e + 1)], \
        epochs
    assert status(c[3])["log"]["epoch"] == e + 1, status(c[3])["log"]
    # a new log of node 1 takes an epoch above the vote: node 3 serves it
    fresh(c, cluster_file())
    assert status(c[1])["log"]["epoch"] >= e + 2, status(c[1])["log"]
    wait_connected(c, 1)


@test
def a_reloaded_voter_votes_only_above_what_it_heard(c):
    """A node whose module was reloaded has forgotten its votes, and votes
    only above every election epoch it heard of once it learned
    (leader-change.rst, "Terms"). Node 3 votes for a rogue node 2 in the
    next epoch, then its module is reloaded; it learns from nodes 1 and 2,
    which heard of that epoch, and shows it as a vote for nobody: a
    candidate in that epoch is refused (before the fix it was granted, a
    second vote in one epoch), and one in the epoch after is granted.
    Its ballot word (rxe: atomics) holds each of the two votes in turn,
    the floor first (leader-change.rst, "Late votes")."""
    fresh(c, cluster_file())
    wait_connected(c, 1)
    wait_connected(c, 3)
    rlnode.wait_learned(c)
    e = status(c[1])["log"]["epoch"]
    c[2].run("rdmalogctl node down", timeout=120, check=True)
    wait_for(lambda: peer(c[3], 2)["state"] != "connected", timeout=WAIT,
             interval=1, what="node 3 lost node 2")
    as_2 = "-a 198.18.0.3 -n 2 -d 3"
    v = ask_vote(c[2], f"{as_2} --vote {e + 1} --vote-pos-epoch {e}")
    assert v["reason"] == "granted" and v["vote_epoch"] == e + 1, v
    wait_for(lambda: election_epoch(c[1]) >= e + 1, timeout=WAIT,
             interval=1, what="node 1 heard of epoch e+1")
    c[3].run("rdmalogctl node down && rmmod rdmalog && modprobe rdmalog",
             timeout=180, check=True)
    c[3].put(cluster_file(), CONF)
    c[3].run(f"rdmalogctl apply {CONF}", timeout=120, check=True)
    el = status(c[3])["election"]
    assert el["learned"] is False and el["vote"] is None, el
    c[2].run("rdmalogctl node up", timeout=120, check=True)
    rlnode.wait_learned(c, nodes=(3,))
    assert status(c[3])["election"]["vote"] == {"epoch": e + 1, "for": 0}, \
        status(c[3])["election"]
    # the ballot word (rxe: atomics) takes that floor too, as the
    # device holds it (before the fix it stayed at epoch 0)
    seen = []

    def floor_in_word(want):
        seen[:] = [status(c[3])["ballot"]]
        return seen[0]["state"] == "ready" and \
            (seen[0]["epoch"], seen[0]["for"]) == want
    try:
        wait_for(lambda: floor_in_word((e + 1, 0)), timeout=WAIT,
                 interval=1, what="node 3's ballot word at (e+1, nobody)")
    except AssertionError as err:
        raise AssertionError(f"{err}: {seen}") from None
    c[2].run("rdmalogctl node down", timeout=120, check=True)
    wait_for(lambda: peer(c[3], 2)["state"] != "connected", timeout=WAIT,
             interval=1, what="node 3 lost node 2 again")
    v = ask_vote(c[2], f"{as_2} --vote {e + 1} --vote-pos-epoch {e}")
    assert v["reason"] == "voted" and v["vote_epoch"] == e + 1 and \
        v["vote_for"] == 0, v
    v = ask_vote(c[2], f"{as_2} --vote {e + 2} --vote-pos-epoch {e}")
    assert v["reason"] == "granted" and v["vote_epoch"] == e + 2 and \
        v["vote_for"] == 2, v
    wait_for(lambda: floor_in_word((e + 2, 2)), timeout=WAIT, interval=1,
             what="node 3's ballot word at (e+2, node 2)")
    fresh(c, cluster_file())


@test
def a_winner_votes_for_nobody_until_it_leads(c):
    """Node 2 wins an election and is held for 4 s before it leads (delay
    point elect_lead). A rogue candidate asks it for its vote in the epoch
    after: it is refused (leading), where before it was granted and node
    2 would then have led its own epoch having voted in a later one, for
    a log without what it is about to commit. Once it leads, node 2's
    vote is still its own, and its last change counts the 4 s in its
    reconciliation."""
    fresh(c, cluster_file())
    wait_connected(c, 1)
    wait_connected(c, 3)
    rlnode.wait_learned(c)
    e = status(c[1])["log"]["epoch"]
    c[1].run("rdmalogctl node down", timeout=120, check=True)
    wait_for(lambda: peer(c[2], 1)["state"] != "connected", timeout=WAIT,
             interval=1, what="node 2 lost node 1")
    c[2].run("dmesg -c >/dev/null", timeout=60, check=True)
    rlnode.inject(c[2], "elect_lead", 4000)
    job = c[2].spawn("rdmalogctl node promote; echo rc=$?", timeout=300)
    wait_for(lambda: f"node 2: won epoch {e + 1}" in
             c[2].run("dmesg", timeout=60, check=True).out,
             timeout=WAIT, interval=0.2, what="node 2 won")
    v = ask_vote(c[1], f"-a 198.18.0.2 -n 1 -d 2 --vote {e + 2} "
                 f"--vote-pos-epoch {e}")
    assert v["reason"] == "leading" and v["vote_epoch"] == e + 1 and \
        v["vote_for"] == 2, v
    assert job.wait(300).out.split()[-1] == "rc=0", job.output()
    rlnode.inject(c[2], "elect_lead", 0)
    st = status(c[2])
    assert st["node"]["role"] == "primary" and \
        st["log"]["epoch"] == e + 1, st
    assert st["election"]["vote"] == {"epoch": e + 1, "for": 2}, st
    # the hold is part of the reconciliation (from the votes to the
    # epoch-start record committed, the change of role included)
    ch = st["last_change"]
    assert ch["epoch"] == e + 1 and ch["reconcile_ms"] >= 4000, ch
    fresh(c, cluster_file())


@test
def a_removed_record_is_not_held(c):
    """The truncation generation (protocol.rst, "Record header"). With
    durability all and node 2 down, two concurrent appends on node 1 are
    written to node 3's ring and removed at their commit timeout; with
    quorum, the next record takes the first one's LSN at the same length
    and commits. The second removed record is still in node 3's ring
    right after it, with the next LSN, the epoch and both CRCs right: only
    its older generation tells it apart. Node 3's position, as its VOTE
    says, ends at the committed record (generation 1), so a candidate at
    that position gets the vote, and one of generation 0 is behind."""
    fresh(c, rlnode.cluster_file(cluster=CLUSTER, durability="all"))
    wait_connected(c, 1)
    wait_connected(c, 3)
    rlnode.wait_learned(c)
    c[2].run("rdmalogctl node down", timeout=120, check=True)
    wait_for(lambda: peer(c[1], 2)["state"] != "connected", timeout=WAIT,
             interval=1, what="node 1 lost node 2")
    n = status(c[1])["log"]["next_lsn"]
    r = c[1].run("(echo removed-1 | rdmalogcat -a) 2>/tmp/e1 & "
                 "(echo removed-2 | rdmalogcat -a) 2>/tmp/e2 & wait; "
                 "cat /tmp/e1 /tmp/e2", timeout=300)
    assert r.out.count("timed out") == 2, r.out
    assert status(c[1])["log"]["next_lsn"] == n, status(c[1])["log"]
    c[1].run("rdmalogctl log set durability quorum", timeout=60, check=True)
    assert append(c[1], ["written-1"]) == [n]
    wait_commit(c, n + 1, nodes=(1, 3))
    e = status(c[3])["log"]["epoch"]
    c[1].run("rdmalogctl node down", timeout=120, check=True)
    as_2 = "-a 198.18.0.3 -n 2 -d 3"
    v = ask_vote(c[2], f"{as_2} --vote {e + 1} --vote-pos-epoch {e}")
    assert v["reason"] == "behind", v
    assert v["pos"] == {"epoch": e, "gen": 1, "lsn": n}, v
    v = ask_vote(c[2], f"{as_2} --vote {e + 1} --vote-pos-epoch {e} --vote-gen 1")
    assert v["reason"] == "granted" and v["pos"] == \
        {"epoch": e, "gen": 1, "lsn": n}, v
    fresh(c, cluster_file())


@test
def a_cas_on_a_closed_word_is_caught(c):
    """Only its owner changes a closed ballot word (leader-change.rst,
    "Open and closed"): a rogue node 2, granted node 3's word while node
    3 follows node 1 (the word closed), compare-and-swaps a vote for
    itself in epoch e + 5 into it, which node 3's NIC executes. Node 3
    notices when it next acts on the word (node 1 gone, it tries to open
    it): it takes the vote as its own, conservatively (it fences every
    primary below e + 5), and uses the word no more (off: votes by
    message). Node 3's module is reloaded after, for the tests that
    follow."""
    fresh(c, cluster_file())
    wait_connected(c, 1)
    wait_connected(c, 3)
    rlnode.wait_learned(c)
    c[2].run("rdmalogctl node down", timeout=120, check=True)
    wait_for(lambda: peer(c[3], 2)["state"] != "connected", timeout=WAIT,
             interval=1, what="node 3 lost node 2")
    wait_for(lambda: status(c[3])["ballot"]["state"] == "ready",
             timeout=WAIT, interval=1, what="node 3's ballot word ready")
    e = status(c[1])["log"]["epoch"]
    args = f"-a 198.18.0.3 -n 2 -d 3 -c {CLUSTER} -C {CAPACITY}"
    try:
        c[3].run("dmesg -c >/dev/null", timeout=30, check=True)
        r = c[2].run(f"{ROGUE} {args} --ballot-probe tamper:{e + 5}",
                     timeout=300)
        print(r.out)
        res = rogue_result(r.out)
        assert r.rc == 0 and res["pass"], (r.rc, res)
        # swapped in, into a closed word
        assert res["cas_old"] == res["word"] and not res["word"] & 1, res
        b = status(c[3])["ballot"]
        assert b["state"] == "ready" and not b["open"], b
        c[1].run("rdmalogctl node down", timeout=120, check=True)
        wait_for(lambda: status(c[3])["ballot"]["state"] == "off",
                 timeout=WAIT, interval=1,
                 what="node 3 turns its changed word off")
        assert rlnode.stats(c[3])["ballot_tampered"] == 1
        v = status(c[3])["election"]["vote"]
        assert v == {"epoch": e + 5, "for": 2}, v
        d = c[3].run("dmesg", timeout=60, check=True).out
        assert "compare-and-swap votes off" in d and \
            f"node 3: voted for node 2 in epoch {e + 5} by " \
            "compare-and-swap (found in its closed word)" in d, d
    finally:
        c[3].run("rdmalogctl node down 2>/dev/null; rmmod rdmalog; "
                 "modprobe rdmalog", timeout=120, check=True)


@test
def two_candidates_race_for_one_word(c):
    """Two candidates for one epoch on one open ballot word
    (protocol.rst, "By compare-and-swap"): node 1 down, node 3's word is
    open; node 2, promoted, reads it and judges it to grant, then waits
    before its compare-and-swap (inject_elect_cas_ms). Meanwhile a rogue
    node 1 swaps a vote for itself in the same epoch into the word, from
    the value it read. Node 2's swap then fails on the changed word: it
    counts the race, judges the word again from what the swap returned
    (the rogue's vote, on the same block), is refused ("voted") and
    loses; node 3 takes the rogue's vote as its own (the word is not
    tampered with: it was open). Exactly one vote per epoch, whoever
    swaps first."""
    fresh(c, cluster_file())
    wait_connected(c, 3)
    rlnode.wait_learned(c)
    e = status(c[1])["log"]["epoch"]
    c[1].run("rdmalogctl node down", timeout=120, check=True)
    wait_for(lambda: status(c[3])["ballot"]["open"], timeout=WAIT,
             interval=0.5, what="node 3's ballot word open")
    s2, s3 = rlnode.stats(c[2]), rlnode.stats(c[3])
    rlnode.inject(c[2], "elect_cas", 8000)
    c[2].run("dmesg -c >/dev/null", timeout=30, check=True)
    try:
        job = c[2].spawn("rdmalogctl node promote", timeout=300)
        wait_for(lambda: f"node 2: stands for epoch {e + 1}" in
                 c[2].run("dmesg", timeout=60).out, timeout=WAIT,
                 interval=0.2, what="node 2 stands")
        r = c[1].run(f"{ROGUE} -a 198.18.0.3 -n 1 -d 3 -c {CLUSTER} "
                     f"-C {CAPACITY} --ballot-probe tamper:{e + 1}",
                     timeout=300)
        print(r.out)
        res = rogue_result(r.out)
        assert r.rc == 0 and res["pass"], (r.rc, res)
        # the rogue's swap succeeded, on the open word
        assert res["cas_old"] == res["word"] and res["word"] & 1, res
        p = job.wait(timeout=300)
    finally:
        rlnode.inject(c[2], "elect_cas", 0)
    print(p.out)
    assert p.rc != 0 and "voted in this epoch" in p.out, (p.rc, p.out)
    t2 = rlnode.stats(c[2])
    assert (t2["cas_races"] - s2["cas_races"],
            t2["cas_refused"] - s2["cas_refused"],
            t2["cas_votes"] - s2["cas_votes"]) == (1, 1, 0), (s2, t2)
    assert status(c[2])["node"]["role"] == "backup"
    d = c[2].run("dmesg", timeout=60, check=True).out
    assert f"node 2: node 3's ballot word refuses it a vote in epoch " \
        f"{e + 1}" in d, d
    wait_for(lambda: status(c[3])["election"]["vote"] ==
             {"epoch": e + 1, "for": 1}, timeout=WAIT, interval=0.5,
             what="node 3 takes the rogue's vote")
    assert rlnode.stats(c[3])["ballot_tampered"] == s3["ballot_tampered"]
    assert rlnode.stats(c[3])["vote_reqs_received"] == \
        s3["vote_reqs_received"]
