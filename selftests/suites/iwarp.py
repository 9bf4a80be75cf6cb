# SPDX-License-Identifier: GPL-2.0
"""The data path on soft-iWARP (siw, built out of tree by "make siw").

iWARP has no WRITE WITH IMMEDIATE and a WRITE's completion there does not
prove that the bytes reached the backup's memory, so the primary asks for
ACKs and commits on them (ACK mode); siw also registers at most 256 pages
of 4 KiB per fast registration, so the ring is registered in pieces.
Three nodes, node 1 primary, quorum; states are polled.
"""

import os

from testlib import skip, test, wait_for
import rlnode
from rlnode import status

NODES = 3
TIMEOUT = 600
WAIT = 180
APPEND = "rdmalog_vm.siw=1"
CONF = "/etc/rdmalog.conf"
SIW_KO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                      "..", "build", "siw", "siw.ko")


def cluster_file(capacity="1M", durability="quorum"):
    return rlnode.cluster_file(capacity, durability, timeout=5000,
                               cluster=45)


def setup(c):
    if not os.path.exists(SIW_KO):
        return
    for nd in c:
        nd.run("modprobe rdmalog", timeout=60, check=True)


def up(c, text):
    for nd in c:
        nd.run("rdmalogctl node down 2>/dev/null; dmesg -c >/dev/null; true",
               timeout=120)
    for nd in c:
        nd.put(text, CONF)
        nd.run(f"rdmalogctl apply {CONF}", timeout=120, check=True)
    wait_for(lambda: all(f"node 1: node {b} granted its ring" in
                         c[1].run("dmesg", timeout=60, check=True).out
                         for b in (2, 3)),
             timeout=WAIT, interval=2, what="both backups granted rings")


@test
def siw_device_is_iwarp(c):
    if not os.path.exists(SIW_KO):
        skip("build/siw/siw.ko not built (make siw)")
    out = c[1].run("rdma link show", timeout=60, check=True).out
    assert "siw0/1" in out and "ACTIVE" in out, out
    assert "rxe" not in out, out


@test
def siw_replicates_in_ack_mode(c):
    if not os.path.exists(SIW_KO):
        skip("build/siw/siw.ko not built (make siw)")
    up(c, cluster_file())
    out = c[1].run("dmesg", timeout=60, check=True).out
    for b in (2, 3):
        assert (f"node 1: node {b} granted its ring (1048576 bytes"
                in out), out
        assert "in sync, replicating (ACK mode)" in out, out
    r = c[1].run("for i in $(seq 1 40); do echo siw-$i-$(head -c $((i*53)) "
                 "/dev/zero | tr '\\0' y); done | rdmalogcat -a",
                 timeout=300, check=True)
    assert [int(x) for x in r.out.split()] == list(range(1, 41)), r.out
    wait_for(lambda: all(status(c[n])["log"]["commit_lsn"] == 41
                         for n in (2, 3)),
             timeout=WAIT, interval=2, what="backups committed 40 records")
    base = c[1].run("rdmalogcat -j", timeout=120, check=True).out
    assert len(base.splitlines()) == 40
    for n in (2, 3):
        assert c[n].run("rdmalogcat -j", timeout=120,
                        check=True).out == base, n


@test
def siw_larger_ring_in_pieces(c):
    """8 MiB: 4 MiB chunks, registered as 8 MRs of 1 MiB on siw."""
    if not os.path.exists(SIW_KO):
        skip("build/siw/siw.ko not built (make siw)")
    up(c, cluster_file(capacity="8M"))
    out = c[1].run("dmesg", timeout=60, check=True).out
    for b in (2, 3):
        assert (f"node 1: node {b} granted its ring (8388608 bytes, "
                "8 segments): in sync" in out), out
    r = c[1].run("head -c 45000 /dev/urandom | base64 -w 0 | rdmalogcat -a",
                 timeout=120, check=True)
    assert r.out.split() == ["1"], r.out
    wait_for(lambda: all(status(c[n])["log"]["commit_lsn"] == 2
                         for n in (2, 3)),
             timeout=WAIT, interval=2, what="backups committed")
    base = c[1].run("rdmalogcat -j", timeout=120, check=True).out
    for n in (2, 3):
        assert c[n].run("rdmalogcat -j", timeout=120,
                        check=True).out == base, n
