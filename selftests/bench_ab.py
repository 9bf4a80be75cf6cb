#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench-ab: one writer's commit latency with each data-path knob
on and off, interleaved in the same VMs.

Boots three QEMU guests (soft-RoCE rxe0 on a private switch), applies a
3-node cluster with durability quorum, and measures ib_write_lat (node 1
to node 2, 64 B) at the start and the end as the baseline of the run.
Then, ROUNDS times, for every variant in turn (A B C ... A B C ...), sets
the module parameters of the variant on every node and runs rdmalog-bench
-t THREADS -s SIZE -n COUNT on node 1, reading the backups' counters
(`rdmalogctl -j stats`) before and after:

  default        the module's defaults
  active         notify_kib=0: a backup is asked to take every notice, as
                 before wire version 12 (its CPU on every batch)
  no-delay       commit_delay_us=0: a commit no batch carried goes out at
                 once in commit-only notices (the extra posts on the path)
  spin           poll_us=5000: the writer spins for its commit instead of
                 sleeping (under TCG a spin takes a host core)

Printed per variant: the median over the rounds of p50, p99, appends/s,
p50 in round trips (2 x ib_write_lat t_typical, the mean of the two
baselines), and the backups' apply runs and messages received per 1,000
commits (heartbeats included: the rate at idle is printed too). Nothing
passes or fails on a clock; the exit status is non-zero only when a run
fails or a kernel problem shows on a console. OUT/results.json keeps
every run.
"""

import argparse
import datetime
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "vm"))

from cluster import Cluster  # noqa: E402
import bench  # noqa: E402

VARIANTS = (
    ("default", {}),
    ("active", {"notify_kib": 0}),
    ("no-delay", {"commit_delay_us": 0}),
    ("spin", {"poll_us": 5000}),
)
DEFAULTS = {"notify_kib": 512, "commit_delay_us": 1000, "poll_us": 50}
CFG = {"name": "3 nodes, quorum", "key": "3n-quorum", "nodes": 3,
       "durability": "quorum"}


def stats(nd):
    r = nd.run("rdmalogctl -j stats", timeout=60, check=True)
    return json.loads(r.out)


def set_params(c, params):
    vals = dict(DEFAULTS, **params)
    cmd = "; ".join(f"echo {v} > /sys/module/rdmalog/parameters/{k}"
                    for k, v in vals.items())
    for nd in c:
        nd.run(cmd, timeout=60, check=True)


def write_lat(c):
    val, err = bench.perftest(c, "ib_write_lat", 64, 1000,
                              bench.parse_write_lat)
    if err:
        raise RuntimeError(err)
    return val["t_typical_us"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--out", default=os.path.join(REPO, "build", "bench-ab"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    t0 = time.monotonic()
    res = {"date": datetime.datetime.now(datetime.timezone.utc)
           .isoformat(timespec="seconds"), "args": vars(args), "runs": []}
    with Cluster(3, mem="768M") as c:
        c.run_all("modprobe rdmalog", timeout=120, check=True)
        res["crc32c_driver"] = c[1].run(
            "cat /sys/module/rdmalog/parameters/crc32c_driver",
            timeout=60).out.strip()
        typ = [write_lat(c)]
        bench.apply_config(c, CFG, 64 * bench.MIB)
        bench.wait_in_force(c[1])
        i0 = {n: stats(c[n]) for n in (2, 3)}
        time.sleep(10)
        i1 = {n: stats(c[n]) for n in (2, 3)}
        idle = {n: (i1[n]["msgs_received"] - i0[n]["msgs_received"]) / 10
                for n in (2, 3)}
        res["idle_msgs_per_s"] = idle
        for rnd in range(args.rounds):
            for name, params in VARIANTS:
                set_params(c, params)
                s0 = {n: stats(c[n]) for n in (1, 2, 3)}
                cmd = (f"rdmalog-bench -j -t {args.threads} -s {args.size} "
                       f"-n {args.count} -w 20")
                r = c[1].run(cmd, timeout=900)
                s1 = {n: stats(c[n]) for n in (1, 2, 3)}
                b = json.loads(r.out.strip().splitlines()[-1])
                if not r.ok or not b.get("ok"):
                    raise RuntimeError(f"{name}: {r.out[-800:]}")
                commits = s1[1]["appends"] - s0[1]["appends"]
                run = {"variant": name, "round": rnd, "params": params,
                       "p50": b["latency_us"]["p50"],
                       "p99": b["latency_us"]["p99"],
                       "appends_s": b["appends_per_s"], "commits": commits}
                for n in (2, 3):
                    for k in ("apply_runs", "msgs_received"):
                        run[f"{k}_{n}"] = s1[n][k] - s0[n][k]
                res["runs"].append(run)
                print(f"round {rnd} {name:9} p50 {run['p50']:8.1f} us  "
                      f"p99 {run['p99']:8.1f} us  "
                      f"{run['appends_s']:7.1f}/s  backup 2: "
                      f"{run['apply_runs_2']} applies, "
                      f"{run['msgs_received_2']} msgs", flush=True)
        set_params(c, {})
        bench.apply_config(c, dict(CFG, nodes=0), 64 * bench.MIB)
        typ.append(write_lat(c))
        res["kernel_problems"] = c.kernel_log_problems()
    rtt = 2 * statistics.mean(typ)
    res["write_lat_typ_us"] = typ
    print(f"\nib_write_lat 64 B t_typical {typ[0]:.0f} us (start), "
          f"{typ[1]:.0f} us (end): round trip {rtt:.0f} us; "
          f"crc32c {res['crc32c_driver']}; idle msgs/s {idle}")
    print(f"{'variant':10} {'p50 us':>8} {'RTTs':>5} {'p99 us':>8} "
          f"{'appends/s':>9} {'applies/1k':>10} {'msgs/1k':>8}")
    res["summary"] = []
    for name, _ in VARIANTS:
        rs = [r for r in res["runs"] if r["variant"] == name]
        med = {k: statistics.median(r[k] for r in rs)
               for k in ("p50", "p99", "appends_s")}
        per_k = statistics.median(
            1000 * (r["apply_runs_2"] + r["apply_runs_3"]) / 2 / r["commits"]
            for r in rs)
        msgs_k = statistics.median(
            1000 * (r["msgs_received_2"] + r["msgs_received_3"]) / 2 /
            r["commits"] for r in rs)
        res["summary"].append(dict(med, variant=name, rtts=med["p50"] / rtt,
                                   applies_per_k=per_k, msgs_per_k=msgs_k))
        print(f"{name:10} {med['p50']:8.1f} {med['p50'] / rtt:5.2f} "
              f"{med['p99']:8.1f} {med['appends_s']:9.1f} {per_k:10.2f} "
              f"{msgs_k:8.2f}")
    res["wall_s"] = round(time.monotonic() - t0)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(f"done in {res['wall_s']} s; {args.out}/results.json")
    if res["kernel_problems"]:
        print("kernel problems:", res["kernel_problems"], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
