# SPDX-License-Identifier: GPL-2.0
"""Smoke test of the VM harness itself: two nodes, soft-RoCE between them,
cable pull/replug, crash + cold boot, loading rdmalog.ko, kselftest TAP."""

import cluster
from testlib import ksft, parse_tap, skip, test

NODES = 2
TIMEOUT = 180

N1, N2 = "198.18.0.1", "198.18.0.2"


def rxe_active(node):
    """rxe0's port is ACTIVE (it drops to DOWN while the cable is out)."""
    return "state ACTIVE" in node.run("rdma link show rxe0/1", timeout=30).out


@test
def rxe0_active(c):
    for nd in c:
        r = nd.run("rdma link show rxe0/1", timeout=30, check=True)
        assert "state ACTIVE" in r.out, f"{nd.name}: {r.out}"
        r = nd.run("ibv_devices", timeout=30, check=True)
        assert "rxe0" in r.out, f"{nd.name}: userspace verbs: {r.out}"


@test
def ping(c):
    c[1].run(f"ping -c 3 -W 5 {N2}", timeout=60, check=True)
    c[2].run("ping -c 3 -W 5 node1", timeout=60, check=True)


@test(timeout=300)
def rping(c):
    """rdma_cm connection + RDMA READ/WRITE/SEND between the nodes."""
    srv = c[2].spawn(f"rping -s -a {N2} -C 5 -v", timeout=240)
    # the server may not listen yet: retry the client until it connects
    cli = c[1].wait_until(f"rping -c -a {N2} -C 5 -v", timeout=120,
                          interval=1)
    assert cli.out.count("ping data:") == 5, cli.out
    res = srv.wait(120)
    assert res.ok, f"rping server rc={res.rc}: {res.out}"
    assert res.out.count("server ping data:") == 5, res.out


@test(timeout=300)
def ib_write_lat(c):
    """perftest RDMA WRITE latency, 100 iterations (timing not checked)."""
    srv = c[2].spawn("ib_write_lat -d rxe0 -n 100 -F", timeout=240)
    cli = c[1].wait_until(f"ib_write_lat -d rxe0 -n 100 -F {N2}",
                          timeout=120, interval=1)
    assert "t_typical" in cli.out, cli.out
    res = srv.wait(120)
    assert res.ok, f"ib_write_lat server rc={res.rc}: {res.out}"


@test(timeout=300)
def link_down_up(c):
    c[1].run(f"ping -c 1 -W 5 {N2}", timeout=30, check=True)
    c[2].link(False)
    try:
        r = c[1].run(f"ping -c 3 -W 2 {N2}", timeout=60)
        assert r.rc != 0, f"ping worked with node2's cable pulled:\n{r.out}"
        r = c[2].run("cat /sys/class/net/eth0/carrier", timeout=30)
        assert r.out.strip() == "0", f"node2 still has carrier: {r.out}"
    finally:
        c[2].link(True)
    c[1].wait_until(f"ping -c 1 -W 2 {N2}", timeout=60)
    c[2].wait_until("rdma link show rxe0/1 | grep -q 'state ACTIVE'",
                    timeout=60)


@test(timeout=300)
def blackhole(c):
    """Silent partition with tc in the guest (carrier stays up)."""
    c[2].blackhole(True)
    try:
        r = c[1].run(f"ping -c 3 -W 2 {N2}", timeout=60)
        assert r.rc != 0, f"ping crossed the blackhole:\n{r.out}"
        assert rxe_active(c[2]), "rxe0 should stay ACTIVE in a blackhole"
    finally:
        c[2].blackhole(False)
    c[1].wait_until(f"ping -c 1 -W 2 {N2}", timeout=60)


@test(timeout=400)
def kill_and_boot(c):
    c[2].run("echo before > /tmp/marker", timeout=30, check=True)
    boots = c[2].boots
    c[2].kill()
    assert not c[2].alive
    r = c[1].run(f"ping -c 2 -W 2 {N2}", timeout=60)
    assert r.rc != 0, "node2 answers ping after kill"
    c[2].boot()
    assert c[2].boots == boots + 1
    r = c[2].run("cat /tmp/marker", timeout=30)
    assert r.rc != 0, "tmpfs survived a cold boot?"
    assert c[2].run("hostname", timeout=30).out.strip() == "node2"
    c[2].wait_until("rdma link show rxe0/1 | grep -q 'state ACTIVE'",
                    timeout=60)
    c[1].wait_until(f"ping -c 1 -W 2 {N2}", timeout=60)
    # the killed boot must not count as a kernel problem
    assert not c.kernel_log_problems(), c.kernel_log_problems()


@test
def modprobe_rdmalog(c):
    if c[1].run("modinfo -F filename rdmalog", timeout=30).rc != 0:
        skip("rdmalog.ko not built (not in the initramfs)")
    c[1].run("modprobe rdmalog", timeout=60, check=True)
    r = c[1].run("grep -w '^rdmalog' /proc/modules", timeout=30)
    assert r.rc == 0, "rdmalog not in /proc/modules after modprobe"
    c[1].run("modprobe -r rdmalog", timeout=60, check=True)
    r = c[1].run("grep -w '^rdmalog' /proc/modules", timeout=30)
    assert r.rc != 0, "rdmalog still loaded after modprobe -r"


