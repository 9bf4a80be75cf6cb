# SPDX-License-Identifier: GPL-2.0
"""make bench: what a user would pick instead, in the same VMs and run.

Called from bench.py's main (run() inside its cluster, print_section()
and plot() after its own output), on node 1 and node 2 of its guests:

  * rdmalog, 2 nodes durability all, 4 KiB records with 1 and 16 writers
    (bench.py's own runs when its plan has them, else measured here with
    its machinery: the cluster file applied again, the log emptied, the
    median of --reps runs);
  * DRBD, the guest kernel's own drbd.ko (8.4 in Linux 6.1) driven by
    drbd-utils (drbdadm, which runs its 8.4 helpers), protocol C over TCP
    between the same two guests (198.18.0.1 primary, 198.18.0.2
    secondary), each backed by a RAM disk (brd), the initial sync skipped
    (new-current-uuid --clear-bitmap: both disks are zeroes); fio on
    /dev/drbd0 on node 1: 4 KiB random writes, O_DIRECT|O_DSYNC
    (direct=1 sync=dsync), libaio at queue depth 1 and 16, time based;
    IOPS and the completion latency's percentiles (lat_percentiles=1:
    submission to completion). The same fio on node 1's bare RAM disk
    first (no replication: the local floor DRBD's numbers stand on);
  * a plain TCP request/response round trip between the same two guests
    (selftests/tcp_pingpong.c: 64 B each way, TCP_NODELAY, blocking
    send/recv) beside ib_write_lat's round trip at 64 B (2 x t_typical,
    bench.py's measurement of the same run).

Ratios: rdmalog / DRBD (p50 latency, ops/s) at QD1 vs 1 writer and QD16
vs 16 writers; ib_write_lat RTT / TCP RTT. A DRBD or TCP measurement that
cannot be made is said in the section with its reason (a warning, not a
failure); an rdmalog run that fails is an error, as in bench.py.

fio is not in the guests' usual initramfs (its libraries add 74 MB to
every guest of every test): initrd() builds the bench's own, the usual one
plus fio, with mkinitramfs.sh's EXTRA files.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "vm"))

from cluster import VMError, build_initrd, default_kver  # noqa: E402
from bench_fmt import num, print_grid, ratio  # noqa: E402

SIZE = 4096                 # DRBD's block and rdmalog's record
WRITERS = (1, 16)           # rdmalog writers = fio queue depths
KEY = "2n-all"              # bench.py's 2 nodes, durability all
NODES = (1, 2)              # primary, secondary/backup
RES = "r0"                  # the DRBD resource
DRBD_PORT = 7789
DISK_MIB = 64               # each RAM disk (brd allocates on write)
FIO_SPAN = "32m"            # the part fio writes
TCP_PORT = 18600
TCP_SIZE = 64
PINGPONG = "/usr/lib/rdmalog/selftests/tcp_pingpong"
FIO = "/usr/bin/fio"
TCG_NOTE = ("under TCG soft-RoCE is itself software, so the RDMA-vs-TCP "
            "ratio here is not the hardware one")


def initrd(kver=None):
    """The bench's initramfs: the guests' usual one plus fio (and its
    libraries); the usual one when fio is not installed here."""
    kver = kver or default_kver()
    fio = shutil.which("fio")
    if not fio:
        return build_initrd(kver)
    out = os.path.join(REPO, "build", "vm", f"initramfs-{kver}-bench.cpio")
    return build_initrd(kver, out=out, extra=[f"{fio}:{FIO}"])


def _say(text):
    print(f"==> {text}", flush=True)


def _err(r, what):
    return (f"{what}: rc={r.rc}{' (timed out)' if r.timed_out else ''}: "
            f"{r.out.strip()[-600:]}")


# ------------------------------------------------------------ rdmalog

def rdmalog_rows(c, b, args, capacity, results, errors):
    """{writers: run} of 2 nodes all at SIZE: bench.py's runs when it has
    them, else measured here (the configuration applied again)."""
    rows = {}
    missing = []
    for t in WRITERS:
        run = b.find_run(results, KEY, SIZE, t)
        if run:
            rows[t] = dict(run, source="bench.py's row")
        else:
            missing.append(t)
    if not missing:
        return rows
    cfg = next(x for x in b.CONFIGS if x["key"] == KEY)
    _say(f"{cfg['name']}: {b.fmt_size(SIZE)} with "
         f"{' and '.join(map(str, missing))} writer(s), for the comparison")
    a = args
    need = max(missing) * (args.count + args.warmup) * b.ring_bytes(SIZE)
    if need * 1.25 > capacity:          # what rdmalog-bench would refuse
        a = type(args)(**vars(args))
        a.count = max(1, int(capacity / 1.25 / max(missing) /
                             b.ring_bytes(SIZE)) - args.warmup)
    b.apply_config(c, cfg, capacity)
    st = b.wait_in_force(c[NODES[0]])
    d = st["durability"]
    if d["effective"] != d["requested"]:
        errors.append(f"{cfg['name']} (comparison rows): durability "
                      f"{d['requested']} not in force ({d['effective']}): "
                      f"{st.get('message')}")
    for t in missing:
        spec = {"size": SIZE, "threads": t, "kind": "timed"}
        res = b.measure_run(c, cfg, spec, a, 5.0)
        res["source"] = "measured for this comparison"
        rows[t] = res
        bb = res.get("bench") or {}
        lat = bb.get("latency_us") or {}
        if "error" in res:
            errors.append(f"{cfg['name']} {b.fmt_size(SIZE)} x{t} "
                          f"(comparison): {res['error']}")
            print(f"    {b.fmt_size(SIZE):>6} x{t:<2}: FAILED: "
                  f"{res['error']}")
        else:
            print(f"    {b.fmt_size(SIZE):>6} x{t:<2}: "
                  f"{bb['appends_per_s']:.0f} appends/s, p50 {lat['p50']} "
                  f"us, p99 {lat['p99']} us (durability in force "
                  f"{res['durability'].get('effective')})")
    for nd in c:
        if nd.alive and b.status(nd)["log"]["up"]:
            nd.run("rdmalogctl node down", timeout=60, check=True)
    return rows


# --------------------------------------------------------------- fio

def fio_cmd(target, qd, runtime, ramp):
    return (f"{FIO} --name=w{qd} --filename={target} --ioengine=libaio "
            f"--iodepth={qd} --rw=randwrite --bs={SIZE} --size={FIO_SPAN} "
            f"--direct=1 --sync=dsync --time_based --runtime={runtime} "
            f"--ramp_time={ramp} --lat_percentiles=1 "
            f"--clocksource=clock_gettime --output-format=json")


def parse_fio(text):
    """IOPS and latency (us: submission to completion) of fio's JSON."""
    start = text.find("{")
    if start < 0:
        raise ValueError(f"no JSON from fio: {text.strip()[-400:]}")
    j = json.loads(text[start:])
    job = j["jobs"][0]
    w = job["write"]
    if job.get("error"):
        raise ValueError(f"fio job error {job['error']}")
    lat = w.get("lat_ns") or {}
    pct = lat.get("percentile") or {}

    def p(k):
        v = pct.get(k)
        return round(v / 1000, 1) if v is not None else None
    if not w.get("total_ios"):
        raise ValueError("fio completed no write")
    return {"iops": round(w["iops"], 1), "ios": w["total_ios"],
            "mib_s": round(w["bw_bytes"] / (1 << 20), 2),
            "p50_us": p("50.000000"), "p99_us": p("99.000000"),
            "p999_us": p("99.900000"),
            "mean_us": round(lat.get("mean", 0) / 1000, 1),
            "max_us": round(lat.get("max", 0) / 1000, 1),
            "fio": j.get("fio version")}


