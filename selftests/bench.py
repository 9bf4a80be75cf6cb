#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench: rdmalog append latency and throughput next to perftest.

Boots three QEMU guests (soft-RoCE rxe0 on a private switch) and, in one
run on the same VMs:

  * for each configuration (3 nodes durability quorum, 2 nodes durability
    all) and each record size, applies a cluster file on the nodes of the
    configuration and runs rdmalog-bench on the primary (node 1):
    THREADS threads x COUNT appends, every record read back and checked
    (--verify);
  * as the baseline of the same link, perftest between node 1 and node 2:
    ib_write_lat -s SIZE -n ITERS and ib_write_bw -s SIZE -n ITERS.

Before measuring a configuration it waits until the primary has the
requested durability in force (`rdmalogctl wait durable`: durability
effective == requested, that is enough backups connected, granted their
rings and in sync), so every append is a replicated commit: it returns once
floor(N/2) (quorum) or N - 1 (all) backups hold the record. The durability
in force after each run is printed next to its numbers; a configuration that
never reached it is measured anyway, marked in the table, and fails the run.

Output: a side-by-side table on stdout, OUT/results.json, OUT/latency.png
and OUT/throughput.png (gnuplot; the data and scripts are kept next to
them). OUT defaults to build/bench.

Nothing here passes or fails on a clock: the exit status is non-zero only
when an rdmalog benchmark could not run, an append failed or did not
verify, or a kernel problem showed up on a console. A perftest baseline
that could not be measured is shown as "-" and said why (ib_write_lat runs
at most 100 iterations above 4 KiB: rxe under TCG stalls for minutes on
large messages at more).
"""

import argparse
import datetime
import json
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

from cluster import Cluster, VMError  # noqa: E402

CLUSTER_ID = 4242
PRIMARY = 1
SIZES = (64, 4096, 65536)
CONFIGS = (
    {"name": "3 nodes, quorum", "key": "3n-quorum", "nodes": 3,
     "durability": "quorum"},
    {"name": "2 nodes, all", "key": "2n-all", "nodes": 2,
     "durability": "all"},
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
    return {"bytes": int(v[0]), "iterations": int(v[1]), "t_min_us": v[2],
            "t_max_us": v[3], "t_typical_us": v[4], "t_avg_us": v[5],
            "t_stdev_us": v[6], "p99_us": v[7], "p999_us": v[8]}


def parse_write_bw(out):
    """ib_write_bw: #bytes #iterations BW_peak BW_average MsgRate; perftest's
    MB/sec is 2^20 bytes per second."""
    v = _perftest_row(out, "BW average")
    if len(v) < 5:
        raise ValueError(f"short ib_write_bw result: {v}")
    return {"bytes": int(v[0]), "iterations": int(v[1]),
            "bw_peak_mib_s": v[2], "bw_avg_mib_s": v[3], "msg_rate_mpps": v[4]}


def perftest(c, tool, size, iters, parse):
    """Run perftest tool: server on node 2, client on node 1. The client is
    retried only until the server listens (the first 60 s, and only while
    the server runs): a client that fails after that, or a server that
    exits without a successful client, is an error, not a reason to retry
    for the whole timeout. Returns (parsed result or None, error or None)."""
    server, client = c[2], c[1]
    args = f"{tool} -d rxe0 -F -s {size} -n {iters}"
    # -F: do not fail when the CPU frequency looks inconsistent (it does
    # under TCG); times come from the TSC the guest calibrated.
    timeout = 120 + iters * (size // 1024 + 10) // 50
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
                return None, (f"{tool} -s {size}: client rc={cli.rc}"
                              f"{' (timed out)' if cli.timed_out else ''}: "
                              f"{cli.out.strip()[-400:]} | server rc="
                              f"{sres.rc}: {sres.out.strip()[-400:]}")
            time.sleep(1)
        res = srv.wait(120)
        if not res.ok:
            return None, f"{tool} server rc={res.rc}: {res.out[-500:]}"
        return parse(cli.out), None
    except (VMError, ValueError) as e:
        srv.kill()
        return None, f"{tool} -s {size}: {e}"


# ---------------------------------------------------------------- rdmalog

def status(node):
    r = node.run("rdmalogctl -j status", timeout=60, check=True)
    return json.loads(r.out)


def apply_config(c, cfg, capacity):
    """Take every log down, then apply cfg's cluster file on its nodes.
    A fresh log (LSN 1) on every node of the configuration."""
    text = cluster_file(cfg, capacity)
    for nd in c:
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
    backups in sync), or after timeout s (the caller reports that)."""
    # rdmalogctl wait follows the events (exit 5 on the timeout).
    node.run(f"rdmalogctl wait durable --timeout {timeout}",
             timeout=timeout + 60)
    return status(node)


