# SPDX-License-Identifier: GPL-2.0
"""What the suites ask of a node: its status, stats and log, and a cluster
file to configure it with (rdmalogctl apply). Shared by the multi-VM suites
so that they read the same JSON the same way."""

import json

CONF = "/etc/rdmalog.conf"


def cluster_file(capacity="1M", durability="quorum", max_record="64K",
                 timeout=3000, nodes=(1, 2, 3), *, cluster=44, primary=1,
                 heartbeat=250, peer_timeout=5000, addr="198.18.0.{}"):
    """A cluster file: node N at addr.format(N), `primary` the primary."""
    return (f"cluster {cluster}\n"
            f"log capacity {capacity} max-record {max_record} "
            f"durability {durability} commit-timeout {timeout}\n"
            f"timers heartbeat {heartbeat} peer-timeout {peer_timeout}\n"
            + "".join(f"node {i} address {addr.format(i)}\n" for i in nodes)
            + f"primary {primary}\n")


def apply(nd, text, conf=CONF):
    nd.put(text, conf)
    nd.run(f"rdmalogctl apply {conf}", timeout=120, check=True)


def status(nd):
    return json.loads(nd.run("rdmalogctl -j status", timeout=60,
                             check=True).out)


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