def fio_runs(node, target, args, label, reps=None):
    """fio at each queue depth on node's target: {"QD": result or
    {"error"}}; each the median over reps (default --reps) runs."""
    runtime, ramp = (3, 1) if args.quick else (10, 2)
    reps = reps or args.reps
    out = {}
    for qd in WRITERS:
        cmd = fio_cmd(target, qd, runtime, ramp)
        vals, err = [], None
        for _ in range(reps):
            r = node.run(f"{cmd} --output=/tmp/fio.json >/tmp/fio.err "
                         f"2>&1; rc=$?; cat /tmp/fio.json; "
                         f"cat /tmp/fio.err >&2; exit $rc",
                         timeout=runtime + ramp + 120)
            if not r.ok:
                err = err or _err(r, cmd)
                continue
            try:
                vals.append(parse_fio(r.out))
            except (ValueError, KeyError) as e:
                err = err or f"{cmd}: {e}"
        if not vals:
            out[str(qd)] = {"error": err, "command": cmd}
            print(f"    {label} QD{qd}: FAILED: {err}")
            continue
        res = dict(vals[0])
        for k, v in vals[0].items():
            if isinstance(v, (int, float)) and all(
                    x.get(k) is not None for x in vals):
                res[k] = statistics.median(x[k] for x in vals)
        res.update(command=cmd, reps=len(vals), runtime_s=runtime,
                   ramp_s=ramp)
        out[str(qd)] = res
        print(f"    {label} QD{qd}: {res['iops']:.0f} IOPS, p50 "
              f"{res['p50_us']} us, p99 {res['p99_us']} us")
    return out


