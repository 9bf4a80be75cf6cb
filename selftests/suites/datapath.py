# SPDX-License-Identifier: GPL-2.0
"""Data path: the primary RDMA-WRITEs records into the backups' rings,
commits by the durability rule, and the backups expose the committed log.

Three soft-RoCE nodes, node 1 primary. States are polled; nothing passes or
fails on a clock except the commit timeout itself, whose bound is checked
loosely (the error must come, and not before the timeout).
"""

import hashlib
import json

from testlib import test, wait_for

NODES = 3
TIMEOUT = 900
WAIT = 180
CONF = "/etc/rdmalog.conf"


def cluster_file(capacity="1M", durability="quorum", max_record="64K",
                 timeout=3000, nodes=(1, 2, 3)):
    return ("cluster 44\n"
            f"log capacity {capacity} max-record {max_record} "
            f"durability {durability} commit-timeout {timeout}\n"
            "timers heartbeat 250 peer-timeout 5000\n"
            + "".join(f"node {i} address 198.18.0.{i}\n" for i in nodes)
            + "primary 1\n")


def status(nd):
    return json.loads(nd.run("rdmalogctl -j status", timeout=60,
                             check=True).out)


def stats(nd):
    return json.loads(nd.run("rdmalogctl -j stats", timeout=60,
                             check=True).out)


def effective(nd):
    return status(nd)["durability"]["effective"]


def log_of(nd):
    st = status(nd)
    return st["log"]


def records(nd):
    """[(lsn, sha256 of payload)] of every committed record of nd."""
    out = nd.run("rdmalogcat -j", timeout=300, check=True).out
    recs = []
    for line in out.splitlines():
        r = json.loads(line)
        recs.append((r["lsn"], r.get("len"), r.get("data")))
    return recs


def setup(c):
    for nd in c:
        nd.run("modprobe rdmalog", timeout=60, check=True)


def up(c, text, nodes=(1, 2, 3)):
    for n in nodes:
        c[n].run("rdmalogctl node down 2>/dev/null; true", timeout=120)
    for n in nodes:
        c[n].put(text, CONF)
        c[n].run(f"rdmalogctl apply {CONF}", timeout=120, check=True)

    wait_for(lambda: all(p["state"] == "connected"
                         for p in status(c[1])["peers"]
                         if p["id"] in nodes),
             timeout=WAIT, interval=2, what="primary connected")


def wait_commit_everywhere(c, lsn, nodes=(1, 2, 3)):
    wait_for(lambda: all(log_of(c[n])["commit_lsn"] >= lsn for n in nodes),
             timeout=WAIT, interval=1,
             what=f"commit LSN {lsn} on nodes {nodes}")


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