def reconnects(st):
    return sum(p.get("reconnects") or 0 for p in st.get("peers") or [])


def run_rdmalog(node, size, args):
    """One rdmalog-bench run on an emptied log; returns a result dict."""
    st = status(node)
    log = st["log"]
    if log["commit_lsn"] > log["first_lsn"]:
        node.run(f"rdmalogctl log trim {log['commit_lsn']}", timeout=60,
                 check=True)
    cmd = (f"rdmalog-bench -j --verify -t {args.threads} -s {size} "
           f"-n {args.count} -w {args.warmup}")
    r = node.run(cmd, timeout=args.run_timeout)
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


# ----------------------------------------------------------------- output

def ratio(a, b):
    return float(f"{a / b:.3g}") if a is not None and b else None


def num(v, digits=1):
    if v is None:
        return "-"
    if abs(v) >= 100 or digits == 0:
        return f"{v:.0f}"
    return f"{v:.{digits}f}"


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
                "config": cfg["name"], "size": run["size"],
                "durability": req if eff == req else f"{req}->{eff}",
                "replicated": d.get("effective") not in (None, "async"),
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


def print_table(results, rows):
    cols = [("config", "config", "<"), ("size", "size", ">"),
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
        sum(widths[k] + 2 for k, _, _ in cols[:8]) - 2)
    head2 = "perftest node1->node2 (us, MiB/s)".ljust(
        sum(widths[k] + 2 for k, _, _ in cols[9:12]) - 2)
    print(f"\n{head1}  |  {head2}  |  rdmalog / perftest")
    print("  ".join(f"{h:{a}{widths[k]}}" for k, h, a in cols))
    print("  ".join("-" * widths[k] for k, _, _ in cols))
    for t in table:
        print("  ".join(f"{t[k]:{a}{widths[k]}}" for k, _, a in cols))
    print()
    m = results["meta"]
    print(f"{m['date']}  accel {m['accel']}  guest kernel "
          f"{m['guest_kernel']}  host {m['host_cpus']} CPUs, guests {m.get('smp', 1)} vCPU")
    print(f"rdmalog: {m['threads']} threads x {m['count']} appends "
          f"(+{m['warmup']} warmup) per size, every record read back and "
          f"verified; perftest: {m['perftest_iters']} iterations "
          f"(ib_write_lat above 4 KiB: at most 100)")
    print("latency in microseconds: rdmalog = one write() until durable; "
          "perftest lat = ib_write_lat (half a round trip)")
    if rows and all(r["in_force"] for r in rows):
        print("durability in force = requested for every row: each append "
              "returned once the backups the mode needs held it (RDMA WRITE "
              "+ APPEND completion on soft-RoCE)")
    elif not any(r["replicated"] for r in rows):
        print("\n*** REPLICATION WAS NOT IN EFFECT: rdmalogctl status reports "
              "durability 'effective' = async for every configuration, so "
              "the rdmalog numbers are local appends on node 1, not "
              "replicated commits. ***")
    else:
        print("\n*** The requested durability was NOT in force for the rows "
              "marked 'requested->in force'. ***")
    print("*** QEMU TCG numbers say nothing about hardware. ***"
          if m["accel"] == "tcg" else "")


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
    sizes = sorted({r["size"] for c in results["configs"] for r in c["runs"]})
    if not sizes:
        return []
    files = {}
    for cfg in results["configs"]:
        path = os.path.join(out, f"rdmalog-{cfg['key']}.dat")
        with open(path, "w") as f:
            f.write("# size appends_s mib_s p50_us p99_us p999_us\n")
            for run in cfg["runs"]:
                b = run.get("bench") or {}
                lat = b.get("latency_us") or {}
                if "error" in run or not lat:
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
            os.path.join(out, "throughput.png")]


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
                    help="rdmalog-bench threads (default 4)")
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
    if args.threads < 1 or args.count < 1 or args.warmup < 0 or args.iters < 5:
        ap.error("--threads and --count >= 1, --warmup >= 0, --iters >= 5")
    if any(s < 1 or s > MIB for s in args.sizes):
        ap.error("sizes must be 1 B .. 1 MiB (the bench's max-record)")
    args.run_timeout = 300 + args.threads * (args.count + args.warmup) // 4

    # Every run verifies what it wrote, so each one's records must fit in
    # the ring at once: size the ring (and the guests' memory) for the
    # largest record.
    need = args.threads * (args.count + args.warmup) * \
        ring_bytes(max(args.sizes))
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
    results = {"meta": {}, "configs": [], "perftest": []}
    say(f"booting 3 VMs ({mem} each)")
    with Cluster(3, mem=mem, keep=args.keep, smp=args.smp) as c:
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
            "guest_mem": mem,
            "link": "soft-RoCE (rxe0) over virtio-net on one vde_switch",
            "threads": args.threads, "count": args.count,
            "warmup": args.warmup, "perftest_iters": args.iters,
            "sizes": args.sizes, "ring_capacity": capacity,
            "quick": args.quick,
        })
        print(f"booted in {time.monotonic() - t0:.0f}s: accel {c.accel}, "
              f"guest kernel {meta['guest_kernel']}")
        c.run_all("modprobe rdmalog", timeout=120, check=True)

        for cfg in CONFIGS:
            say(f"{cfg['name']}: cluster file on node 1..{cfg['nodes']}")
            entry = {"name": cfg["name"], "key": cfg["key"],
                     "nodes": cfg["nodes"], "primary": PRIMARY,
                     "cluster_file": apply_config(c, cfg, capacity),
                     "runs": []}
            st = wait_in_force(c[PRIMARY])
            entry["durability"] = st["durability"]
            entry["message"] = st.get("message")
            entry["peers"] = st.get("peers")
            d = st["durability"]
            flag = ("" if d["effective"] == d["requested"] else
                    "  <-- NOT IN FORCE")
            print(f"    durability requested {d['requested']}, in force "
                  f"{d['effective']}{flag}; {st.get('message') or ''}")
            if flag:
                errors.append(f"{cfg['name']}: durability {d['requested']} "
                              f"not in force ({d['effective']}): "
                              f"{st.get('message')}")
            for size in args.sizes:
                res = run_rdmalog(c[PRIMARY], size, args)
                res["size"] = size
                entry["runs"].append(res)
                b = res.get("bench") or {}
                lat = b.get("latency_us") or {}
                if "error" in res:
                    errors.append(f"{cfg['name']} {fmt_size(size)}: "
                                  f"{res['error']}")
                    print(f"    {fmt_size(size):>6}: FAILED: {res['error']}")
                else:
                    print(f"    {fmt_size(size):>6}: "
                          f"{b['appends_per_s']:.0f} appends/s, "
                          f"{b['mib_per_s']:.2f} MiB/s, p50 {lat['p50']} us, "
                          f"p99 {lat['p99']} us, {b['verify']['checked']} "
                          f"records verified")
                if res["durability"] != entry["durability"]:
                    entry["durability_changed"] = res["durability"]
            st = status(c[PRIMARY])
            entry["peers_after"] = st.get("peers")
            n = reconnects(st) - reconnects({"peers": entry["peers"]})
            if n:
                print(f"    *** {n} peer reconnection(s) during the runs: "
                      "the numbers include waiting for them ***")
            results["configs"].append(entry)

        say("perftest between node 1 and node 2 (the same link)")
        for nd in c:
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
                val, err = perftest(c, tool, size, iters, parse)
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
                  f"{num(pb.get('bw_avg_mib_s'), 2)} MiB/s")

        problems = c.kernel_log_problems()
        results["kernel_problems"] = problems
        errors += [f"kernel: {p}" for p in problems]
        if args.keep:
            print(f"workdir kept: {c.workdir}")

    meta["wall_s"] = round(time.monotonic() - t0, 1)
    rows = build_rows(results)
    results["table"] = rows
    results["errors"] = errors
    results["warnings"] = warnings
    path = os.path.join(out, "results.json")
    with open(path, "w") as f:
        json.dump(results, f, indent=1)
        f.write("\n")
    print_table(results, rows)
    pngs = plot(results, out)
    print(f"results: {path}" + "".join(f"\nplot:    {p}" for p in pngs))
    print(f"bench done in {meta['wall_s']:.0f}s")
    if warnings:
        print("\nbench: perftest baseline missing:\n  " +
              "\n  ".join(warnings), file=sys.stderr)
    if errors:
        print("\nbench: FAILED:\n  " + "\n  ".join(errors), file=sys.stderr)
        return 1
    return 0


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