# -------------------------------------------------------------- DRBD

def drbd_conf(c):
    hosts = "".join(
        f"\ton node{i} {{\n\t\taddress {c[i].ip}:{DRBD_PORT};\n\t}}\n"
        for i in NODES)
    return (f"# rdmalog bench: DRBD protocol C between node {NODES[0]} "
            f"and node {NODES[1]}\n"
            "global {\n\tusage-count no;\n}\n"
            f"resource {RES} {{\n"
            "\tnet {\n\t\tprotocol C;\n\t}\n"
            "\tdevice /dev/drbd0;\n\tdisk /dev/ram0;\n"
            "\tmeta-disk internal;\n" + hosts + "}\n")


def drbd_state(node):
    r = node.run("cat /proc/drbd", timeout=30)
    return r.out.strip()


def drbd_up(c):
    """RAM disks, the resource up on both nodes, connected, the initial
    sync skipped, node 1 primary. Returns {"version", "config", "proc",
    "steps"}; raises RuntimeError with the reason when a step fails."""
    info = {"steps": []}
    p, s = c[NODES[0]], c[NODES[1]]

    def step(nd, cmd, timeout=120):
        r = nd.run(cmd, timeout=timeout)
        info["steps"].append({"node": nd.index, "command": cmd, "rc": r.rc,
                              "out": r.out.strip()[-400:]})
        if not r.ok:
            raise RuntimeError(_err(r, f"node{nd.index}: {cmd}"))
        return r
    conf = drbd_conf(c)
    info["config"] = conf
    for nd in (p, s):
        step(nd, f"modprobe brd rd_nr=1 rd_size={DISK_MIB * 1024} && "
             "modprobe drbd && test -b /dev/ram0")
        nd.put(conf, "/etc/drbd.conf")
        step(nd, "mkdir -p /var/lib/drbd /var/run/drbd /run/drbd "
             "/var/lock")
        step(nd, f"drbdadm create-md --force {RES} </dev/null")
        step(nd, f"drbdadm up {RES}")
    info["version"] = drbd_state(p).splitlines()[0] \
        if drbd_state(p) else None
    # connected: both sides see each other (Inconsistent, fresh metadata)
    try:
        p.wait_until("grep -q 'cs:Connected' /proc/drbd", timeout=90)
        s.wait_until("grep -q 'cs:Connected' /proc/drbd", timeout=30)
    except VMError as e:
        raise RuntimeError(f"the two nodes did not connect: {e}; node1 "
                           f"/proc/drbd: {drbd_state(p)}; node2: "
                           f"{drbd_state(s)}")
    # both disks are zeroes: no initial sync
    step(p, f"drbdadm -- --clear-bitmap new-current-uuid {RES}")
    try:
        for nd in (p, s):
            nd.wait_until("grep -q 'ds:UpToDate/UpToDate' /proc/drbd",
                          timeout=60)
    except VMError as e:
        raise RuntimeError(f"not UpToDate/UpToDate after new-current-uuid "
                           f"--clear-bitmap: {e}")
    step(p, f"drbdadm primary {RES}")
    info["proc"] = drbd_state(p)
    if "ro:Primary/Secondary" not in info["proc"] or \
            "cs:Connected" not in info["proc"]:
        raise RuntimeError(f"node1 is not a connected primary: "
                           f"{info['proc']}")
    return info


def drbd_down(c):
    """Best effort: both resources down, the modules out."""
    for i in NODES:
        try:
            c[i].run(f"drbdadm secondary {RES} 2>/dev/null; "
                     f"drbdadm down {RES}; rmmod drbd; rmmod brd",
                     timeout=120)
        except VMError:
            pass


