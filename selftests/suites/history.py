# SPDX-License-Identifier: GPL-2.0
"""The history checker (selftests/history.py), short: writers on all three
nodes (selftests/hist_writer.c; forwarded on the backups) while a seeded
fault schedule cuts, flaps, kills, reloads, blackholes, pauses and
degrades (netem) the backups, cuts both at once and fills and trims the
ring, each fault checked to have taken effect (and, with
a second run that kills, reloads, pauses and blackholes the primary:
leader changes); afterwards every acknowledged record must be on every node
at its LSN with its bytes, the nodes must agree, the log must be gapless
and hold nothing a writer did not send.

The seed is printed in the TAP output ("seed N"); RDMALOG_HISTORY_SEED=N
replays the same schedule, RDMALOG_HISTORY_DURATION=SECONDS (default 20:
the run goes on anyway until every kind of fault took effect) changes the
length of the load and faults, RDMALOG_HISTORY_CATCHUP=1
demands that backups rejoining behind the primary's trims catch up (see
selftests/history.py).  "make soak DURATION=..." runs the same checker
for longer.
"""

import os

from testlib import add_result, test, wait_for
import history
import rlnode

# RDMALOG_HISTORY_NODES=5: the short run on five VMs
NODES = int(os.environ.get("RDMALOG_HISTORY_NODES", "3"))
TIMEOUT = 1500


def setup(c):
    for nd in c:
        nd.run("modprobe rdmalog", timeout=60, check=True)


def say(msg):
    print(f"# {msg}", flush=True)


@test(timeout=60)
def checks_detect_damage(c):
    """The checks on made-up histories and logs: a clean one passes, a
    lost, altered, alien, duplicated, failed-but-present, diverging or
    missing record is reported."""
    def report(name, ok, detail):
        add_result(name.replace(" ", "_"), "pass" if ok else "fail",
                   [detail])
    assert history.selftest(report) == 0


@test(timeout=300)
def writer_history_survives_signals(c):
    """hist_writer -H: a SIGTERM that lands while the writer waits for the
    history port's lock (another writer holds it), and a second SIGTERM
    while it ends, lose no line of its history: the port holds exactly
    what it printed, "E" last.  The writer's handler has no SA_RESTART, so
    the flock, open and write of the port can each end in EINTR (CI lost
    an "E" line that way)."""
    nd = c[1]
    rlnode.apply(nd, rlnode.cluster_file(durability="async", nodes=(1,),
                                         cluster=47))
    rlnode.wait(nd, "up", timeout=60)
    w = history.Writer(nd, 901, 7, 300)
    wait_for(lambda: len(w.events()["acks"]) >= 3, timeout=60,
                    what="writer 901's first appends on the port")
    # hold the port's lock, then signal the writer twice while it waits
    holder = nd.spawn(f"flock {history.PORT_LOCK} sleep 4", timeout=60)
    nd.run(f"sleep 1; pkill -TERM -f 'hist_write[r] -w 901 '; sleep 0.5; "
           f"pkill -TERM -f 'hist_write[r] -w 901 '", timeout=30)
    holder.wait(30)
    w.job.wait(60)
    # every line also went to its -o file, before the port
    printed = [ln for ln, _ in history.text_lines(
        nd.run("cat /tmp/hist.901", timeout=60, check=True).out)]
    port = [ln for ln, _ in history.text_lines(w.history_text())]
    assert "history port" not in w.job.output(), w.job.output()[-400:]
    assert port == printed, (f"port {len(port)} lines, file "
                             f"{len(printed)}; port ends {port[-3:]}, "
                             f"file ends {printed[-3:]}")
    assert port[-1].startswith("E "), port[-3:]
    nd.run("rdmalogctl node down", timeout=60, check=True)


@test(timeout=1500)
def history_short(c):
    duration = history.parse_duration(
        os.environ.get("RDMALOG_HISTORY_DURATION", "20"))
    h = history.History(c, duration=duration, log=say)
    report = h.run()
    history.check(report)
    assert all(report["faults"][k] for k in h.kinds), report
    assert all(report["effective"][k] for k in h.required), report


@test(timeout=1500)
def history_primary_faults(c):
    """The checker with the primary faulted (failover auto): its VM
    killed, its module reloaded, its VM paused and its frames dropped for
    twice the peer timeout while its writers keep writing (the stale
    leader), a switchover under load and a rolling restart, with cuts and
    trims on the backups between. Each fault must
    end in another node leading a later epoch and every other node
    replicating from it; then the same checks, with ETIMEDOUT, ENOTCONN
    and ENETDOWN unknown outcomes on every node, the epoch-start records
    accounted for, and at most one primary per epoch in the nodes'
    events. (A new primary whose ring is full and that adopted nothing
    uncommitted writes no epoch-start record: protocol.rst.)"""
    h = history.History(c, duration=0, log=say, primary_faults=True,
                        kinds=list(history.PRIMARY_KINDS) + ["cut", "trim"])
    report = h.run()
    history.check(report)
    assert all(report["faults"][k] for k in h.kinds), report
    assert report["leader_changes"] >= len(
        [k for k in h.kinds if k in history.PRIMARY_KINDS]), report
    # No count of epoch-start records: the writers fill the ring and only
    # the trim fault makes room, so a new primary often finds it full and
    # leads without one (a CI run had 4 leader changes and none). The
    # checker places every one there is, and prints how many.
