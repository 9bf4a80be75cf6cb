#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench: rdmalog append latency and throughput next to perftest.

Boots three QEMU guests (soft-RoCE rxe0 on a private switch), and two
more for the 5-node configuration only, and, in one run on the same VMs:

  * for each configuration (3 nodes durability quorum, 2 nodes durability
    all, 3 nodes durability async, 5 nodes durability quorum) applies a
    cluster file on the nodes of the configuration and runs rdmalog-bench
    on the primary (node 1), timed only (no read-back): 3 nodes quorum at
    64 B with 1, THREADS and 16 writers, every other size and 2 nodes all
    with THREADS writers, 3 nodes async with 1 writer at 64 B (the local
    software floor: an append commits without waiting for backups), 5
    nodes quorum at 64 B with 1 and THREADS writers and at 4 KiB with
    THREADS; then one run per configuration with every record read back
    and checked (--verify), the correctness check, marked "verify";
  * for 3 nodes quorum at 64 B, right after its 1-writer row, the open
    loop (rdmalog-bench -r RATE, marked "open"): max(4, THREADS) writers
    offer 50% and 90% of that row's appends/s in all, at fixed times, and
    each append's latency counts from when it was due (a stall is charged
    to every append it held back: no coordinated omission);
  * the three 3-node configurations run first on the three guests alone;
    then nodes 4 and 5 boot, 5 nodes quorum runs, and they are powered
    off again, so that the perftest baselines run on the three guests, as
    the 3-node rows did;
  * around the 3 nodes quorum 64 B THREADS-writer row, and once more with
    a reader (rdmalogcat -f) on node 2, the backup-side work: the backups'
    rdmalogctl stats and /proc/stat before and after, above an idle
    baseline of about the run's length taken just before (nothing
    appended), per 1,000 commits;
  * as the baselines of the same link, perftest between node 1 and node 2
    (logs down): ib_write_lat -s SIZE -n ITERS and ib_write_bw -s SIZE -n
    ITERS at every size; at 64 B ib_write_lat -I 0 (no inline) and
    ib_send_lat; at 64 KiB ib_write_bw from node 1 to node 2 and to node 3
    at the same time (the primary writes both backups);
  * what a user would pick instead (selftests/bench_alt.py, its own
    section of the output, results.json's "alternatives", OUT/drbd.png):
    DRBD protocol C over TCP with fio at QD1 and QD16 beside rdmalog 2
    nodes all at 4 KiB with 1 and 16 writers, and a TCP ping-pong beside
    ib_write_lat's round trip.

Before measuring a configuration it waits until the primary has the
requested durability in force (`rdmalogctl wait durable`: durability
effective == requested, that is enough backups connected, granted their
rings and in sync), then until every backup is in sync, so every append is
a replicated commit: it returns once floor(N/2) (quorum) or N - 1 (all)
backups hold the record (async: none). The durability in force after each
run is printed next to its numbers; a configuration that never reached it
is measured anyway, marked in the table, and fails the run.

Output: the environment (guest vCPUs, accel, the module's CRC32C driver,
the QP's inline size, poll_us, notify_kib, host load), a side-by-side table
(the open-loop rows with their offered rate in the run column, achieved in
appends/s), the perftest baselines, the goals (each measured value beside
its goal) and the backup-side work on stdout; OUT/results.json,
OUT/latency.png, OUT/throughput.png, OUT/latency-writers.png (p50, p99,
p99.9 against writers at 64 B, 3 and 5 nodes quorum) and
OUT/latency-sizes.png (the same against size, THREADS writers) (gnuplot;
the data and scripts are kept next to them). OUT defaults to build/bench.

Nothing here passes or fails on a clock, nor on a goal: the exit status is
non-zero only when an rdmalog benchmark could not run, an append failed or
did not verify, or a kernel problem showed up on a console. A perftest
baseline that could not be measured is shown as "-" and said why
(ib_write_lat runs at most 100 iterations above 4 KiB: rxe under TCG
stalls for minutes on large messages at more).
"""

import argparse
import copy
import datetime
import json
import math
import statistics
import os
import platform
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "vm"))

from cluster import Cluster, CommandFailed, VMError  # noqa: E402
from bench_fmt import num, print_grid, ratio  # noqa: E402
import bench_alt  # noqa: E402  (what a user would pick instead: DRBD, TCP)

CLUSTER_ID = 4242
PRIMARY = 1
READER = 2                  # the backup that gets a reader (rdmalogcat -f)
SIZES = (64, 4096, 65536)
WRITERS_SMALL = (1, 16)     # more writer rows at 64 B, beside --threads
SMALL = 64                  # the size of those rows and of the goals'
VERIFY_SIZE = 4096          # the verified run of each configuration
OPEN_LOADS = (0.5, 0.9)     # open-loop rows: shares of the 1-writer rate
OPEN_THREADS = 4            # their writers (at least; --threads if more)
BOOT_FIRST = 3              # guests booted at the start; more on demand
CONFIGS = (
    {"name": "3 nodes, quorum", "key": "3n-quorum", "nodes": 3,
     "durability": "quorum", "small_writers": WRITERS_SMALL, "work": True,
     "open_loop": True},
    {"name": "2 nodes, all", "key": "2n-all", "nodes": 2,
     "durability": "all"},
    # the local software floor: an append commits without waiting for
    # the backups (they are still written)
    {"name": "3 nodes, async", "key": "3n-async", "nodes": 3,
     "durability": "async", "only": (SMALL, 1)},
    # last: its guests 4 and 5 are booted for it and powered off after,
    # so that everything else runs on the three guests alone; few rows
    # (the 2-core host runs five guests for them)
    {"name": "5 nodes, quorum", "key": "5n-quorum", "nodes": 5,
     "durability": "quorum", "small_writers": (1,), "sizes": (SMALL, 4096)},
)
RECORD_HDR = 48             # sizeof(struct rdmalog_ring_record)
MIB = 1 << 20


def say(text):
    print(f"==> {text}", flush=True)


def fmt_size(n):
    if n % MIB == 0:
        return f"{n // MIB} MiB"
    if n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n} B"


def parse_size(text):
    m = re.fullmatch(r"(\d+)\s*([kKmM]?)(i?B)?", text.strip())
    if not m:
        raise argparse.ArgumentTypeError(f"bad size {text!r}")
    return int(m.group(1)) << {"": 0, "k": 10, "m": 20}[m.group(2).lower()]


def ring_bytes(size):
    return (RECORD_HDR + size + 7) // 8 * 8


def plan(cfg, args):
    """The runs of a configuration, in order: dicts of size, threads and
    kind ("timed"; "reader": timed with a reader on node READER; "open":
    the open loop, offering load x the 1-writer timed row's appends/s
    (spec["rate"], set once that row has run: open_rate()); "verify":
    every record read back, the correctness check), work: measure the
    backup-side work around it."""
    runs = []
    if cfg.get("only"):
        size, threads = cfg["only"]
        runs.append({"size": size, "threads": threads, "kind": "timed"})
    else:
        for size in args.sizes:
            if cfg.get("sizes") and size not in cfg["sizes"]:
                continue
            writers = [args.threads]
            if size == SMALL and cfg.get("small_writers"):
                writers = sorted(set(writers) | set(cfg["small_writers"]))
            for t in writers:
                work = bool(cfg.get("work")) and size == SMALL and \
                    t == args.threads
                runs.append({"size": size, "threads": t, "kind": "timed",
                             "work": work})
                if work:
                    runs.append({"size": size, "threads": t,
                                 "kind": "reader", "work": True})
                if cfg.get("open_loop") and size == SMALL and t == 1:
                    # enough writers for the rate: each has one append
                    # outstanding, and the rate is near one writer's
                    runs += [{"size": size, "threads":
                              max(OPEN_THREADS, args.threads),
                              "kind": "open", "load": load}
                             for load in OPEN_LOADS]
    vsize = VERIFY_SIZE if VERIFY_SIZE in args.sizes else args.sizes[0]
    if cfg.get("sizes") and vsize not in cfg["sizes"]:
        vsize = next((s for s in args.sizes if s in cfg["sizes"]), vsize)
    if cfg.get("only"):
        vsize = cfg["only"][0]
    runs.append({"size": vsize, "threads": args.threads, "kind": "verify"})
    return runs


def cluster_file(cfg, capacity):
    # Timers wider than the defaults (100 ms / 1 s): TCG guests under load
    # must not declare each other dead in the middle of a run.
    lines = [f"# rdmalog bench: {cfg['name']}",
             f"cluster {CLUSTER_ID}",
             f"log capacity {capacity // MIB}M max-record 1M",
             f"log durability {cfg['durability']} commit-timeout 5000",
             "timers heartbeat 250 peer-timeout 5000"]
    lines += [f"node {i} address 198.18.0.{i}"
              for i in range(1, cfg["nodes"] + 1)]
    lines.append(f"primary {PRIMARY}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------- perftest

class NotFinite(ValueError):
    """perftest printed inf/nan times or no bandwidth (its timing went
    wrong: worth one more try)."""


def _perftest_row(out, header_word):
    """The numbers of the result line that follows perftest's header."""
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("#bytes") and header_word in line:
            for nxt in lines[i + 1:]:
                f = nxt.split()
                if f and f[0].isdigit():
                    return [float(x) for x in f]
    raise ValueError(f"no result line after a '#bytes ... {header_word}' "
                     f"header in:\n{out[-2000:]}")


def parse_write_lat(out):
    """ib_write_lat: #bytes #iterations t_min t_max t_typical t_avg t_stdev
    99% 99.9% (usec; perftest reports half of the round trip)."""
    v = _perftest_row(out, "t_typical")
    if len(v) < 9:
        raise ValueError(f"short ib_write_lat result: {v}")
    if not all(math.isfinite(x) for x in v):
        # seen once from ib_send_lat under TCG: every time "inf"
        raise NotFinite(f"perftest timed nothing: {v}")
    return {"bytes": int(v[0]), "iterations": int(v[1]), "t_min_us": v[2],
            "t_max_us": v[3], "t_typical_us": v[4], "t_avg_us": v[5],
            "t_stdev_us": v[6], "p99_us": v[7], "p999_us": v[8]}


def parse_write_bw(out):
    """ib_write_bw: #bytes #iterations BW_peak BW_average MsgRate; perftest's
    MB/sec is 2^20 bytes per second."""
    v = _perftest_row(out, "BW average")
    if len(v) < 5:
        raise ValueError(f"short ib_write_bw result: {v}")
    if not all(math.isfinite(x) for x in v) or v[3] <= 0 or v[4] <= 0:
        # seen once under TCG from one of two clients run together
        raise NotFinite(f"perftest timed nothing: {v}")
    return {"bytes": int(v[0]), "iterations": int(v[1]),
            "bw_peak_mib_s": v[2], "bw_avg_mib_s": v[3], "msg_rate_mpps": v[4]}


def perftest_inline(out):
    """The inline size perftest's header reports ("Max inline data"), or
    None, and whether perftest turned inline off for the device (perftest
    4.5 does for rxe, whatever -I says: "Device not recognized to
    implement inline feature. Disabling it")."""
    m = re.search(r"Max inline data\s*:\s*(\d+)", out)
    return (int(m.group(1)) if m else None,
            "not recognized to implement inline" in out)


def perftest_args(tool, size, iters, extra=""):
    # -F: do not fail when the CPU frequency looks inconsistent (it does
    # under TCG); times come from the TSC the guest calibrated.
    return f"{tool} -d rxe0 -F{' ' + extra if extra else ''} -s {size} " \
        f"-n {iters}"


def perftest_timeout(size, iters):
    return 120 + iters * (size // 1024 + 10) // 50


def perftest(c, tool, size, iters, parse, server=2, extra=""):
    """Run perftest tool: server on node server (default 2), client on
    node 1; extra: more options for both sides (-I 0). The client is
    retried only until the server listens (the first 60 s, and only while
    the server runs): a client that fails after that, or a server that
    exits without a successful client, is an error, not a reason to retry
    for the whole timeout; a run that printed inf/nan times is run once
    more. Returns (parsed result or None, error or None)."""
    val, err = perftest_once(c, tool, size, iters, parse, server, extra)
    if val is None and err.startswith("not finite: "):
        val, err = perftest_once(c, tool, size, iters, parse, server, extra)
        if val is not None:
            val["retried"] = "the first run printed inf/nan times"
    return val, err


def perftest_once(c, tool, size, iters, parse, server, extra):
    server, client = c[server], c[1]
    args = perftest_args(tool, size, iters, extra)
    timeout = perftest_timeout(size, iters)
    srv = server.spawn(args, timeout=timeout + 120)
    start = time.monotonic()
    try:
        while True:
            cli = client.run(f"{args} {server.ip}", timeout=timeout)
            if cli.ok:
                break
            if srv.done() or cli.timed_out or \
                    time.monotonic() - start > 60:
                srv.kill()
                sres = srv.wait(60)
                return None, (f"{args}: client rc={cli.rc}"
                              f"{' (timed out)' if cli.timed_out else ''}: "
                              f"{cli.out.strip()[-400:]} | server rc="
                              f"{sres.rc}: {sres.out.strip()[-400:]}")
            time.sleep(1)
        res = srv.wait(120)
        if not res.ok:
            return None, f"{args}: server rc={res.rc}: {res.out[-500:]}"
        val = parse(cli.out)
        val["inline"], val["inline_disabled"] = perftest_inline(cli.out)
        val["command"] = f"{args} {server.ip}"
        return val, None
    except NotFinite as e:
        return None, f"not finite: {args}: {e}"
    except (VMError, ValueError) as e:
        srv.kill()
        return None, f"{args}: {e}"


# perftest's out-of-band TCP port, 18515 (0x4853), listening (state 0A)
LISTENING = ("cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | "
             "grep -qiE ':4853 [0-9a-f]+:0000 0A'")


def perftest_pair(c, tool, size, iters, parse, servers=(2, 3)):
    """Run perftest tool from node 1 to each node of servers at the same
    time: both servers are started and listening first, then node 1 starts
    both clients together; run once more when a client printed inf/nan
    times or no bandwidth. Returns ({"nodeN": parsed result, "sum_mib_s"}
    or None, error or None)."""
    val, err = perftest_pair_once(c, tool, size, iters, parse, servers)
    if val is None and err.startswith("not finite: "):
        val, err = perftest_pair_once(c, tool, size, iters, parse, servers)
        if val is not None:
            val["retried"] = "a client of the first run timed nothing"
    return val, err


def perftest_pair_once(c, tool, size, iters, parse, servers):
    args = perftest_args(tool, size, iters)
    timeout = perftest_timeout(size, iters)
    srvs = {i: c[i].spawn(args, timeout=timeout + 180) for i in servers}

    def stop(why, prefix=""):
        for j in srvs.values():
            j.kill()
        outs = []
        for i, j in srvs.items():
            try:
                r = j.wait(60)
                outs.append(f"server node{i} rc={r.rc}: "
                            f"{r.out.strip()[-300:]}")
            except VMError as e:
                outs.append(f"server node{i}: {e}")
        return None, f"{prefix}{args} (pair): {why} | " + " | ".join(outs)

    try:
        for i in servers:
            c[i].wait_until(LISTENING, timeout=60, interval=0.5)
        ips = " ".join(c[i].ip for i in servers)
        script = (f"for ip in {ips}; do ({args} $ip > /tmp/pt-$ip.out 2>&1;"
                  f" echo $? > /tmp/pt-$ip.rc) & done; wait; "
                  f"for ip in {ips}; do echo \"=== $ip rc=$(cat "
                  f"/tmp/pt-$ip.rc)\"; cat /tmp/pt-$ip.out; done")
        cli = c[1].run(script, timeout=timeout)
        parts = re.split(r"^=== (\S+) rc=(\d*)\s*$", cli.out, flags=re.M)
        outs = {parts[k]: (parts[k + 1], parts[k + 2])
                for k in range(1, len(parts) - 2, 3)}
        val = {}
        for i in servers:
            rc, out = outs.get(c[i].ip, ("?", ""))
            if rc != "0" or cli.timed_out:
                return stop(f"client to node{i} rc={rc}"
                            f"{' (timed out)' if cli.timed_out else ''}: "
                            f"{out.strip()[-400:]}")
            try:
                val[f"node{i}"] = parse(out)
            except NotFinite as e:
                return stop(f"client to node{i}: {e}", "not finite: ")
        for i, j in srvs.items():
            r = j.wait(120)
            if not r.ok:
                return None, f"{args}: server node{i} rc={r.rc}: " \
                    f"{r.out[-500:]}"
        val["sum_mib_s"] = round(sum(val[f"node{i}"]["bw_avg_mib_s"]
                                     for i in servers), 2)
        val["command"] = f"{args} {ips} (together)"
        return val, None
    except (VMError, ValueError) as e:
        return stop(str(e))


# ---------------------------------------------------------------- rdmalog

def status(node):
    r = node.run("rdmalogctl -j status", timeout=60, check=True)
    return json.loads(r.out)


def running(c):
    """The guests of c that are running (nodes 4 and 5 only for the
    5-node configuration)."""
    return [nd for nd in c if nd.alive]


def set_guests(c, n):
    """Guests 1..n running and no other: boot the missing ones (in
    parallel) and load rdmalog on them; take every log down and power off
    the ones above n. Returns the indices booted."""
    up = [nd for nd in c if nd.index <= n and not nd.alive]
    down = [nd for nd in running(c) if nd.index > n]
    if down:
        # logs down first: no peer is lost with a log up
        for nd in running(c):
            try:
                if status(nd)["log"]["up"]:
                    nd.run("rdmalogctl node down", timeout=60, check=True)
            except (VMError, CommandFailed, ValueError):
                if nd not in down:
                    raise
        for nd in down:
            nd.poweroff(timeout=60)
    for nd in up:
        nd.start()
    for nd in up:
        nd.wait_ready()
    for nd in up:
        nd.run("modprobe rdmalog", timeout=120, check=True)
    return [nd.index for nd in up]


def apply_config(c, cfg, capacity):
    """Take every log down, then apply cfg's cluster file on its nodes.
    A fresh log (LSN 1) on every node of the configuration."""
    text = cluster_file(cfg, capacity)
    for nd in running(c):
        st = status(nd)
        if st["log"]["up"]:
            nd.run("rdmalogctl node down", timeout=60, check=True)
    for i in range(1, cfg["nodes"] + 1):
        nd = c[i]
        nd.put(text, "/etc/rdmalog-bench.conf")
        nd.run(f"rdmalogctl apply --node {i} /etc/rdmalog-bench.conf",
               timeout=120, check=True)
    return text


def wait_in_force(node, timeout=180):
    """Status of node once the requested durability is in force (enough
    backups in sync) and then every backup is in sync (so that a quorum
    or async configuration writes both backups, as it will in its runs),
    or after timeout s (the caller reports that)."""
    # rdmalogctl wait follows the events (exit 5 on the timeout).
    node.run(f"rdmalogctl wait durable --timeout {timeout}",
             timeout=timeout + 60)
    r = node.run(f"rdmalogctl wait in-sync --timeout {timeout // 2}",
                 timeout=timeout // 2 + 60)
    st = status(node)
    st["all_in_sync"] = r.ok
    return st


def reconnects(st):
    return sum(p.get("reconnects") or 0 for p in st.get("peers") or [])


def empty_log(node):
    """Trim node's (the primary's) log empty; the backups follow. Returns
    the log's status afterwards (commit_lsn: the next record's LSN)."""
    log = status(node)["log"]
    if log["commit_lsn"] > log["first_lsn"]:
        node.run(f"rdmalogctl log trim {log['commit_lsn']}", timeout=60,
                 check=True)
        log = status(node)["log"]
    return log


TRACING = "/sys/kernel/tracing"
TRACE_LINE = re.compile(r"\s(\d+\.\d+): rdmalog_(\w+): (.*)$")
STAGES = (("append", "post", "append to the first post carrying it (reserve, "
           "copy, CRC, publish, kick)"),
          ("post", "completion", "post to the first completion covering it "
           "(the round trip, rxe's tasklets included)"),
          ("completion", "commit", "that completion to the commit (the "
           "commit rule)"),
          ("commit", "next", "the commit to the writer's next append "
           "(wakeup, return to user, next write())"))


def parse_stages(out):
    """Per-stage times (us) of each record of a one-writer traced run:
    [{stage: us}] from the rdmalog tracepoints' lines of @out."""
    evs = []
    for line in out.splitlines():
        m = TRACE_LINE.search(line)
        if not m:
            continue
        f = dict(kv.split("=", 1) for kv in m.group(3).split())
        evs.append((float(m.group(1)) * 1e6, m.group(2),
                    {k: int(v) for k, v in f.items()}))
    appends = [(t, f["lsn"]) for t, n, f in evs if n == "append"]
    recs = []
    for i, (t0, lsn) in enumerate(appends[:-1]):
        def after(name, pred, t):
            return next((te for te, n, f in evs
                         if n == name and te >= t and pred(f)), None)
        tp = after("post", lambda f: f["end_lsn"] > lsn, t0)
        tc = tp and after("completion",
                          lambda f: f["end_lsn"] > lsn and f["ok"], tp)
        tk = tc and after("commit", lambda f: f["old"] <= lsn < f["new"],
                          tc)
        tn = appends[i + 1][0]
        if tk is None or tn < tk:
            continue
        recs.append({"append": tp - t0, "post": tc - tp,
                     "completion": tk - tc, "commit": tn - tk})
    return recs


def stage_breakdown(node, args):
    """One writer x 64 B on @node with the rdmalog tracepoints on (global
    clock): the median time of each stage of an append, over its records
    (the first 20 are the warm-up)."""
    node.run(f"grep -q ' {TRACING} tracefs' /proc/mounts || "
             f"mount -t tracefs tracefs {TRACING}", timeout=60, check=True)
    node.run(f"cd {TRACING} && echo 0 > tracing_on && echo global > "
             "trace_clock && echo 8192 > buffer_size_kb && echo > trace && "
             "for e in append post completion commit; do echo 1 > "
             "events/rdmalog/rdmalog_$e/enable; done && echo 1 > tracing_on",
             timeout=60, check=True)
    n = 50 if args.quick else 400
    try:
        r = node.run(f"rdmalog-bench -j -t 1 -s {SMALL} -n {n} -w 20",
                     timeout=run_timeout(1, args))
        node.run(f"echo 0 > {TRACING}/tracing_on", timeout=60)
        out = node.run(f"cat {TRACING}/trace", timeout=300).out
    finally:
        node.run(f"cd {TRACING} && echo 0 > events/rdmalog/enable && "
                 "echo > trace", timeout=60)
    recs = parse_stages(out)[20:]
    res = {"records": len(recs), "command": f"rdmalog-bench -t 1 -s "
           f"{SMALL} -n {n} -w 20, tracepoints rdmalog_append, _post, "
           "_completion, _commit"}
    try:
        res["bench"] = json.loads(r.out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        res["bench"] = None
    if recs:
        for a, _, _ in STAGES:
            vals = sorted(x[a] for x in recs)
            res[a] = round(vals[len(vals) // 2], 1)
    return res


def print_stages(results):
    st = results.get("stages")
    if not st:
        return
    print(f"\none append, 1 writer x {fmt_size(SMALL)}, 3 nodes quorum, "
          f"from the tracepoints ({st['records']} records, medians; traced, "
          "so slower than the rows above):")
    total = 0
    for a, _, what in STAGES:
        v = st.get(a)
        total += v or 0
        print(f"  {num(v):>8} us  {what}")
    print(f"  {num(total):>8} us  the cycle (p50 of the traced run: "
          f"{num(((st.get('bench') or {}).get('latency_us') or {}).get('p50'))}"
          " us per write())")


def run_rdmalog(node, size, threads, args, verify=False, rate=None):
    """One rdmalog-bench run (the log emptied first by the caller);
    returns a result dict. verify: read every record back (the
    correctness check; its times are not the timed rows'). rate: the open
    loop (-r), appends/s offered in all."""
    cmd = (f"rdmalog-bench -j{' --verify' if verify else ''} -t {threads} "
           f"-s {size} -n {args.count} -w {args.warmup}"
           + (f" -r {rate:.1f}" if rate else ""))
    r = node.run(cmd, timeout=run_timeout(threads, args))
    res = {"command": cmd, "rc": r.rc, "guest_elapsed_s": r.elapsed}
    try:
        res["bench"] = json.loads(r.out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        res["bench"] = None
    if not r.ok or res["bench"] is None or not res["bench"].get("ok"):
        res["error"] = (f"rdmalog-bench rc={r.rc}"
                        f"{' (timed out)' if r.timed_out else ''}: "
                        f"{r.out.strip()[-1500:]}")
    st = status(node)
    res["durability"] = st["durability"]
    res["message"] = st.get("message")
    return res


def run_timeout(threads, args):
    return 300 + threads * (args.count + args.warmup) // 4


def open_rate(spec, entry):
    """An open-loop spec with its rate: spec["load"] x the appends/s of
    the configuration's 1-writer timed row at the spec's size, the one
    measured just before (entry: the configuration's results so far);
    unchanged (no rate) when that row failed."""
    for run in entry["runs"]:
        if (run["size"], run.get("threads"), run.get("kind")) == \
                (spec["size"], 1, "timed") and "error" not in run:
            base = (run.get("bench") or {}).get("appends_per_s")
            if base:
                return dict(spec, rate=round(spec["load"] * base, 1),
                            closed_rate=base)
    return spec


# ------------------------------------------------------ backup-side work

USER_HZ = 100               # /proc/stat's unit on x86 (getconf CLK_TCK)
CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq",
              "steal")
SNAPSHOT = ("rdmalogctl -j stats; echo @@; head -n 1 /proc/stat; "
            "cat /proc/uptime")


def parse_snapshot(out):
    """{"stats": rdmalogctl -j stats, "cpu": /proc/stat's cpu line (in
    USER_HZ jiffies), "uptime_s"} from the output of SNAPSHOT."""
    stats, rest = out.split("@@", 1)
    lines = [line.split() for line in rest.splitlines() if line.strip()]
    if len(lines) < 2 or lines[0][0] != "cpu":
        raise ValueError(f"no cpu and uptime lines in {rest!r}")
    cpu = dict(zip(CPU_FIELDS, (int(x) for x in lines[0][1:9])))
    return {"stats": json.loads(stats), "cpu": cpu,
            "uptime_s": float(lines[1][0])}


def snapshot(c, nodes):
    """Counters and CPU of nodes, taken in parallel: {index: snapshot}."""
    jobs = {i: c[i].spawn(SNAPSHOT, timeout=60) for i in nodes}
    snap = {}
    for i, j in jobs.items():
        r = j.wait(90)
        if not r.ok:
            raise VMError(f"node{i}: {SNAPSHOT!r} rc={r.rc}: "
                          f"{r.out.strip()[-500:]}")
        snap[i] = parse_snapshot(r.out)
    return snap


def delta(before, after):
    """Per node: counter and CPU differences, and the seconds between."""
    out = {}
    for i in before:
        b, a = before[i], after[i]
        out[i] = {"stats": {k: v - b["stats"].get(k, 0)
                            for k, v in a["stats"].items()},
                  "cpu": {k: a["cpu"][k] - b["cpu"][k] for k in a["cpu"]},
                  "seconds": round(a["uptime_s"] - b["uptime_s"], 2)}
    return out


def sys_jiffies(cpu):
    return cpu["system"] + cpu["irq"] + cpu["softirq"]


def per_k(v, commits):
    return round(v * 1000 / commits, 3) if v is not None and commits else None


def backup_work(idle, run, backups, primary=PRIMARY):
    """Backup-side work of a run, per 1,000 committed records (the
    primary's appends in the run's window), above an idle baseline of
    (about) the same length, scaled to the run's length. idle and run are
    delta()s."""
    commits = run[primary]["stats"].get("appends", 0)
    notifies = run[primary]["stats"].get("notifies_sent", 0)
    rows = []
    for b in backups:
        r, i = run[b], idle[b]
        scale = r["seconds"] / i["seconds"] if i["seconds"] > 0 else None
        rs, is_ = r["stats"], i["stats"]
        msgs_idle = (is_.get("msgs_received", 0) * scale
                     if scale is not None else None)
        cpu_idle = (sys_jiffies(i["cpu"]) * scale
                    if scale is not None else None)
        apply_runs = rs.get("apply_runs", 0)
        msgs = rs.get("msgs_received", 0)
        above = msgs - msgs_idle if msgs_idle is not None else None
        events = apply_runs + above if above is not None else None
        cpu_ms = ((sys_jiffies(r["cpu"]) - cpu_idle) * 1000 / USER_HZ
                  if cpu_idle is not None else None)
        rows.append({
            "backup": b, "commits": commits,
            "run_s": r["seconds"], "idle_s": i["seconds"],
            "apply_runs": apply_runs, "msgs_received": msgs,
            "idle_msgs_received": is_.get("msgs_received", 0),
            "waits_sent": rs.get("waits_sent", 0),
            "applied_records": rs.get("applied_records", 0),
            "cpu_sys_jiffies": sys_jiffies(r["cpu"]),
            "idle_cpu_sys_jiffies": sys_jiffies(i["cpu"]),
            "cpu_user_jiffies": r["cpu"]["user"],
            "idle_cpu_user_jiffies": i["cpu"]["user"],
            "events_per_k": per_k(events, commits),
            "apply_runs_per_k": per_k(apply_runs, commits),
            "msgs_above_idle_per_k": per_k(above, commits),
            "cpu_ms_above_idle_per_k": per_k(cpu_ms, commits),
            "waits_per_k": per_k(rs.get("waits_sent", 0), commits),
            "primary_notifies_per_k": per_k(notifies, commits),
            "primary_batches_per_k": per_k(
                run[primary]["stats"].get("repl_batches", 0), commits),
        })
    return rows


def start_reader(node, lsn):
    """rdmalogcat -f from lsn on node, in the background; None and an
    error when it exited at once."""
    job = node.spawn(f"rdmalogcat -f -s {lsn} > /dev/null")
    time.sleep(2)
    if job.done():
        r = job.wait(5)
        return None, f"node{node.index}: rdmalogcat -f -s {lsn} exited " \
            f"rc={r.rc}: {r.out.strip()[-300:]}"
    return job, None


def stop_reader(job):
    """Kill the reader; an error if it had exited by itself."""
    if job.done():
        r = job.wait(5)
        return f"the reader exited during the run: rc={r.rc}: " \
            f"{r.out.strip()[-300:]}"
    job.kill()
    try:
        job.wait(30)
    except VMError as e:
        return f"the reader did not stop: {e}"
    return None


LAT_KEYS = ("min", "mean", "p50", "p90", "p99", "p999", "max")


def merge_reps(runs):
    """Runs of one row, repeated: the first failed one if any failed, else
    a copy of the first with appends/s, MiB/s and every latency figure the
    median over the repetitions, and each one's in "reps"."""
    for r in runs:
        if "error" in r or not r.get("bench"):
            return r
    if len(runs) == 1:
        return runs[0]
    res = copy.deepcopy(runs[0])
    b = res["bench"]
    for k in ("appends_per_s", "mib_per_s"):
        b[k] = statistics.median(r["bench"][k] for r in runs)
    for k in LAT_KEYS:
        vals = [r["bench"]["latency_us"].get(k) for r in runs]
        if None not in vals:
            b["latency_us"][k] = statistics.median(vals)
    res["reps"] = [{"appends_per_s": r["bench"]["appends_per_s"],
                    "p50": r["bench"]["latency_us"]["p50"],
                    "p99": r["bench"]["latency_us"]["p99"]} for r in runs]
    return res


def perftest_median(c, tool, size, iters, parse, reps):
    """perftest() @reps times: the median of every number over the runs
    that worked (their count in "reps"), and the first error if none did."""
    vals, err = [], None
    for _ in range(reps):
        v, e = perftest(c, tool, size, iters, parse)
        if v:
            vals.append(v)
        else:
            err = err or e
    if not vals:
        return None, err
    res = dict(vals[0])
    for k, v in vals[0].items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            res[k] = statistics.median(x[k] for x in vals)
    res["reps"] = len(vals)
    return res, None


def measure_run(c, cfg, spec, args, idle_s):
    """One row of the plan: empty the log, and for a backup-work row
    (spec["work"]) start the reader if any, take the idle baseline
    (idle_s seconds, nothing appended) and the counters before and after
    the run. Returns the result dict; a backup-work measurement that went
    wrong is said in its "error" (the run's numbers stand)."""
    primary = c[PRIMARY]
    extra = ({"rate": spec.get("rate"), "load": spec["load"],
              "closed_rate": spec.get("closed_rate")}
             if spec["kind"] == "open" else {})
    if spec["kind"] == "open" and not spec.get("rate"):
        st = status(primary)
        return dict(extra, size=spec["size"], threads=spec["threads"],
                    kind="open", durability=st["durability"],
                    message=st.get("message"), bench=None,
                    error="no rate to offer: the 1-writer timed row at "
                    f"{fmt_size(spec['size'])} failed")
    log = empty_log(primary)
    nodes = list(range(1, cfg["nodes"] + 1))
    reader, before, work = None, None, None
    if spec.get("work"):
        work = {"reader": f"node{READER}" if spec["kind"] == "reader"
                else None, "idle_target_s": round(idle_s, 1)}
        try:
            if spec["kind"] == "reader":
                reader, err = start_reader(c[READER], log["commit_lsn"])
                if err:
                    raise VMError(err)
            else:
                time.sleep(2)   # as long as the reader's start: the trim
            s0 = snapshot(c, nodes)
            time.sleep(idle_s)
            s1 = snapshot(c, nodes)
            work["idle"] = delta(s0, s1)
            before = snapshot(c, nodes)
        except (VMError, ValueError) as e:
            work["error"] = str(e)
    res = run_rdmalog(primary, spec["size"], spec["threads"], args,
                      verify=spec["kind"] == "verify",
                      rate=extra.get("rate"))
    if spec["kind"] in ("timed", "open") and before is None and \
            args.reps > 1:
        # each figure the median of --reps runs, the log emptied before each
        runs = [res]
        for _ in range(args.reps - 1):
            empty_log(primary)
            runs.append(run_rdmalog(primary, spec["size"], spec["threads"],
                                    args, rate=extra.get("rate")))
        res = merge_reps(runs)
    if before is not None:
        try:
            work["run"] = delta(before, snapshot(c, nodes))
            work["backups"] = backup_work(work["idle"], work["run"],
                                          [i for i in nodes
                                           if i != PRIMARY])
        except (VMError, ValueError) as e:
            work["error"] = str(e)
    if reader:
        err = stop_reader(reader)
        if err:
            work["error"] = err
    if work is not None:
        res["backup_work"] = work
    res.update(extra)
    res.update(size=spec["size"], threads=spec["threads"], kind=spec["kind"])
    return res


# ----------------------------------------------------------------- output

KIND_LABEL = {"timed": "timed", "reader": f"+reader n{READER}",
              "verify": "verify", "open": "open"}


def run_label(run):
    """The run column: the kind; an open-loop row's share of the 1-writer
    rate and the rate it offered."""
    if run.get("kind") == "open":
        rate = run.get("rate") or run.get("rate_offered")
        return (f"open {run['load']:.0%} {num(rate, 0)}/s"
                if run.get("load") is not None else "open")
    return KIND_LABEL.get(run.get("kind"), run.get("kind"))


def build_rows(results):
    rows = []
    base = {p["size"]: p for p in results["perftest"]}
    for cfg in results["configs"]:
        for run in cfg["runs"]:
            b = run.get("bench") or {}
            lat = b.get("latency_us", {})
            p = base.get(run["size"], {})
            pl, pb = p.get("write_lat") or {}, p.get("write_bw") or {}
            d = run.get("durability", {})
            req, eff = d.get("requested", "?"), d.get("effective", "?")
            rows.append({
                "config": cfg["name"], "key": cfg["key"],
                "size": run["size"],
                "threads": run.get("threads"),
                "kind": run.get("kind", "verify"),
                "rate_offered": run.get("rate"), "load": run.get("load"),
                "durability": req if eff == req else f"{req}->{eff}",
                "replicated": d.get("effective") not in (None, "async"),
                "requested": req,
                "in_force": eff == req,
                "ok": "error" not in run,
                "appends_s": b.get("appends_per_s"),
                "mib_s": b.get("mib_per_s"),
                "p50": lat.get("p50"), "p99": lat.get("p99"),
                "p999": lat.get("p999"),
                "pt_typ": pl.get("t_typical_us"), "pt_p99": pl.get("p99_us"),
                "pt_bw": pb.get("bw_avg_mib_s"),
                "lat_ratio": ratio(lat.get("p50"), pl.get("t_typical_us")),
                "bw_ratio": ratio(b.get("mib_per_s"), pb.get("bw_avg_mib_s")),
            })
    return rows


def find_run(results, key, size, threads, kind="timed"):
    """The run of configuration key with that size, writers and kind."""
    for cfg in results["configs"]:
        if cfg["key"] != key:
            continue
        for run in cfg["runs"]:
            if (run["size"], run.get("threads"), run.get("kind")) == \
                    (size, threads, kind) and "error" not in run:
                return run
    return None


def perftest_at(results, size, key):
    for p in results["perftest"]:
        if p["size"] == size:
            return p.get(key) or {}
    return {}


def goal(name, measured, op, target, unit, note=""):
    """One row of the goals table: measured op target (op "<=" or ">="),
    ratio measured / target; met is None when either is missing."""
    met = None
    if measured is not None and target:
        met = measured <= target if op == "<=" else measured >= target
    return {"goal": name, "measured": measured, "op": op,
            "target": target, "unit": unit,
            "ratio": None if measured is None or not target
            else round(measured / target, 3),
            "met": met, "note": note}


def build_goals(results, threads):
    """The issue's goals, each with its measured value, from this run."""
    goals = []
    lat = perftest_at(results, SMALL, "write_lat")
    rtt = 2 * lat["t_typical_us"] if lat.get("t_typical_us") else None
    one = find_run(results, "3n-quorum", SMALL, 1)
    b1 = (one or {}).get("bench") or {}
    p50 = (b1.get("latency_us") or {}).get("p50")
    p99 = (b1.get("latency_us") or {}).get("p99")
    goals.append(goal(
        f"1 writer x {fmt_size(SMALL)}, 3 nodes quorum: p50 <= 1.3 x RTT",
        p50, "<=", 1.3 * rtt if rtt else None, "us",
        f"RTT = 2 x ib_write_lat t_typical = {num(rtt)} us (perftest "
        f"inline {lat.get('inline', '?')}); p50/RTT = "
        f"{'-' if ratio(p50, rtt) is None else ratio(p50, rtt)}"))
    goals.append(goal(
        f"1 writer x {fmt_size(SMALL)}, 3 nodes quorum: p99/p50 <= 3",
        ratio(p99, p50), "<=", 3, "",
        f"p99 {num(p99)} us, p50 {num(p50)} us"))
    sixteen = find_run(results, "3n-quorum", SMALL, 16)
    a16 = ((sixteen or {}).get("bench") or {}).get("appends_per_s")
    bw = perftest_at(results, SMALL, "write_bw")
    rate = bw["msg_rate_mpps"] * 1e6 if bw.get("msg_rate_mpps") else None
    goals.append(goal(
        f"16 writers x {fmt_size(SMALL)}: appends/s >= 0.5 x ib_write_bw "
        f"msg rate", a16, ">=", 0.5 * rate if rate else None, "/s",
        f"ib_write_bw {fmt_size(SMALL)}: "
        f"{num(bw.get('msg_rate_mpps'), 4)} Mpps"))
    big = find_run(results, "3n-quorum", 65536, threads)
    mib = ((big or {}).get("bench") or {}).get("mib_per_s")
    bw64 = perftest_at(results, 65536, "write_bw").get("bw_avg_mib_s")
    dual = (results.get("perftest_extra") or {}).get("write_bw_pair") or {}
    goals.append(goal(
        f"{threads} writers x 64 KiB: MiB/s >= 0.9 x ib_write_bw / 2 "
        f"backups", mib, ">=", 0.9 * bw64 / 2 if bw64 else None, "MiB/s",
        f"ib_write_bw 64 KiB {num(bw64, 2)} MiB/s; node 1 to nodes 2 and 3 "
        f"together: {num(dual.get('sum_mib_s'), 2)} MiB/s"))
    work = find_run(results, "3n-quorum", SMALL, threads)
    bw_rows = ((work or {}).get("backup_work") or {}).get("backups") or []
    for r in bw_rows or [{"backup": i} for i in (2, 3)]:
        goals.append(goal(
            f"backup node{r['backup']}, no reader: events per 1,000 commits "
            f"<= 1", r.get("events_per_k"), "<=", 1, "/1k",
            f"{threads} writers x {fmt_size(SMALL)}, 3 nodes quorum"))
    return goals


def print_env(results):
    e = results.get("environment") or {}
    load = e.get("host_loadavg_start")
    print(f"environment: {e.get('guest_vcpus', '?')} vCPUs per guest, accel "
          f"{e.get('accel', '?')}, crc32c {e.get('crc32c_driver') or '?'}, "
          f"inline {e.get('inline') if e.get('inline') is not None else '?'}"
          f" (node 1 -> node 2), poll_us {e.get('poll_us', '?')}, "
          f"notify_kib {e.get('notify_kib', '?')}, host load "
          f"{' '.join(f'{x:.2f}' for x in load) if load else '?'} at start")


def print_table(results, rows):
    cols = [("config", "config", "<"), ("size", "size", ">"),
            ("threads", "wr", ">"), ("kind", "run", "<"),
            ("durability", "durability", "<"),
            ("appends_s", "appends/s", ">"), ("mib_s", "MiB/s", ">"),
            ("p50", "p50us", ">"), ("p99", "p99us", ">"),
            ("p999", "p99.9us", ">"), ("|", "|", "^"),
            ("pt_typ", "lat typ", ">"), ("pt_p99", "lat p99", ">"),
            ("pt_bw", "bw MiB/s", ">"), ("||", "|", "^"),
            ("lat_ratio", "p50/typ", ">"), ("bw_ratio", "MiB/s ratio", ">")]
    table = []
    for r in rows:
        line = {}
        for key, _, _ in cols:
            if key in ("|", "||"):
                line[key] = "|"
            elif key == "size":
                line[key] = fmt_size(r["size"])
            elif key == "threads":
                line[key] = str(r["threads"] or "-")
            elif key == "kind":
                line[key] = run_label(r)
            elif key in ("config", "durability"):
                line[key] = r[key] + ("" if key != "config" or r["ok"]
                                      else " (FAILED)")
            elif key in ("lat_ratio", "bw_ratio"):
                line[key] = "-" if r[key] is None else f"{r[key]:.3g}"
            elif key == "mib_s" or key == "pt_bw":
                line[key] = num(r[key], 2)
            else:
                line[key] = num(r[key])
        table.append(line)
    widths = {k: max([len(h)] + [len(t[k]) for t in table])
              for k, h, _ in cols}
    head1 = "rdmalog-bench on node 1".ljust(
        sum(widths[k] + 2 for k, _, _ in cols[:10]) - 2)
    head2 = "perftest node1->node2 (us, MiB/s)".ljust(
        sum(widths[k] + 2 for k, _, _ in cols[11:14]) - 2)
    print()
    print_env(results)
    print(f"\n{head1}  |  {head2}  |  rdmalog / perftest")
    print_grid(cols, table)
    print()
    m = results["meta"]
    print(f"{m['date']}  accel {m['accel']}  guest kernel "
          f"{m['guest_kernel']}  host {m['host_cpus']} CPUs, guests "
          f"{m.get('smp', 1)} vCPU")
    print(f"rdmalog: wr writers x {m['count']} appends (+{m['warmup']} "
          f"warmup) each; 'timed' rows are timed only, 'verify' rows read "
          f"every record back and check it (the correctness check: slower, "
          f"not for comparison); perftest: {m['perftest_iters']} iterations "
          f"(ib_write_lat above 4 KiB: at most 100); every timed row "
          f"without backup work and every ib_write_lat/ib_write_bw figure "
          f"is the median of {m.get('reps', 1)} runs")
    opens = [r for r in rows if r["kind"] == "open"]
    if opens:
        print(f"'open' rows: the open loop (rdmalog-bench -r RATE), "
              f"{opens[0]['threads']} writers offering RATE appends/s in "
              f"all, a share of the 1-writer timed row's appends/s just "
              f"before (offered in the run column, achieved in appends/s); "
              f"latency counts from when each append was due, so a stall "
              f"is charged to every append it held back (no coordinated "
              f"omission)")
    print("latency in microseconds: rdmalog = one write() until durable; "
          "perftest lat = ib_write_lat (half a round trip)")
    repl = [r for r in rows if r["requested"] != "async"]
    if rows and all(r["in_force"] for r in rows):
        print("durability in force = requested for every row: each "
              "replicated append returned once the backups the mode needs "
              "held it (RDMA WRITEs and the notice's completion on soft-RoCE); the "
              "async rows commit locally, without waiting for a backup")
    elif repl and not any(r["replicated"] for r in repl):
        print("\n*** REPLICATION WAS NOT IN EFFECT: rdmalogctl status reports "
              "durability 'effective' = async for every configuration, so "
              "the rdmalog numbers are local appends on node 1, not "
              "replicated commits. ***")
    else:
        print("\n*** The requested durability was NOT in force for the rows "
              "marked 'requested->in force'. ***")
    print("*** QEMU TCG numbers say nothing about hardware. ***"
          if m["accel"] == "tcg" else "")


def print_perftest(results):
    """The same-run perftest baselines, node 1 to node 2 unless said."""
    lines = []
    for p in results["perftest"]:
        pl, pb = p.get("write_lat") or {}, p.get("write_bw") or {}
        if pl:
            lines.append(("ib_write_lat", p["size"], pl))
        if pb:
            lines.append(("ib_write_bw", p["size"], pb))
    ex = results.get("perftest_extra") or {}
    for key, name in (("write_lat_no_inline", "ib_write_lat -I 0"),
                      ("send_lat", "ib_send_lat")):
        if ex.get(key):
            lines.append((name, ex[key]["bytes"], ex[key]))
    table = []
    for name, size, v in lines:
        typ = v.get("t_typical_us")
        table.append({
            "tool": name, "size": fmt_size(size),
            "typ": num(typ), "rtt": num(2 * typ if typ else None),
            "p99": num(v.get("p99_us")),
            "bw": num(v.get("bw_avg_mib_s"), 2),
            "rate": num(v.get("msg_rate_mpps"), 4),
            "inline": str(v.get("inline", "-"))})
    pair = ex.get("write_bw_pair")
    if pair:
        table.append({
            "tool": "ib_write_bw to nodes 2+3", "size": fmt_size(65536),
            "typ": "-", "rtt": "-", "p99": "-",
            "bw": f"{num(pair['sum_mib_s'], 2)} (" + " + ".join(
                num(pair[k]["bw_avg_mib_s"], 2) for k in sorted(pair)
                if k.startswith("node")) + ")",
            "rate": "-", "inline": "-"})
    cols = [("tool", "perftest (node 1 -> node 2)", "<"),
            ("size", "size", ">"), ("typ", "t_typ us", ">"),
            ("rtt", "RTT us", ">"), ("p99", "p99 us", ">"),
            ("bw", "MiB/s", ">"), ("rate", "Mpps", ">"),
            ("inline", "inline", ">")]
    print("\nperftest baselines, same run (logs down; RTT = 2 x t_typical: "
          "perftest reports half a round trip)")
    print_grid(cols, table)
    off = [name for name, _, v in lines
           if name.endswith(("_lat", "_lat -I 0")) and v.get("inline") == 0]
    if off:
        k = (results.get("environment") or {}).get("inline")
        said = any(v.get("inline_disabled") for _, _, v in lines)
        print(f"perftest ran without inline (Max inline data 0) in "
              f"{', '.join(sorted(set(off)))}"
              + (" (\"Device not recognized to implement inline feature. "
                 "Disabling it\" where -I was given)" if said else "")
              + f": its default and -I 0 are the same test here; rdmalog's"
              f" QP to node 2 has inline {'?' if k is None else k}")
    errs = [v for p in results["perftest"] for k, v in p.items()
            if k.endswith("_error")] + \
        [v for k, v in ex.items() if k.endswith("_error")]
    if errs:
        print(f"({len(errs)} perftest baseline(s) missing: see the end)")


def print_goals(goals):
    def val(v, unit):
        if v is None:
            return "-"
        if unit == "/s":
            return f"{v:.0f}/s"
        if unit in ("us", "MiB/s"):
            return f"{num(v, 2)} {unit}"
        return f"{v:.3g}{unit}"
    table = [{"goal": g["goal"], "measured": val(g["measured"], g["unit"]),
              "target": f"{g['op']} {val(g['target'], g['unit'])}",
              "ratio": "-" if g["ratio"] is None else f"{g['ratio']:.3g}",
              "met": {True: "met", False: "NOT MET", None: "-"}[g["met"]],
              "note": g["note"]} for g in goals]
    cols = [("goal", "goal", "<"), ("measured", "measured", ">"),
            ("target", "goal value", ">"), ("ratio", "ratio", ">"),
            ("met", "", "<"), ("note", "", "<")]
    print("\ngoals (ratio = measured / goal value; reported only, they do "
          "not change the exit status)")
    print_grid(cols, table)


def print_work(results, threads):
    run = find_run(results, "3n-quorum", SMALL, threads)
    rd = find_run(results, "3n-quorum", SMALL, threads, "reader")
    table = []
    errs = []
    for name, r in (("no reader", run), (f"reader on node{READER}", rd)):
        w = (r or {}).get("backup_work") or {}
        if w.get("error"):
            errs.append(f"{name}: {w['error']}")
        for b in w.get("backups") or []:
            table.append({
                "run": name, "backup": f"node{b['backup']}",
                "commits": str(b["commits"]),
                "secs": f"{b['run_s']:.1f}/{b['idle_s']:.1f}",
                "events": num(b["events_per_k"], 2),
                "apply": num(b["apply_runs_per_k"], 2),
                "msgs": num(b["msgs_above_idle_per_k"], 2),
                "cpu": num(b["cpu_ms_above_idle_per_k"], 1),
                "waits": num(b["waits_per_k"], 2),
                "notifies": num(b["primary_notifies_per_k"], 2)})
    print(f"\nbackup-side work per 1,000 commits, 3 nodes quorum, {threads} "
          f"writers x {fmt_size(SMALL)} (commits: the primary's appends "
          f"in the window)")
    if table:
        cols = [("run", "run", "<"), ("backup", "backup", "<"),
                ("commits", "commits", ">"), ("secs", "run/idle s", ">"),
                ("events", "events", ">"), ("apply", "apply runs", ">"),
                ("msgs", "msgs>idle", ">"), ("cpu", "CPU ms>idle", ">"),
                ("waits", "WAITs", ">"),
                ("notifies", "primary NOTIFYs", ">")]
        print_grid(cols, table)
    else:
        print("(not measured)")
    for e in errs:
        print(f"  backup work {e}")
    res = [b for b in ((run or {}).get("backup_work") or {})
           .get("backups") or [] if b["commits"] and b["idle_s"] > 0]
    if res:
        print(f"resolution (no reader): one message = "
              f"{1000 / res[0]['commits']:.2f} per 1,000 commits; idle, "
              + ", ".join(f"node{b['backup']} received "
                          f"{b['idle_msgs_received'] / b['idle_s']:.1f}"
                          for b in res)
              + " messages/s (heartbeats): msgs>idle is only as exact as "
              "that rate is steady")
    print("events = apply runs + messages received above idle (an idle "
          "baseline of about the run's length, nothing appended, taken just "
          "before, scaled to the run's length); CPU = system + irq + "
          "softirq time above idle.\nUnder rxe the backup's CPU also runs "
          "the RDMA transport (software RoCE: every RDMA WRITE into its "
          "ring is received, checked and placed by its kernel), so CPU "
          "above idle is not zero even with passive backups; the rdmalog "
          "event counts are the measure of the goal.")


GNUPLOT = r"""
set terminal pngcairo size 1000,750 font "sans,10"
set output '{out}/latency.png'
set title "{title}" noenhanced
set logscale xy
set xlabel "record / message size (bytes)"
set ylabel "latency (microseconds, log scale)"
set xtics ({xtics})
set xrange [{xmin}:{xmax}]
set grid
set key below left maxrows 3 noenhanced spacing 1.2
set bmargin 9
set datafile missing "-"
plot {lat_plots}
set output '{out}/throughput.png'
set ylabel "MiB/s payload (log scale)"
set title "{title_bw}" noenhanced
plot {bw_plots}
"""


def plot(results, out):
    if not shutil.which("gnuplot"):
        print("bench: gnuplot not found: no plot", file=sys.stderr)
        return []
    # one line per configuration: its timed rows with --threads writers
    threads = results["meta"]["threads"]

    def plotted(run):
        return run.get("kind") == "timed" and run.get("threads") == threads

    sizes = sorted({r["size"] for c in results["configs"] for r in c["runs"]
                    if plotted(r)})
    if not sizes:
        return []
    files = {}
    for cfg in results["configs"]:
        if not any(plotted(r) for r in cfg["runs"]):
            continue
        path = os.path.join(out, f"rdmalog-{cfg['key']}.dat")
        with open(path, "w") as f:
            f.write("# size appends_s mib_s p50_us p99_us p999_us\n")
            for run in cfg["runs"]:
                b = run.get("bench") or {}
                lat = b.get("latency_us") or {}
                if "error" in run or not lat or not plotted(run):
                    continue
                f.write(f"{run['size']} {b['appends_per_s']} "
                        f"{b['mib_per_s']} {lat['p50']} {lat['p99']} "
                        f"{lat['p999']}\n")
        files[cfg["key"]] = path
    ppath = os.path.join(out, "perftest.dat")
    with open(ppath, "w") as f:
        f.write("# size t_typical_us p99_us bw_avg_mib_s\n")
        for p in results["perftest"]:
            pl, pb = p.get("write_lat") or {}, p.get("write_bw") or {}
            f.write(f"{p['size']} {pl.get('t_typical_us', '-')} "
                    f"{pl.get('p99_us', '-')} {pb.get('bw_avg_mib_s', '-')}\n")
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
    lat, bw = [], []
    for i, cfg in enumerate(results["configs"]):
        if cfg["key"] not in files:
            continue
        col = colors[i % len(colors)]
        eff = cfg["durability"].get("effective", "?")
        name = f"rdmalog {cfg['name']} (in force: {eff})"
        dat = files[cfg["key"]]
        lat.append(f"'{dat}' using 1:4 with linespoints lw 2 pt 7 "
                   f"lc rgb '{col}' title '{name} p50'")
        lat.append(f"'{dat}' using 1:5 with linespoints lw 2 dt 2 pt 6 "
                   f"lc rgb '{col}' title '{name} p99'")
        bw.append(f"'{dat}' using 1:3 with linespoints lw 2 pt 7 "
                  f"lc rgb '{col}' title '{name}'")
    lat.append(f"'{ppath}' using 1:2 with linespoints lw 2 pt 5 "
               "lc rgb 'black' title 'perftest ib_write_lat typical'")
    lat.append(f"'{ppath}' using 1:3 with linespoints lw 2 dt 2 pt 4 "
               "lc rgb 'black' title 'perftest ib_write_lat p99'")
    bw.append(f"'{ppath}' using 1:4 with linespoints lw 2 pt 5 "
              "lc rgb 'black' title 'perftest ib_write_bw average'")
    m = results["meta"]
    where = (f"{m['accel'].upper()}, soft-RoCE, {m['date'][:10]}, "
             f"{m['threads']} threads")
    note = ("\\nQEMU TCG: these numbers say nothing about hardware"
            if m["accel"] == "tcg" else "")
    script = GNUPLOT.format(
        out=out, xmin=sizes[0] / 2, xmax=sizes[-1] * 2,
        xtics=", ".join(f'"{fmt_size(s)}" {s}' for s in sizes),
        title=f"append latency vs RDMA write latency ({where}){note}",
        title_bw=f"append throughput vs RDMA write bandwidth "
                 f"({where}){note}",
        lat_plots=", \\\n     ".join(lat),
        bw_plots=", \\\n     ".join(bw))
    gp = os.path.join(out, "plot.gp")
    with open(gp, "w") as f:
        f.write(script)
    r = subprocess.run(["gnuplot", gp], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=120)
    if r.returncode:
        print(f"bench: gnuplot failed:\n{r.stdout.decode(errors='replace')}",
              file=sys.stderr)
        return []
    return [os.path.join(out, "latency.png"),
            os.path.join(out, "throughput.png")] + \
        plot_percentiles(results, out)


GNUPLOT_PCT = r"""
set terminal pngcairo size 1000,750 font "sans,10"
set output '{png}'
set title "{title}" noenhanced
set logscale xy
set xlabel "{xlabel}"
set ylabel "append latency (microseconds, log scale)"
set xtics ({xtics})
set xrange [{xmin}:{xmax}]
set grid
set key below left maxrows 3 noenhanced spacing 1.2
set bmargin 9
plot {plots}
"""

# p50 solid, p99 dashed, p99.9 dotted; a colour per configuration
PERCENTILES = (("p50", "p50", 1, 7), ("p99", "p99", 2, 6),
               ("p999", "p99.9", 3, 4))
PCT_COLORS = {"3n-quorum": "#1f77b4", "2n-all": "#d62728",
              "3n-async": "#2ca02c", "5n-quorum": "#9467bd"}


def plot_percentiles(results, out):
    """latency-writers.png: p50, p99 and p99.9 against writers at 64 B
    (the quorum configurations' timed rows), latency-sizes.png: the same
    against size (each configuration's --threads-writer timed rows; the
    async floor has one row). Returns the PNGs drawn."""
    m = results["meta"]
    threads = m["threads"]
    where = f"{m['accel'].upper()}, soft-RoCE, {m['date'][:10]}"
    note = ("\\nQEMU TCG: these numbers say nothing about hardware"
            if m["accel"] == "tcg" else "")
    figs = (
        ("latency-writers.png", "writers (threads, one append outstanding "
         "each)", f"append latency percentiles by writers at "
         f"{fmt_size(SMALL)}", "threads",
         lambda cfg, r: r["size"] == SMALL and
         cfg["key"] in ("3n-quorum", "5n-quorum"), str),
        ("latency-sizes.png", "record size (bytes)",
         f"append latency percentiles by size, {threads} writers", "size",
         lambda cfg, r: r.get("threads") == threads and
         cfg["key"] != "3n-async", fmt_size),
    )
    pngs = []
    for png, xlabel, title, xkey, want, tic in figs:
        plots, xs = [], set()
        for cfg in results["configs"]:
            pts = sorted(((r[xkey], r["bench"]["latency_us"])
                          for r in cfg["runs"]
                          if r.get("kind") == "timed" and "error" not in r
                          and (r.get("bench") or {}).get("latency_us")
                          and want(cfg, r)), key=lambda p: p[0])
            if not pts:
                continue
            dat = os.path.join(out, f"pct-{xkey}-{cfg['key']}.dat")
            with open(dat, "w") as f:
                f.write(f"# {xkey} p50_us p99_us p999_us\n")
                for x, lat in pts:
                    f.write(f"{x} {lat['p50']} {lat['p99']} "
                            f"{lat['p999']}\n")
                    xs.add(x)
            col = PCT_COLORS.get(cfg["key"], "black")
            for i, (_, label, dt, pt) in enumerate(PERCENTILES):
                plots.append(f"'{dat}' using 1:{i + 2} with linespoints "
                             f"lw 2 dt {dt} pt {pt} lc rgb '{col}' "
                             f"title '{cfg['name']} {label}'")
        if not plots:
            continue
        xs = sorted(xs)
        script = GNUPLOT_PCT.format(
            png=os.path.join(out, png), xlabel=xlabel,
            title=f"{title} ({where}){note}",
            xtics=", ".join(f'"{tic(x)}" {x}' for x in xs),
            xmin=xs[0] / 2, xmax=xs[-1] * 2,
            plots=", \\\n     ".join(plots))
        gp = os.path.join(out, png.replace(".png", ".gp"))
        with open(gp, "w") as f:
            f.write(script)
        r = subprocess.run(["gnuplot", gp], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=120)
        if r.returncode:
            print(f"bench: gnuplot failed ({png}):\n"
                  f"{r.stdout.decode(errors='replace')}", file=sys.stderr)
            continue
        pngs.append(os.path.join(out, png))
    return pngs


# ------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(
        description="rdmalog append latency/throughput next to perftest, "
        "in QEMU guests with soft-RoCE")
    ap.add_argument("--quick", action="store_true",
                    help="tiny counts: a smoke run of the whole pipeline")
    ap.add_argument("--out", default=os.path.join(REPO, "build", "bench"),
                    help="output directory (default build/bench)")
    ap.add_argument("--threads", type=int, default=4,
                    help="rdmalog-bench writer threads (default 4); 3 "
                    "nodes quorum at 64 B also runs 1 and 16, 5 nodes "
                    "quorum 1; the open-loop rows run max(4, N)")
    ap.add_argument("--count", type=int, default=None,
                    help="measured appends per thread and size "
                    "(default 500, --quick 20)")
    ap.add_argument("--warmup", type=int, default=None,
                    help="unmeasured appends per thread first "
                    "(default 10, --quick 2)")
    ap.add_argument("--iters", type=int, default=None,
                    help="perftest iterations (default 1000, --quick 100)")
    ap.add_argument("--sizes", type=lambda s: [parse_size(x)
                                               for x in s.split(",")],
                    default=list(SIZES),
                    help="comma-separated record sizes (default 64,4K,64K)")
    ap.add_argument("--reps", type=int, default=None,
                    help="repetitions of each timed row and of each "
                    "ib_write_lat and ib_write_bw baseline, their median "
                    "printed (default 3, --quick 1)")
    ap.add_argument("--smp", type=int, default=2,
                    help="vCPUs per guest (default 2, so writer threads "
                    "are not all queued on one emulated CPU)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the VM workdir (consoles) for inspection")
    args = ap.parse_args()
    if args.count is None:
        args.count = 20 if args.quick else 500
    if args.warmup is None:
        args.warmup = 2 if args.quick else 10
    if args.iters is None:
        args.iters = 100 if args.quick else 1000
    if args.reps is None:
        args.reps = 1 if args.quick else 3
    if args.reps < 1:
        ap.error("--reps must be at least 1")
    if args.threads < 1 or args.count < 1 or args.warmup < 0 or args.iters < 5:
        ap.error("--threads and --count >= 1, --warmup >= 0, --iters >= 5")
    if any(s < 1 or s > MIB for s in args.sizes):
        ap.error("sizes must be 1 B .. 1 MiB (the bench's max-record)")

    # No run reads back more than its own records, but rdmalog-bench
    # refuses a run whose records would not fit in the free ring: size the
    # ring (and the guests' memory) for the largest run.
    plans = {cfg["key"]: plan(cfg, args) for cfg in CONFIGS}
    need = max(r["threads"] * (args.count + args.warmup) *
               ring_bytes(r["size"]) for p in plans.values() for r in p)
    capacity = 64 * MIB
    while capacity < need * 1.25 or capacity < 4 * MIB:
        capacity *= 2
    mem_mib = max(512, capacity // MIB + 448)
    mem = os.environ.get("RDMALOG_VM_MEM") or f"{mem_mib}M"

    for path in ("build/bin/rdmalog-bench", "build/bin/rdmalogctl",
                 "rdmalog.ko"):
        if not os.path.exists(os.path.join(REPO, path)):
            sys.exit(f"bench: {path} missing: run 'make all vm' first")
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)

    t0 = time.monotonic()
    errors = []
    warnings = []
    results = {"meta": {}, "environment": {}, "configs": [], "perftest": [],
               "perftest_extra": {}}
    env = results["environment"]
    env["host_loadavg_start"] = [round(x, 2) for x in os.getloadavg()]
    guests = max(cfg["nodes"] for cfg in CONFIGS)
    say(f"booting {BOOT_FIRST} VMs ({mem} each)"
        + (f"; {guests - BOOT_FIRST} more later, for the configurations "
           f"of more nodes" if guests > BOOT_FIRST else ""))
    with Cluster(guests, mem=mem, keep=args.keep, smp=args.smp,
                 start=False, initrd=bench_alt.initrd()) as c:
        set_guests(c, BOOT_FIRST)
        meta = results["meta"]
        meta.update({
            "date": datetime.datetime.now(datetime.timezone.utc)
                    .isoformat(timespec="seconds"),
            "accel": c.accel,
            "smp": c.smp,
            "guest_kernel": c[1].run("uname -r", timeout=30).out.strip(),
            "host_kernel": platform.release(),
            "host_cpus": os.cpu_count(),
            "host_cpu": _cpu_model(),
            "qemu": _qemu_version(),
            "guest_vcpus": c.smp,
            "guest_mem": mem, "guests": guests, "guests_first": BOOT_FIRST,
            "link": "soft-RoCE (rxe0) over virtio-net on one vde_switch",
            "threads": args.threads, "count": args.count,
            "warmup": args.warmup, "perftest_iters": args.iters,
            "sizes": args.sizes, "ring_capacity": capacity,
            "quick": args.quick, "reps": args.reps,
        })
        print(f"booted in {time.monotonic() - t0:.0f}s: accel {c.accel}, "
              f"guest kernel {meta['guest_kernel']}")
        c.run_all("modprobe rdmalog", timeout=120, check=True)
        env.update(guest_env(c[PRIMARY]))
        env["accel"] = c.accel
        print_env(results)

        for cfg in CONFIGS:
            if cfg["nodes"] > BOOT_FIRST:
                t1 = time.monotonic()
                try:
                    new = set_guests(c, cfg["nodes"])
                except (VMError, CommandFailed) as e:
                    errors.append(f"{cfg['name']}: its guests did not "
                                  f"start: {e}")
                    print(f"    {cfg['name']}: FAILED: its guests did not "
                          f"start: {e}")
                    continue
                if new:
                    say(f"booted node {', '.join(map(str, new))} in "
                        f"{time.monotonic() - t1:.0f}s")
            say(f"{cfg['name']}: cluster file on node 1..{cfg['nodes']}")
            entry = {"name": cfg["name"], "key": cfg["key"],
                     "nodes": cfg["nodes"], "primary": PRIMARY,
                     "cluster_file": apply_config(c, cfg, capacity),
                     "runs": []}
            st = wait_in_force(c[PRIMARY])
            entry["durability"] = st["durability"]
            entry["all_in_sync"] = st["all_in_sync"]
            entry["message"] = st.get("message")
            entry["peers"] = st.get("peers")
            d = st["durability"]
            flag = ("" if d["effective"] == d["requested"] else
                    "  <-- NOT IN FORCE")
            sync = "every" if st["all_in_sync"] else "NOT every"
            print(f"    durability requested {d['requested']}, in force "
                  f"{d['effective']}{flag}; {sync} backup in sync"
                  + (f"; {st['message']}" if st.get("message") else ""))
            if flag:
                errors.append(f"{cfg['name']}: durability {d['requested']} "
                              f"not in force ({d['effective']}): "
                              f"{st.get('message')}")
            if env.get("inline") is None and cfg["nodes"] >= 2:
                env.update(inline_size(c[PRIMARY]))
                print(f"    inline {env.get('inline', '?')}: "
                      f"{env.get('inline_line') or 'no connected line'}")
            idle_s, measured = 5.0, False
            for spec in plans[cfg["key"]]:
                if spec["kind"] == "open":
                    spec = open_rate(spec, entry)
                res = measure_run(c, cfg, spec, args, idle_s)
                entry["runs"].append(res)
                what = (f"{fmt_size(spec['size']):>6} x{spec['threads']:<2}"
                        f" {run_label(spec):<12}")
                b = res.get("bench") or {}
                lat = b.get("latency_us") or {}
                if "error" in res:
                    errors.append(f"{cfg['name']} {what.strip()}: "
                                  f"{res['error']}")
                    print(f"    {what}: FAILED: {res['error']}")
                else:
                    v = b.get("verify") or {}
                    print(f"    {what}: "
                          f"{b['appends_per_s']:.0f} appends/s, "
                          f"{b['mib_per_s']:.2f} MiB/s, p50 {lat['p50']} us, "
                          f"p99 {lat['p99']} us"
                          + (f", {v.get('checked')} records verified"
                             if spec["kind"] == "verify" else ""))
                work = res.get("backup_work")
                if work:
                    if work.get("error"):
                        warnings.append(f"backup work, {what.strip()}: "
                                        f"{work['error']}")
                    rows = work.get("backups") or []
                    print("           backup work: " + ("; ".join(
                        f"node{r['backup']} {num(r['events_per_k'], 2)} "
                        f"events, {num(r['cpu_ms_above_idle_per_k'], 1)} "
                        f"CPU ms per 1k commits" for r in rows)
                        or f"not measured: {work.get('error')}"))
                    # the next idle baseline: about this run's length
                    secs = [r["run_s"] for r in rows]
                    if secs:
                        idle_s = min(max(max(secs), 2.0), 120.0)
                        measured = True
                elif not measured and res.get("guest_elapsed_s"):
                    # none yet: about the length of the run before
                    idle_s = min(max(res["guest_elapsed_s"], 2.0), 120.0)
                if res["durability"] != entry["durability"]:
                    entry["durability_changed"] = res["durability"]
            if cfg["key"] == "3n-quorum":
                say("one append's stages (tracepoints), 1 writer")
                st = results["stages"] = stage_breakdown(c[PRIMARY], args)
                print(f"    {st['records']} records: " + ", ".join(
                    f"{a} {num(st.get(a))} us" for a, _, _ in STAGES))
            st = status(c[PRIMARY])
            entry["peers_after"] = st.get("peers")
            n = reconnects(st) - reconnects({"peers": entry["peers"]})
            if n:
                print(f"    *** {n} peer reconnection(s) during the runs: "
                      "the numbers include waiting for them ***")
            results["configs"].append(entry)

        # perftest on the three guests alone, as the 3-node rows ran
        set_guests(c, BOOT_FIRST)
        say("perftest from node 1 (the same link)")
        for nd in running(c):
            if status(nd)["log"]["up"]:
                nd.run("rdmalogctl node down", timeout=60, check=True)
        for size in args.sizes:
            p = {"size": size}
            for tool, parse, key in (("ib_write_lat", parse_write_lat,
                                      "write_lat"),
                                     ("ib_write_bw", parse_write_bw,
                                      "write_bw")):
                # ib_write_lat with large messages stalls for minutes on
                # rxe under TCG at hundreds of iterations: fewer there
                iters = args.iters
                if tool == "ib_write_lat" and size > 4096:
                    iters = min(iters, 100)
                val, err = perftest_median(c, tool, size, iters, parse,
                                           args.reps)
                p[key] = val
                p[key + "_iters"] = iters
                if err:
                    # the baseline is missing from the table ("-"), and
                    # said why; rdmalog's own numbers stand
                    p[key + "_error"] = err
                    warnings.append(err)
            results["perftest"].append(p)
            pl, pb = p.get("write_lat") or {}, p.get("write_bw") or {}
            print(f"    {fmt_size(size):>6}: lat typical "
                  f"{num(pl.get('t_typical_us'))} us, p99 "
                  f"{num(pl.get('p99_us'))} us; bw "
                  f"{num(pb.get('bw_avg_mib_s'), 2)} MiB/s, "
                  f"{num(pb.get('msg_rate_mpps'), 4)} Mpps")
        ex = results["perftest_extra"]
        for key, tool, extra in (("write_lat_no_inline", "ib_write_lat",
                                  "-I 0"),
                                 ("send_lat", "ib_send_lat", "")):
            val, err = perftest(c, tool, SMALL, args.iters, parse_write_lat,
                                extra=extra)
            ex[key] = val
            if err:
                ex[key + "_error"] = err
                warnings.append(err)
            print(f"    {fmt_size(SMALL):>6}: {tool} {extra}".rstrip() +
                  f": typical {num((val or {}).get('t_typical_us'))} us, "
                  f"p99 {num((val or {}).get('p99_us'))} us")
        val, err = perftest_pair(c, "ib_write_bw", 65536, args.iters,
                                 parse_write_bw)
        ex["write_bw_pair"] = val
        if err:
            ex["write_bw_pair_error"] = err
            warnings.append(err)
        print(f"    64 KiB: ib_write_bw to node 2 and node 3 together: "
              f"{num((val or {}).get('sum_mib_s'), 2)} MiB/s in all")

        # ---- what a user would pick instead (selftests/bench_alt.py)
        results["alternatives"] = bench_alt.run(
            c, sys.modules[__name__], args, capacity, results, errors,
            warnings)
        # ----

        problems = c.kernel_log_problems()
        results["kernel_problems"] = problems
        errors += [f"kernel: {p}" for p in problems]
        if args.keep:
            print(f"workdir kept: {c.workdir}")

    meta["wall_s"] = round(time.monotonic() - t0, 1)
    rows = build_rows(results)
    results["table"] = rows
    results["goals"] = build_goals(results, args.threads)
    results["backup_work"] = work_table(results, args.threads)
    results["errors"] = errors
    results["warnings"] = warnings
    path = os.path.join(out, "results.json")
    with open(path, "w") as f:
        json.dump(results, f, indent=1)
        f.write("\n")
    print_table(results, rows)
    print_perftest(results)
    print_goals(results["goals"])
    print_work(results, args.threads)
    print_stages(results)
    bench_alt.print_section(results)    # what a user would pick instead
    print()
    pngs = plot(results, out)
    pngs += bench_alt.plot(results, out)
    print(f"results: {path}" + "".join(f"\nplot:    {p}" for p in pngs))
    print(f"bench done in {meta['wall_s']:.0f}s")
    if warnings:
        print("\nbench: warnings (perftest baseline or backup-work "
              "measurement missing):\n  " + "\n  ".join(warnings),
              file=sys.stderr)
    if errors:
        print("\nbench: FAILED:\n  " + "\n  ".join(errors), file=sys.stderr)
        return 1
    return 0


def guest_env(node):
    """vCPUs, the module's parameters and USER_HZ as node sees them."""
    r = node.run("nproc; cd /sys/module/rdmalog/parameters && "
                 "for p in crc32c_driver poll_us notify_kib force_ack; do "
                 "echo \"$p=$(cat $p 2>/dev/null)\"; done", timeout=60)
    lines = r.out.split()
    env = {"guest_vcpus": int(lines[0]) if lines and lines[0].isdigit()
           else None}
    for line in lines[1:]:
        k, _, v = line.partition("=")
        env[k] = int(v) if v.isdigit() else (v or None)
    return env


def inline_size(node, peer=2):
    """The inline size node's QP to peer got, from its kernel log line
    "node N: connected to node M (ADDR, connected|accepted, inline K)"
    (the latest)."""
    r = node.run(f"dmesg | grep 'node {node.index}: connected to node "
                 f"{peer} (' | tail -n 1", timeout=60)
    m = re.search(r"inline (\d+)\)", r.out)
    return {"inline": int(m.group(1)) if m else None,
            "inline_line": r.out.strip() or None}


def work_table(results, threads):
    """The backup-work rows for results.json."""
    out = []
    for kind in ("timed", "reader"):
        run = find_run(results, "3n-quorum", SMALL, threads, kind)
        w = (run or {}).get("backup_work") or {}
        for b in w.get("backups") or []:
            out.append(dict(b, reader=w.get("reader"),
                            size=SMALL, threads=threads))
        if w.get("error"):
            out.append({"reader": w.get("reader"), "error": w["error"]})
    return out


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _qemu_version():
    try:
        r = subprocess.run(["qemu-system-x86_64", "--version"],
                           stdout=subprocess.PIPE, timeout=30)
        return r.stdout.decode(errors="replace").splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return None


if __name__ == "__main__":
    sys.exit(main())