def drbd(c, args, warnings):
    """The DRBD section of the results."""
    sec = {"size": SIZE, "nodes": list(NODES), "protocol": "C",
           "transport": "TCP", "disk_mib": DISK_MIB, "span": FIO_SPAN}
    p = c[NODES[0]]
    r = p.run(f"test -x {FIO} && {FIO} --version", timeout=60)
    if not r.ok:
        sec["error"] = (f"fio is not in the guest ({FIO}): install the fio "
                        "package here (make deps) so that the bench's "
                        "initramfs ships it")
        warnings.append(f"DRBD: {sec['error']}")
        return sec
    sec["fio_version"] = r.out.strip()
    # the bare RAM disk first: the local floor
    try:
        r = p.run(f"modprobe brd rd_nr=1 rd_size={DISK_MIB * 1024} && "
                  "test -b /dev/ram0", timeout=120)
        if r.ok:
            # context only: one run each
            sec["local"] = fio_runs(p, "/dev/ram0", args, "brd alone", 1)
        else:
            sec["local_error"] = _err(r, "modprobe brd")
        p.run("rmmod brd", timeout=60)
    except VMError as e:
        sec["local_error"] = str(e)
    try:
        sec.update(drbd_up(c))
    except (RuntimeError, VMError) as e:
        sec["error"] = f"DRBD could not be set up: {e}"
        warnings.append(f"DRBD: {sec['error']}")
        print(f"    DRBD: {sec['error']}")
        drbd_down(c)
        return sec
    print(f"    DRBD up: {sec.get('version')}; node1 primary, node2 "
          "secondary, protocol C, connected, UpToDate/UpToDate")
    try:
        sec["runs"] = fio_runs(p, "/dev/drbd0", args, "DRBD")
        sec["proc_after"] = drbd_state(p)
    except VMError as e:
        sec["error"] = f"fio on DRBD: {e}"
    finally:
        drbd_down(c)
    for qd, v in (sec.get("runs") or {}).items():
        if "error" in v:
            warnings.append(f"DRBD QD{qd}: {v['error']}")
    if "error" in sec:
        warnings.append(f"DRBD: {sec['error']}")
    return sec


# --------------------------------------------------------------- TCP

def tcp_rtt(c, args):
    """tcp_pingpong node1 -> node2: median over --reps runs."""
    iters = max(args.iters, 200)
    warm = 50
    srv_cmd = f"{PINGPONG} -l -p {TCP_PORT} -s {TCP_SIZE}"
    cli_cmd = (f"{PINGPONG} -c {c[NODES[1]].ip} -p {TCP_PORT} "
               f"-s {TCP_SIZE} -n {iters} -w {warm}")
    vals, err = [], None
    for _ in range(args.reps):
        srv = c[NODES[1]].spawn(srv_cmd, timeout=300)
        try:
            c[NODES[1]].wait_until(
                f"cat /proc/net/tcp | grep -qiE ':{TCP_PORT:04X} "
                "[0-9a-f]+:0000 0A'", timeout=60, interval=0.3)
            r = c[NODES[0]].run(cli_cmd, timeout=240)
            sres = srv.wait(60)
        except VMError as e:
            srv.kill()
            err = err or f"{cli_cmd}: {e}"
            continue
        if not r.ok or not sres.ok:
            err = err or (_err(r, cli_cmd) + f" | server rc={sres.rc}: "
                          f"{sres.out.strip()[-300:]}")
            continue
        try:
            vals.append(json.loads(r.out.strip().splitlines()[-1]))
        except (ValueError, IndexError) as e:
            err = err or f"{cli_cmd}: {e}: {r.out.strip()[-300:]}"
    if not vals:
        return {"error": err, "command": cli_cmd}
    res = {"size": TCP_SIZE, "iterations": iters, "warmup": warm,
           "command": f"{srv_cmd} (node{NODES[1]}); {cli_cmd} "
                      f"(node{NODES[0]})", "reps": len(vals)}
    for k in vals[0]["rtt_us"]:
        res[f"{k}_us"] = statistics.median(v["rtt_us"][k] for v in vals)
    return res


