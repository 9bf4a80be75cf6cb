#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""rdmalog test runner (used by "make check"; python3 stdlib only).

    python3 selftests/run.py [-k PATTERN]... [-x SUITE]... [-v] [--keep] [--list]
                             [--workdir DIR] [--tap FILE] [--deadline S]
                             [--strict-skips] [SUITE...]

Discovers suites selftests/suites/*.py (see selftests/vm/testlib.py for
how to write one), boots each suite's VMs once (selftests/vm/cluster.py)
or takes over those of the suite before it when both have the same shape
(NODES, APPEND, IGNORE) and that one passed (--no-reuse: never), runs
its tests in file order and prints TAP version 13 on stdout, the
plan "1..N" at the end (subtests of kselftest binaries are counted as
they are found), then a plain summary line "N passed, N failed" (plus
", N skipped" when any).  Exit status 1 if anything failed.

-k PATTERN selects tests whose "suite.test" name contains PATTERN (or
matches it as a glob when it has *?[); repeat -k for more.  Positional
SUITE names restrict the suites.  Kernel problems on any VM console fail
the test during which they appeared (checked after each test; problems
at boot/setup or at teardown get their own "suite.setup"/"suite.teardown"
failure).  After a test timeout or a lost VM the suite's VMs are booted
again for the next test.

Every result is followed by a "# time NAME S" line; the run ends with
a table of the suites' times.  Whatever a test prints goes into the
stream as TAP diagnostics ("# ..."), so nested TAP from the programs a
test runs cannot corrupt it.

--deadline S (default $RDMALOG_DEADLINE or 4200 s: below CI's 90 minutes
with the build before it) bounds the whole run: the test running when
it passes fails with "run deadline", the tests after it fail as "not
run", and the summary line still ends the output.

Every suite ends with its epilogue: the log down and rmmod on every
node, which must succeed (the module's exit warns about objects left).
VMs handed on are then reset (cables plugged, faults and programs gone,
rxe0 ACTIVE, no module loaded).  Suites run vm_smoke first, then
grouped by shape, alphabetically within one.

--strict-skips (default when $CI is set, and in make check) counts a
skipped test as failed unless its name matches one of the comma- or
space-separated patterns of $RDMALOG_ALLOW_SKIP (e.g. "iwarp").

The work directory (consoles: SUITE[.K]/nodeN.console) is deleted after a
clean run, kept after a failure or with --keep, and its path printed.
"""

import argparse
import fnmatch
import importlib.util
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
import traceback

sys.dont_write_bytecode = True     # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "vm"))

import cluster as vm      # noqa: E402
import testlib            # noqa: E402

SUITES_DIR = os.path.join(HERE, "suites")
DEFAULT_TIMEOUT = 300
# RDMALOG_TIMEOUT_SCALE: every suite's and test's own limit times this
# (make check-debug: the debug kernel runs several times slower in TCG)
TIMEOUT_SCALE = float(os.environ.get("RDMALOG_TIMEOUT_SCALE", "1") or 1)
DEFAULT_DEADLINE = 4200
# run on every node after a suite: the module must unload cleanly
UNLOAD = r"""
grep -q '^rdmalog ' /proc/modules || exit 0
rdmalogctl node down >/dev/null 2>&1
i=0
while grep -q '^rdmalog ' /proc/modules; do
    for p in /proc/[0-9]*; do
        ls -l $p/fd 2>/dev/null | grep -q /dev/rdmalog &&
            kill -KILL ${p#/proc/} 2>/dev/null
    done
    out=$(rmmod rdmalog 2>&1) && break
    i=$((i + 1))
    [ $i -ge 50 ] && { echo "UNLOAD-FAILED: $out"; lsmod; exit 1; }
    sleep 0.2
done
# a kernel with kmemleak (make check-debug): what the module left
# unreferenced is reported now, on the console ("suspected memory
# leaks", a problem), with the first of its backtraces
if [ -w /sys/kernel/debug/kmemleak ]; then
    echo scan > /sys/kernel/debug/kmemleak
    head -n 40 /sys/kernel/debug/kmemleak | while IFS= read -r l; do
        echo "kmemleak report: $l" > /dev/kmsg
    done
fi
exit 0
"""
# the harness's own self-test first, then the rest alphabetically
FIRST_SUITES = ("vm_smoke",)

# Between two suites of the same shape (nodes, kernel command line,
# ignored lines) the VMs are kept: after the epilogue (UNLOAD above) only
# this runs on every node, so that the next suite finds them as booted:
# no fault left in place (netem, blackhole), no test program running, no
# configuration file, rxe0 there and ACTIVE. Cables are plugged back by
# the host (QMP) before it.
RESET = r"""
tc qdisc del dev eth0 root 2>/dev/null
tc qdisc del dev eth0 ingress 2>/dev/null
pkill -KILL -f '^/usr/lib/rdmalog/' 2>/dev/null
rm -f /etc/rdmalog.conf
ip -6 addr flush dev eth0 scope global 2>/dev/null
rdma link show rxe0/1 >/dev/null 2>&1 ||
    rdma link add rxe0 type rxe netdev eth0 || exit 1
i=0
until rdma link show rxe0/1 | grep -q 'state ACTIVE'; do
    i=$((i + 1)); [ $i -gt 300 ] && { rdma link show; exit 1; }
    sleep 0.1
done
grep -q '^rdmalog ' /proc/modules && exit 1
echo RESET-OK
"""


class PrefixWriter:
    """sys.stdout while tests run: every line that does not already start
    with "#" becomes a TAP diagnostic, so raw output (a rogue program's
    own "TAP version 13" or "ok 1") never reaches the stream as TAP."""

    def __init__(self, out):
        self.out = out
        self.buf = ""
        self.lock = threading.Lock()

    def write(self, text):
        with self.lock:
            self.buf += text
            *lines, self.buf = self.buf.split("\n")
            for ln in lines:
                self.out.write((ln if ln.startswith("#") else
                                f"# {ln}" if ln else "#") + "\n")
        return len(text)

    def flush(self):
        with self.lock:
            if self.buf:
                ln, self.buf = self.buf, ""
                self.out.write((ln if ln.startswith("#") else
                                f"# {ln}") + "\n")
            self.out.flush()


class Tap:
    """TAP writer and counters."""

    def __init__(self, tap_file=None, strict_skips=False, allow_skip=()):
        self.n = 0
        self.passed = self.failed = self.skipped = 0
        self.file = open(tap_file, "w") if tap_file else None
        self.out = sys.stdout
        self.strict_skips = strict_skips
        self.allow_skip = list(allow_skip)
        self.lock = threading.Lock()

    def skip_allowed(self, name):
        return not self.strict_skips or \
            bool(self.allow_skip and selected(name, self.allow_skip))

    def line(self, text):
        if isinstance(sys.stdout, PrefixWriter):
            sys.stdout.flush()
        self.out.write(text + "\n")
        self.out.flush()
        if self.file:
            self.file.write(text + "\n")
            self.file.flush()

    def diag(self, text):
        for ln in str(text).rstrip("\n").split("\n"):
            self.line(f"# {ln}" if ln else "#")

    def result(self, name, status, diag=(), reason=""):
        self.n += 1
        if status == "pass":
            self.passed += 1
            self.line(f"ok {self.n} - {name}")
        elif status == "skip" and not self.skip_allowed(name):
            self.failed += 1
            self.line(f"not ok {self.n} - {name}")
            self.diag(f"skipped ({reason or 'no reason given'}), and skips "
                      "fail this run (--strict-skips; allow with "
                      "RDMALOG_ALLOW_SKIP)")
        elif status == "skip":
            self.skipped += 1
            why = reason if reason.upper().startswith("SKIP") \
                else f"SKIP {reason}".rstrip()
            self.line(f"ok {self.n} - {name} # {why}")
        else:
            self.failed += 1
            self.line(f"not ok {self.n} - {name}")
        if status == "fail" and diag:
            self.diag("\n".join(diag))

    def finish(self):
        self.line(f"1..{self.n}")
        summary = f"{self.passed} passed, {self.failed} failed"
        if self.skipped:
            summary += f", {self.skipped} skipped"
        self.line(summary)
        if self.file:
            self.file.close()


# ------------------------------------------------------------- discovery

def load_suite(path):
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(f"suites.{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    tests = [f for f in vars(mod).values()
             if callable(f) and hasattr(f, "_rdmalog_test")
             and getattr(f, "__module__", None) == mod.__name__]
    tests.sort(key=lambda f: f.__code__.co_firstlineno)
    return name, mod, tests


def selected(full, patterns):
    if not patterns:
        return True
    for p in patterns:
        if any(ch in p for ch in "*?[") and fnmatch.fnmatch(full, p):
            return True
        if p in full:
            return True
    return False


# ------------------------------------------------------------- execution

def shape_of(mod):
    """Suites of one shape can run on the same VMs."""
    return (int(getattr(mod, "NODES", 1)), getattr(mod, "APPEND", ""),
            tuple(getattr(mod, "IGNORE", ())))


def _exc_diag(exc):
    """Readable failure text: the traceback without the runner's frames
    (and, for harness errors, without the harness internals)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if os.path.abspath(f.filename) != os.path.abspath(__file__)]
    if isinstance(exc, (vm.VMError, vm.CommandFailed)):
        harness = os.path.join(HERE, "vm") + os.sep
        frames = [f for f in frames if not f.filename.startswith(harness)]
    lines = "".join(traceback.format_list(frames) +
                    traceback.format_exception_only(exc))
    return lines.rstrip().split("\n")


def call_with_timeout(fn, args, timeout):
    """Run fn(*args) in a thread.

    Returns (exception or None, False), or (the still running thread,
    True) on timeout.
    """
    box = {}

    def body():
        try:
            fn(*args)
        except BaseException as e:     # noqa: B902 (reported, not lost)
            box["exc"] = e
    t = threading.Thread(target=body, daemon=True, name="test")
    t.start()
    t.join(timeout)
    if t.is_alive():
        return t, True
    return box.get("exc"), False


class SuiteRun:
    """Runs the selected tests of one suite on its own cluster."""

    def __init__(self, args, tap, name, mod, tests, workdir, deadline,
                 spare=None):
        self.args, self.tap, self.name, self.mod = args, tap, name, mod
        self.tests, self.workdir = tests, workdir
        self.deadline = deadline          # time.monotonic() of the end
        # a cluster of this shape the previous suite left (or None); its
        # VMs are reused for the first cluster of this suite
        self.spare = spare
        self.nodes = int(getattr(mod, "NODES", 1))
        self.append = getattr(mod, "APPEND", "")
        self.ignore = list(getattr(mod, "IGNORE", ()))
        self.timeout = float(getattr(mod, "TIMEOUT", DEFAULT_TIMEOUT)) * \
            TIMEOUT_SCALE
        self.cluster = None
        self.instances = 0
        self.keep = False       # hand the cluster on to the next suite

    def shape(self):
        return shape_of(self.mod)

    def log(self, msg):
        if self.args.verbose:
            self.tap.diag(f"[{time.strftime('%H:%M:%S')}] {msg}")

    def reuse(self, c):
        """Make the previous suite's VMs look freshly booted; False when
        that did not work (then they are closed)."""
        try:
            if not all(nd.alive for nd in c.nodes):
                raise vm.VMError("a node is down")
            for nd in c.nodes:
                nd.link(True)
            for nd in c.nodes:
                r = nd.run(RESET, timeout=120)
                if "RESET-OK" not in r.out:
                    raise vm.VMError(f"{nd.name}: reset failed: {r.out}")
            if c.kernel_log_problems(new_only=True):
                raise vm.VMError("kernel problems")
        except (vm.VMError, OSError) as e:
            self.log(f"cannot reuse the VMs ({e}); booting new ones")
            c.close()
            return False
        return True

    def new_cluster(self):
        """(Re)boot the suite's VMs (or take over the previous suite's, of
        the same shape); runs setup().  Raises on failure."""
        self.close_cluster()
        self.instances += 1
        spare, self.spare = self.spare, None
        t0 = time.monotonic()
        if spare is not None and self.reuse(spare):
            self.log(f"{self.name} reuses the VMs in {spare.workdir}")
            self.cluster = spare
        else:
            wd = os.path.join(self.workdir, self.name if self.instances == 1
                              else f"{self.name}.{self.instances}")
            self.log(f"booting {self.nodes} node(s) for {self.name} in {wd}")
            self.cluster = vm.Cluster(self.nodes, workdir=wd,
                                      append=self.append,
                                      initrd=self.args.initrd,
                                      ignore=self.ignore)
        self.log(f"ready in {time.monotonic() - t0:.1f}s")
        setup = getattr(self.mod, "setup", None)
        if setup:
            limit = min(self.timeout, self.left())
            exc, timed_out = call_with_timeout(setup, (self.cluster,), limit)
            if timed_out:
                raise vm.VMError(f"setup() timed out after {limit:.0f}s"
                                 + (" (run deadline)" if self.past() else ""))
            if exc:
                raise exc

    def left(self):
        return max(0.0, self.deadline - time.monotonic())

    def past(self):
        return self.left() <= 0

    def not_run(self, names):
        for f in names:
            self.tap.result(f, "fail", ["not run: the run deadline "
                                        f"({self.args.deadline:.0f}s) passed"])

    def close_cluster(self):
        if self.cluster:
            self.cluster.close()
            self.cluster = None

    def problems_diag(self, problems, console=True):
        lines = ["kernel problems on the console:"]
        lines += [f"  {p}" for p in problems[:20]]
        if len(problems) > 20:
            lines.append(f"  ... {len(problems) - 20} more")
        # context: console tail of the first affected node
        nd = self.node_of(problems[0]) if console else None
        if nd:
            lines.append(f"--- {nd.name} console tail ---")
            lines += vm._tail(nd.console_text(), 40).split("\n")
        lines.append(f"consoles: {self.cluster.workdir}/nodeN.console")
        return lines

    def node_of(self, problem):
        """The node a problem line ("nodeN boot K: LINE") is of, or None."""
        name = problem.split()[0]
        for nd in self.cluster.nodes if self.cluster else []:
            if nd.name == name:
                return nd
        return None

    def artifact_context(self, artifact, before=10, after=40):
        """The console lines around an artifact's line (its trace: which
        path warned), from its node's console, all boots."""
        nd = self.node_of(artifact)
        if nd is None:
            return []
        text = artifact.split(": ", 1)[-1].strip()
        try:
            lines = nd.console_text(all_boots=True).splitlines()
        except Exception:           # noqa: BLE001: context only
            return []
        for i, ln in enumerate(lines):
            if ln.strip() == text:
                return lines[max(0, i - before):i + after]
        return []

    def ensure_healthy(self):
        """Boot nodes a test left down; reboot everything if that fails."""
        c = self.cluster
        if c is None:
            self.new_cluster()
            return
        down = [nd for nd in c.nodes if not nd.alive]
        if not down:
            return
        self.log(f"booting {', '.join(nd.name for nd in down)} again")
        try:
            c.boot_all()
        except vm.VMError as e:
            self.log(f"reboot failed ({e}); new cluster")
            self.new_cluster()

    def run(self):
        full = [f"{self.name}.{t.__name__}" for t in self.tests]
        if self.past():
            self.not_run(full)
            return
        try:
            self.new_cluster()
            probs = self.cluster.kernel_log_problems(new_only=True)
            if probs:
                self.tap.result(f"{self.name}.setup", "fail",
                                self.problems_diag(probs))
        except (Exception, KeyboardInterrupt) as e:
            if isinstance(e, KeyboardInterrupt):
                self.close_cluster()
                raise
            diag = [f"cannot boot/setup {self.nodes} node(s):"] + \
                _exc_diag(e)
            for f in full:
                self.tap.result(f, "fail", diag)
                diag = ["(see the first failure of this suite)"]
            self.close_cluster()
            return
        f0 = self.tap.failed
        try:
            for i, (fn, name) in enumerate(zip(self.tests, full)):
                if self.past():
                    self.not_run(full[i:])
                    break
                self.run_test(fn, name)
            self.run_teardown()
            # only VMs of a suite that passed are handed on
            self.keep = self.tap.failed == f0 and self.cluster is not None \
                and all(nd.alive for nd in self.cluster.nodes)
        finally:
            if not self.keep:
                self.close_cluster()

    def handover(self):
        """The cluster for the next suite of the same shape, or None."""
        c, self.cluster = (self.cluster, None) if self.keep else (None, None)
        return c

    def run_test(self, fn, name):
        """One test, reported; run once more on fresh VMs when all that
        failed it was an emulator artifact (vm.emulator_artifact())."""
        res = self.attempt(fn, name)
        if res is None:
            return
        status, diag, reason, subs, took, probs = res
        artifact = status == "fail" and vm.emulator_artifact(probs)
        if artifact and not self.past():
            self.tap.diag(f"{name}: an emulator artifact, not a product "
                          f"failure, after {took:.1f}s: {artifact}")
            self.tap.diag("  (see EMULATOR_ARTIFACTS in selftests/vm/"
                          "cluster.py); this attempt's result is discarded "
                          "and the test runs once more, on its VMs reset "
                          "(or fresh ones where one died):")
            for line in diag[:12]:
                self.tap.diag(f"  | {line}")
            for line in self.artifact_context(artifact):
                self.tap.diag(f"  : {line}")
            c = self.cluster
            if c is not None and all(nd.alive for nd in c.nodes):
                # reset and set up again by new_cluster(), as between suites
                self.cluster, self.spare = None, c
            else:
                self.close_cluster()
            res = self.attempt(fn, name)
            if res is None:
                return
            status, diag, reason, subs, took, probs = res
        for s in subs:
            self.tap.result(f"{name}.{s.name}", s.status, s.diag, s.reason)
        # with subtests, the test's own line appears only if it failed or
        # was skipped as a whole
        if not subs or status != "pass":
            self.tap.result(name, status, diag, reason)
        self.tap.line(f"# time {name} {took:.1f}s")

    def attempt(self, fn, name):
        """Runs fn once; (status, diag, reason, subtests, seconds, kernel
        problems), or None when the nodes could not be brought up (then
        reported here)."""
        t = fn._rdmalog_test["timeout"]
        own = t * TIMEOUT_SCALE if t else self.timeout
        timeout = min(own, self.left())
        try:
            self.ensure_healthy()
        except Exception as e:      # boot failure, or setup() on a reboot
            self.tap.result(name, "fail",
                            ["cannot bring the nodes back up:"] + _exc_diag(e))
            self.close_cluster()
            return None
        c = self.cluster
        subs = []
        testlib._set_collector(subs)
        self.log(f"running {name} (timeout {timeout:.0f}s)")
        t0 = time.monotonic()
        try:
            exc, timed_out = call_with_timeout(fn, (c,), timeout)
        finally:
            testlib._set_collector(None)
        self.log(f"{name} finished in {time.monotonic() - t0:.1f}s")
        status, diag, reason = "pass", [], ""
        took = time.monotonic() - t0
        if timed_out:
            status = "fail"
            why = "the run deadline passed" if timeout < own else \
                "test timed out"
            diag = [f"{why} after {timeout:.0f}s in {name}; "
                    "rebooting the VMs"]
            for nd in c.nodes:
                diag.append(f"--- {nd.name} console tail ---")
                diag += vm._tail(nd.console_text(), 15).split("\n")
        elif isinstance(exc, testlib.Skip):
            status, reason = "skip", str(exc)
        elif exc is not None:
            status, diag = "fail", _exc_diag(exc)
        probs = c.kernel_log_problems(new_only=True)
        if probs:
            status = "fail"
            # a VMError (e.g. NodeDied) already carries the console tail
            diag += self.problems_diag(
                probs, console=not isinstance(exc, vm.VMError))
        if timed_out:
            self.close_cluster()    # unblocks the stuck test thread
            exc.join(5)             # (exc is the test's thread here)
        return status, diag, reason, subs, took, probs

    def unload_all(self):
        """The suite's epilogue: on every node that is up, the log down,
        every process holding /dev/rdmalog killed, and rmmod, which must
        succeed (a reference left behind fails it; the module's exit
        warns about objects left). Returns failure lines."""
        diag = []
        for nd in self.cluster.nodes:
            if not nd.alive:
                continue
            try:
                r = nd.run(UNLOAD, timeout=120)
            except vm.VMError as e:
                diag.append(f"{nd.name}: unloading the module: {e}")
                continue
            if r.rc != 0 or "UNLOAD-FAILED" in r.out:
                diag += [f"{nd.name}: rmmod rdmalog at the end of the suite "
                         f"failed:"] + r.out.strip().split("\n")[-10:]
        return diag

    def run_teardown(self):
        td = getattr(self.mod, "teardown", None)
        diag = []
        if td and self.cluster:
            exc, timed_out = call_with_timeout(
                td, (self.cluster,), max(30.0, min(self.timeout, self.left())))
            if timed_out:
                diag.append(f"teardown() timed out after {self.timeout}s")
            elif exc:
                diag += _exc_diag(exc)
        if self.cluster and not diag:
            diag += self.unload_all()
        if self.cluster:
            probs = self.cluster.kernel_log_problems(new_only=True)
            if probs:
                diag += self.problems_diag(probs)
        if diag:
            self.tap.result(f"{self.name}.teardown", "fail", diag)


def tree_cpu():
    """CPU seconds (user and system) spent so far by this process, its
    reaped children and every live process under it (/proc)."""
    t = os.times()
    total = t.user + t.system + t.children_user + t.children_system
    hz = os.sysconf("SC_CLK_TCK")
    kids, ticks = {}, {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                rest = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        # after the name: state ppid ... utime stime cutime cstime
        kids.setdefault(int(rest[1]), []).append(int(pid))
        ticks[int(pid)] = sum(int(x) for x in rest[11:15])
    todo, live = list(kids.get(os.getpid(), [])), 0
    while todo:
        pid = todo.pop()
        live += ticks.get(pid, 0)
        todo.extend(kids.get(pid, []))
    return total + live / hz


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("suites", nargs="*", help="suite names (default: all)")
    ap.add_argument("-k", dest="patterns", action="append", default=[],
                    help="run tests whose suite.test name contains PATTERN")
    ap.add_argument("-x", "--exclude", action="append", default=[],
                    metavar="SUITE", help="leave this suite out")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="progress and every guest command on stderr")
    ap.add_argument("--keep", action="store_true", help="keep the workdir")
    ap.add_argument("--workdir", help="work directory (default: temporary)")
    ap.add_argument("--tap", help="also write the TAP stream to this file")
    ap.add_argument("--initrd", help="use this initramfs (default: build "
                    "build/vm/initramfs-KVER.cpio if stale)")
    ap.add_argument("--deadline", type=float,
                    default=float(os.environ.get("RDMALOG_DEADLINE",
                                                 DEFAULT_DEADLINE)),
                    help="seconds for the whole run (default %(default)s)")
    ap.add_argument("--strict-skips", action="store_true",
                    default=bool(os.environ.get("CI")),
                    help="a skip fails the run unless $RDMALOG_ALLOW_SKIP "
                    "names it (default when $CI is set)")
    ap.add_argument("--no-reuse", action="store_true",
                    help="boot new VMs for every suite (by default suites "
                    "of the same shape share them)")
    ap.add_argument("--list", action="store_true",
                    help="list the selected tests and exit")
    ap.add_argument("--suite-dir", default=SUITES_DIR,
                    help="where the suites are (default selftests/suites)")
    args = ap.parse_args(argv)

    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="# %(asctime)s %(name)s: %(message)s", stream=sys.stderr)

    plan, broken = [], []
    for path in sorted(os.listdir(args.suite_dir)):
        if not path.endswith(".py") or path.startswith("_"):
            continue
        name = path[:-3]
        if args.suites and name not in args.suites or name in args.exclude:
            continue
        try:
            name, mod, tests = load_suite(os.path.join(args.suite_dir, path))
        except Exception as e:              # a suite that does not import
            if selected(f"{name}.load", args.patterns) or \
                    any(p in name for p in args.patterns):
                broken.append((f"{name}.load", _exc_diag(e)))
            continue
        tests = [t for t in tests
                 if selected(f"{name}.{t.__name__}", args.patterns)]
        if tests:
            plan.append((name, mod, tests))
    # vm_smoke first; then suites of one shape next to each other (they
    # share their VMs), alphabetically within a shape
    plan.sort(key=lambda e: (e[0] not in FIRST_SUITES, shape_of(e[1]),
                             e[0]))

    if args.list:
        for name, _mod, tests in plan:
            for t in tests:
                print(f"{name}.{t.__name__}")
        return 0

    allow = os.environ.get("RDMALOG_ALLOW_SKIP", "").replace(",", " ").split()
    tap = Tap(args.tap, args.strict_skips, allow)
    tap.line("TAP version 13")
    for name, diag in broken:
        tap.result(name, "fail", ["cannot import the suite:"] + diag)
    if not plan and not broken:
        tap.diag("no tests selected")
        tap.finish()
        return 1

    workdir = args.workdir or tempfile.mkdtemp(prefix="rdmalog-check-",
                                               dir="/tmp")
    os.makedirs(workdir, exist_ok=True)
    if not args.initrd:
        try:
            args.initrd = vm.build_initrd(vm.default_kver())
        except (vm.VMError, OSError) as e:
            tap.diag(f"cannot build the initramfs: {e}")
            for name, _mod, tests in plan:
                for t in tests:
                    tap.result(f"{name}.{t.__name__}", "fail",
                               ["initramfs build failed"])
            tap.finish()
            return 1

    t0, c0 = time.monotonic(), tree_cpu()
    deadline = t0 + args.deadline
    interrupted = False
    times = []
    sys.stdout = PrefixWriter(tap.out)
    spare = None
    try:
        for i, (name, mod, tests) in enumerate(plan):
            s0, n0, f0 = time.monotonic(), tap.n, tap.failed
            sc0 = tree_cpu()
            sr = SuiteRun(args, tap, name, mod, tests, workdir, deadline,
                          spare)
            spare = None
            try:
                sr.run()
                nxt = plan[i + 1][1] if i + 1 < len(plan) else None
                if nxt is not None and shape_of(nxt) == sr.shape() and \
                        not args.no_reuse:
                    spare = sr.handover()
                else:
                    sr.keep = False
                    sr.close_cluster()
            finally:
                if sr.spare is not None:    # not taken (nothing ran)
                    spare = spare or sr.spare
                times.append((name, time.monotonic() - s0,
                              tree_cpu() - sc0, tap.n - n0,
                              tap.failed - f0))
    except KeyboardInterrupt:
        interrupted = True
        tap.diag("interrupted")
    finally:
        if spare is not None:
            spare.close()
        sys.stdout.flush()
        sys.stdout = tap.out
    # cpu: what the runner and every process under it (the guests)
    # spent; under TCG the guests are CPU-bound, so this, not the time,
    # is what a suite costs a machine that runs two lanes at once
    tap.diag("suite          time     cpu  results  failed")
    for name, secs, cpu, n, nf in times:
        tap.diag(f"{name:<12} {secs:6.0f}s {cpu:6.0f}s  {n:7d}  {nf:6d}")
    tap.diag(f"total time {time.monotonic() - t0:.0f}s, cpu "
             f"{tree_cpu() - c0:.0f}s (deadline {args.deadline:.0f}s)")
    failed = tap.failed or interrupted
    if failed or args.keep or args.workdir:
        tap.diag(f"logs kept in {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    tap.finish()
    return 1 if failed else 0


if __name__ == "__main__":
    # SIGTERM unwinds like Ctrl-C so that every cluster is torn down
    import signal

    def _term(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, _term)
    signal.signal(signal.SIGHUP, _term)
    sys.exit(main())