FAKE_KSFT = """#!/bin/sh
echo "TAP version 13"
echo "1..2"
echo "# a kselftest-style binary"
echo "ok 1 harness_pass"
echo "ok 2 harness_xfail # XFAIL expected failure"
exit 0
"""


@test
def ksft_tap(c):
    """ksft() turns every TAP case of a guest binary into a result."""
    c[1].put(FAKE_KSFT, "/tmp/fake_ksft", mode=0o755)
    res = ksft(c[1], "/tmp/fake_ksft", timeout=60)
    assert [(r.name, r.status) for r in res] == [
        ("harness_pass", "pass"), ("harness_xfail", "pass")], res
    # the parser on failures and skips (host only: no results reported)
    got, plan = parse_tap("1..3\nok 1 a # SKIP no hw\n# why\nnot ok 2 b\n"
                          "ok 3 global.c\n")
    assert plan == 3
    assert [(r.name, r.status) for r in got] == [
        ("a", "skip"), ("b", "fail"), ("global.c", "pass")], got
    assert got[1].diag == ["# why"], got[1].diag


# An excerpt of a real one (a 6.12 guest under TCG, 2026-12-01).
ARTIFACT = ("WARNING: CPU: 0 PID: 95 at arch/x86/kernel/traps.c:1120 "
            "exc_debug_kernel+0xca/0x160")


@test
def emulator_artifact_is_recognised_narrowly(c):
    """Only the artifact and its aftermath on its own node make a rerun."""
    died = "QEMU exited unexpectedly (status 0: guest panicked)"
    panic = "[ 73.6] Kernel panic - not syncing: kernel: panic_on_warn set"
    art = f"node3 boot 1: [ 73.6] {ARTIFACT}"
    ea = cluster.emulator_artifact
    assert ea([art]) == art
    assert ea([art, f"node3 boot 1: {panic}", f"node3 boot 1: {died}"]) == art
    for other in ["node3 boot 1: [ 70.1] BUG: kernel NULL pointer",
                  f"node1 boot 1: {died}",
                  "node3 boot 1: [ 73.6] WARNING: CPU: 0 PID: 95 at "
                  "kmod/conn.c:10 rdmalog_conn_close+0x1/0x2",
                  "node3 boot 1: [ 73.6] WARNING: CPU: 0 PID: 95 at "
                  "arch/x86/kernel/traps.c:1120 exc_debug_user+0x1/0x2",
                  "node3 boot 1: [ 73.6] WARNING: CPU: 0 PID: 95 at "
                  "drivers/infiniband/sw/rxe/rxe_resp.c:99 "
                  "rxe_responder+0x1/0x2 [rdma_rxe]"]:
        assert ea([art, other]) is None, other
        assert ea([other]) is None, other
    assert ea([]) is None
    # soft-RoCE's completer warning (cluster.py: EMULATOR_ARTIFACTS)
    rxe = ("node1 boot 2: [ 88.2] WARNING: CPU: 1 PID: 0 at drivers/"
           "infiniband/sw/rxe/rxe_comp.c:827 rxe_completer+0x5a1/0xc40 "
           "[rdma_rxe]")
    assert ea([rxe, f"node1 boot 2: {panic}", f"node1 boot 2: {died}"]) == rxe
    assert ea([rxe, f"node2 boot 1: {died}"]) is None


@test
def a_stalled_nic_is_a_problem(c):
    """A guest whose NIC stopped sending fails the test at the watchdog's
    first line (6.1 prints it without a WARNING), and is no artifact."""
    line = ("node1 boot 3: [  107.154253] virtio_net virtio0 eth0: NETDEV "
            "WATCHDOG: CPU: 0: transmit queue 0 timed out 5532 ms")
    assert cluster._PROBLEM_RE.search(line), line
    assert cluster.emulator_artifact([line]) is None
    assert not cluster._PROBLEM_RE.search(
        "node1 boot 3: [ 9.1] virtio_net virtio0 eth0: link up")


_artifact_attempts = []


@test
def emulator_artifact_reruns_the_test(c):
    """The first attempt fails with nothing but an emulator artifact on a
    console (written to /dev/kmsg here): the runner must discard it and
    run this test again, which then passes."""
    _artifact_attempts.append(c[1].boots)
    if len(_artifact_attempts) == 1:
        c[1].run(f"echo '<4>{ARTIFACT}' > /dev/kmsg", timeout=30, check=True)
        c[1].wait_until("dmesg | grep -q 'at arch/x86/kernel/traps.c'",
                        timeout=30)
        raise AssertionError("the first attempt fails with an artifact")
    assert len(_artifact_attempts) == 2, _artifact_attempts