def rdma_rtt(c, b, args, results):
    """ib_write_lat at TCP_SIZE: bench.py's figure of this run, else
    measured here."""
    lat = b.perftest_at(results, TCP_SIZE, "write_lat")
    src = "bench.py's baseline"
    if not lat.get("t_typical_us"):
        lat, err = b.perftest(c, "ib_write_lat", TCP_SIZE, args.iters,
                              b.parse_write_lat)
        if not lat:
            return {"error": err}
        src = "measured here"
    return {"t_typical_us": lat["t_typical_us"], "p99_half_us":
            lat.get("p99_us"), "rtt_us": 2 * lat["t_typical_us"],
            "rtt_p99_us": 2 * lat["p99_us"] if lat.get("p99_us") else None,
            "inline": lat.get("inline"), "command": lat.get("command"),
            "source": src}


# -------------------------------------------------------------- main

def run(c, b, args, capacity, results, errors, warnings):
    """Everything above on bench.py's cluster c (b: the bench module);
    the results' "alternatives" section."""
    sec = {"size": SIZE, "writers": list(WRITERS), "tcg_note": TCG_NOTE}
    _say("what a user would pick instead: rdmalog 2 nodes all, "
         f"{b.fmt_size(SIZE)}, beside DRBD and TCP")
    t0 = time.monotonic()
    rows = rdmalog_rows(c, b, args, capacity, results, errors)
    sec["rdmalog"] = {str(t): r for t, r in rows.items()}
    _say(f"TCP ping-pong node{NODES[0]} -> node{NODES[1]}, {TCP_SIZE} B")
    sec["tcp"] = tcp_rtt(c, args)
    if "error" in sec["tcp"]:
        warnings.append(f"TCP ping-pong: {sec['tcp']['error']}")
        print(f"    FAILED: {sec['tcp']['error']}")
    else:
        print(f"    round trip p50 {sec['tcp']['p50_us']} us, p99 "
              f"{sec['tcp']['p99_us']} us")
    sec["rdma"] = rdma_rtt(c, b, args, results)
    if "error" in sec["rdma"]:
        warnings.append(f"ib_write_lat for the TCP comparison: "
                        f"{sec['rdma']['error']}")
    _say(f"DRBD (in-kernel), protocol C over TCP, node{NODES[0]} primary, "
         f"node{NODES[1]} secondary, RAM disks; fio {b.fmt_size(SIZE)} "
         "O_DIRECT|O_DSYNC")
    try:
        sec["drbd"] = drbd(c, args, warnings)
    except VMError as e:
        sec["drbd"] = {"error": f"the guests failed during the DRBD "
                       f"measurement: {e}"}
        warnings.append(f"DRBD: {sec['drbd']['error']}")
        drbd_down(c)
    sec["comparison"] = compare(sec)
    sec["wall_s"] = round(time.monotonic() - t0, 1)
    return sec


def _lat(run):
    b = (run or {}).get("bench") or {}
    return b.get("latency_us") or {}, b.get("appends_per_s")


def compare(sec):
    """Per writers/QD: rdmalog and DRBD side by side, ratios rdmalog /
    DRBD; the TCP and RDMA round trips, ratio RDMA / TCP."""
    rows = []
    d = sec.get("drbd") or {}
    for t in WRITERS:
        lat, ops = _lat((sec.get("rdmalog") or {}).get(str(t)))
        if "error" in ((sec.get("rdmalog") or {}).get(str(t)) or {}):
            lat, ops = {}, None
        dv = (d.get("runs") or {}).get(str(t)) or {}
        lv = (d.get("local") or {}).get(str(t)) or {}
        rows.append({
            "writers": t, "qd": t,
            "rdmalog_ops_s": ops, "rdmalog_p50_us": lat.get("p50"),
            "rdmalog_p99_us": lat.get("p99"),
            "drbd_iops": dv.get("iops"), "drbd_p50_us": dv.get("p50_us"),
            "drbd_p99_us": dv.get("p99_us"),
            "brd_iops": lv.get("iops"), "brd_p50_us": lv.get("p50_us"),
            "brd_p99_us": lv.get("p99_us"),
            "p50_ratio": ratio(lat.get("p50"), dv.get("p50_us")),
            "p99_ratio": ratio(lat.get("p99"), dv.get("p99_us")),
            "ops_ratio": ratio(ops, dv.get("iops"))})
    tcp, rdma = sec.get("tcp") or {}, sec.get("rdma") or {}
    return {"rows": rows,
            "rtt": {"tcp_p50_us": tcp.get("p50_us"),
                    "tcp_p99_us": tcp.get("p99_us"),
                    "rdma_rtt_us": rdma.get("rtt_us"),
                    "rdma_rtt_p99_us": rdma.get("rtt_p99_us"),
                    "rdma_over_tcp": ratio(rdma.get("rtt_us"),
                                            tcp.get("p50_us")),
                    "note": TCG_NOTE}}


