# SPDX-License-Identifier: GPL-2.0
"""The history checker (selftests/history.py), short: writers on all three
nodes (selftests/hist_writer.c; forwarded on the backups) while a seeded
fault schedule cuts, flaps, kills, reloads, blackholes, pauses and
degrades (netem) the backups, cuts both at once and fills and trims the
ring, each fault checked to have taken effect; afterwards every acknowledged record must be on every node
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

from testlib import add_result, test
import history

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


@test(timeout=1500)
def history_short(c):
    duration = history.parse_duration(
        os.environ.get("RDMALOG_HISTORY_DURATION", "20"))
    h = history.History(c, duration=duration, log=say)
    report = h.run()
    history.check(report)
    assert all(report["faults"][k] for k in h.kinds), report
    assert all(report["effective"][k] for k in h.required), report