# ------------------------------------------------------------- output

def print_section(results):
    sec = results.get("alternatives")
    if not sec:
        return
    cmp_ = sec.get("comparison") or compare(sec)
    d = sec.get("drbd") or {}
    print("\nWhat a user would pick instead (node 1 -> node 2, same VMs "
          "and run)")
    print(f"\n{SIZE // 1024} KiB, synchronous replication to one peer:\n"
          "  rdmalog 2 nodes durability all: rdmalog-bench, one write() "
          "returns once the backup holds the record;\n"
          "  DRBD protocol C over TCP on RAM disks (brd): fio randwrite "
          "O_DIRECT|O_DSYNC, libaio, completes once the peer's disk has "
          "it")
    table = []
    for r in cmp_["rows"]:
        table.append({
            "load": f"{r['writers']} writer{'s' if r['writers'] > 1 else ''}"
                    f" / QD{r['qd']}",
            "r_ops": num(r["rdmalog_ops_s"], 0),
            "r_p50": num(r["rdmalog_p50_us"]),
            "r_p99": num(r["rdmalog_p99_us"]), "|": "|",
            "d_ops": num(r["drbd_iops"], 0), "d_p50": num(r["drbd_p50_us"]),
            "d_p99": num(r["drbd_p99_us"]), "||": "|",
            "p50r": "-" if r["p50_ratio"] is None else f"{r['p50_ratio']:.3g}",
            "opsr": "-" if r["ops_ratio"] is None else f"{r['ops_ratio']:.3g}",
            "|||": "|",
            "l_ops": num(r["brd_iops"], 0), "l_p50": num(r["brd_p50_us"])})
    cols = [("load", "load", "<"), ("r_ops", "rdmalog ops/s", ">"),
            ("r_p50", "p50us", ">"), ("r_p99", "p99us", ">"),
            ("|", "|", "^"), ("d_ops", "DRBD IOPS", ">"),
            ("d_p50", "p50us", ">"), ("d_p99", "p99us", ">"),
            ("||", "|", "^"), ("p50r", "p50 rdmalog/DRBD", ">"),
            ("opsr", "ops/s rdmalog/DRBD", ">"), ("|||", "|", "^"),
            ("l_ops", "brd alone IOPS", ">"), ("l_p50", "p50us", ">")]
    print_grid(cols, table)
    print("ratios: p50 < 1 = rdmalog's latency lower, ops/s > 1 = rdmalog "
          "faster; 'brd alone' = the same fio on node 1's RAM disk, no "
          "replication (the local floor under DRBD)")
    src = {r.get("source") for r in (sec.get("rdmalog") or {}).values()}
    if src:
        print(f"rdmalog rows: {', '.join(sorted(s for s in src if s))}; "
              f"median of {results['meta'].get('reps', 1)} run(s) each")
    if d.get("error"):
        print(f"DRBD NOT MEASURED: {d['error']}")
    else:
        runs = d.get("runs") or {}
        for qd, v in runs.items():
            if "error" in v:
                print(f"DRBD QD{qd} NOT MEASURED: {v['error']}")
        if d.get("version"):
            one = next((v for v in runs.values() if "command" in v), {})
            print(f"DRBD: {d['version']} (the guest kernel's drbd.ko, "
                  f"drbd-utils' 8.4 helpers); {d.get('fio_version', 'fio')}"
                  f", {one.get('runtime_s', '?')} s per run after "
                  f"{one.get('ramp_s', '?')} s of ramp, median of "
                  f"{one.get('reps', '?')}; latency = fio's lat "
                  "(submission to completion)")
    if d.get("local_error"):
        print(f"brd alone not measured: {d['local_error']}")
    rtt = cmp_["rtt"]
    tcp, rdma = sec.get("tcp") or {}, sec.get("rdma") or {}
    print(f"\n{TCP_SIZE} B request/response round trip, node 1 -> node 2:")
    iters = tcp.get("iterations", "?")
    table = [{"what": f"TCP ping-pong (TCP_NODELAY, {iters} iterations)",
              "p50": num(tcp.get("p50_us")), "p99": num(tcp.get("p99_us"))},
             {"what": "ib_write_lat RTT (2 x t_typical, 2 x p99)",
              "p50": num(rdma.get("rtt_us")),
              "p99": num(rdma.get("rtt_p99_us"))}]
    print_grid([("what", "round trip", "<"), ("p50", "p50 us", ">"),
           ("p99", "p99 us", ">")], table)
    if tcp.get("error"):
        print(f"TCP NOT MEASURED: {tcp['error']}")
    if rdma.get("error"):
        print(f"ib_write_lat NOT MEASURED: {rdma['error']}")
    r = rtt.get("rdma_over_tcp")
    inv = f" (TCP = {1 / r:.3g} x RDMA)" if r else ""
    print(f"RDMA / TCP round trip (p50): {'-' if r is None else f'{r:.3g}'}"
          f"{inv}; {TCG_NOTE}"
          + (" (QEMU TCG here)" if results["meta"].get("accel") == "tcg"
             else ""))


GNUPLOT = r"""
set terminal pngcairo size 1100,560 font "sans,10"
set output '{png}'
set multiplot layout 1,2 title "{title}" noenhanced
set style line 1 lw 2 pt 7 lc rgb '#1f77b4'
set style line 2 lw 2 dt 2 pt 6 lc rgb '#1f77b4'
set style line 3 lw 2 pt 5 lc rgb '#d62728'
set style line 4 lw 2 dt 2 pt 4 lc rgb '#d62728'
set style line 5 lw 1 pt 3 lc rgb 'gray40'
set logscale x 2
set xrange [0.7:23]
set xtics ("1" 1, "16" 16)
set xlabel "rdmalog writers / fio queue depth"
set grid
set key below left maxrows 3 noenhanced
set datafile missing "-"
set logscale y
set ylabel "latency (microseconds, log scale)"
set title "4 KiB write latency"
plot '{dat}' using 1:2 with linespoints ls 1 title 'rdmalog p50', \
     '{dat}' using 1:3 with linespoints ls 2 title 'rdmalog p99', \
     '{dat}' using 1:5 with linespoints ls 3 title 'DRBD p50', \
     '{dat}' using 1:6 with linespoints ls 4 title 'DRBD p99', \
     '{dat}' using 1:9 with linespoints ls 5 title 'brd alone p50'
set ylabel "writes per second (log scale)"
set title "4 KiB writes per second"
plot '{dat}' using 1:4 with linespoints ls 1 title 'rdmalog (2 nodes, all)', \
     '{dat}' using 1:7 with linespoints ls 3 title 'DRBD (protocol C, TCP)', \
     '{dat}' using 1:8 with linespoints ls 5 title 'brd alone'
unset multiplot
"""


def plot(results, out):
    """OUT/drbd.png: rdmalog vs DRBD (latency, ops/s) at 1 and 16."""
    sec = results.get("alternatives")
    if not sec or not shutil.which("gnuplot"):
        return []
    rows = (sec.get("comparison") or compare(sec))["rows"]

    def v(x):
        return "-" if x is None else f"{x}"
    dat = os.path.join(out, "drbd.dat")
    with open(dat, "w") as f:
        f.write("# writers/qd rdmalog_p50 rdmalog_p99 rdmalog_ops drbd_p50 "
                "drbd_p99 drbd_iops brd_iops brd_p50\n")
        for r in rows:
            f.write(" ".join(v(r[k]) for k in (
                "writers", "rdmalog_p50_us", "rdmalog_p99_us",
                "rdmalog_ops_s", "drbd_p50_us", "drbd_p99_us", "drbd_iops",
                "brd_iops", "brd_p50_us")) + "\n")
    m = results.get("meta") or {}
    png = os.path.join(out, "drbd.png")
    title = (f"rdmalog (2 nodes, durability all) vs DRBD 8.4 (protocol C, "
             f"TCP), 4 KiB, RAM disks ({str(m.get('accel', '?')).upper()}, "
             f"soft-RoCE, {str(m.get('date', ''))[:10]})"
             + ("\\nQEMU TCG: these numbers say nothing about hardware"
                if m.get("accel") == "tcg" else ""))
    gp = os.path.join(out, "drbd.gp")
    with open(gp, "w") as f:
        f.write(GNUPLOT.format(png=png, dat=dat, title=title))
    r = subprocess.run(["gnuplot", gp], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=120)
    if r.returncode:
        print(f"bench: gnuplot (drbd.png) failed:\n"
              f"{r.stdout.decode(errors='replace')}", file=sys.stderr)
        return []
    return [png]
