# SPDX-License-Identifier: GPL-2.0
"""Test-suite API for selftests/run.py (python3 stdlib only).

A suite is a module selftests/suites/NAME.py::

    from testlib import test, skip, ksft

    NODES = 2              # VMs booted once for the whole suite (1..5)
    APPEND = ""            # optional extra kernel command line
    TIMEOUT = 300          # optional default per-test timeout (s)
    IGNORE = []            # optional regexes of console lines that are
                           # not kernel problems (use sparingly)

    def setup(c): ...      # optional, once after boot
    def teardown(c): ...   # optional, once before shutdown

    @test                  # or @test(timeout=600)
    def ping(c):           # c is the cluster.Cluster; c[1] is node1
        c[1].run("ping -c 1 node2", check=True)
        assert "ACTIVE" in c[2].run("rdma link").out

    @test
    def kselftests(c):     # every TAP subtest becomes its own result
        ksft(c[1], "rdmalog_basic_test", timeout=300)

Tests run in file order.  A test passes when it returns, fails on any
exception (assert, CommandFailed, VMError...), or when a kernel problem
(Oops, WARNING, ...) shows up on any console while it ran; skip() or
raise Skip marks it skipped.  Nodes a test killed and did not boot again
are booted before the next test.
"""

import os
import re
import shlex
import time

from cluster import VMError  # noqa: F401  (re-exported for suites)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
GUEST_SELFTESTS = "/usr/lib/rdmalog/selftests"


class Skip(Exception):
    """Raise (or call skip()) to mark the running test as skipped."""


def skip(reason):
    raise Skip(reason)


def test(fn=None, *, timeout=None):
    """Mark a suite function as a test; optional per-test timeout (s)."""
    def mark(f):
        f._rdmalog_test = {"timeout": timeout}
        return f
    return mark(fn) if fn is not None else mark


class SubResult:
    """One result inside a test (a kselftest TAP case)."""

    def __init__(self, name, status, diag=(), reason=""):
        self.name = name
        self.status = status      # "pass" | "fail" | "skip"
        self.diag = list(diag)
        self.reason = reason

    def __repr__(self):
        return f"SubResult({self.name!r}, {self.status!r})"


# The runner runs one test at a time and points this at a list that
# collects the SubResults of the running test.
_current_results = None


def _set_collector(lst):
    global _current_results
    _current_results = lst


def add_result(name, status, diag=(), reason=""):
    """Report one extra result from inside a test (shown as its own TAP
    line "suite.test.NAME"); status is "pass", "fail" or "skip"."""
    r = SubResult(name, status, diag, reason)
    if _current_results is not None:
        _current_results.append(r)
    return r


_TAP_RE = re.compile(r"^(not ok|ok)\b\s*(\d+)?\s*(?:-\s*)?([^#]*?)\s*"
                     r"(?:#\s*(.*))?$")


def parse_tap(text, prefix=""):
    """Parse top-level TAP result lines of a kselftest binary.

    Returns (results, plan): SubResults in order (diagnostic lines seen
    since the previous result are attached to each) and the planned count
    from "1..N" (or None).  "# SKIP" marks a skip, "# XFAIL" a pass,
    "# TODO"/"# XPASS" are reported as failures of the expectation.
    """
    results, diag, plan = [], [], None
    for line in text.splitlines():
        m = re.match(r"^1\.\.(\d+)", line)
        if m:
            plan = int(m.group(1))
            continue
        if line.startswith("Bail out!"):
            results.append(SubResult(prefix + "bail_out", "fail",
                                     diag + [line]))
            diag = []
            continue
        m = _TAP_RE.match(line)
        if not m:
            if line.strip():
                diag.append(line)
            continue
        ok, num, name, directive = m.groups()
        name = re.sub(r"\s+", "_", name.strip()) or f"test_{num}"
        directive = directive or ""
        d = directive.upper()
        if d.startswith("SKIP"):
            status = "skip"
        elif ok == "ok" or d.startswith("XFAIL"):
            status = "pass"
        else:
            status = "fail"
        results.append(SubResult(prefix + name, status, diag,
                                 reason=directive))
        diag = []
    return results, plan


def ksft(node, binary, timeout=300, args=""):
    """Run a kselftest binary in the guest and report each TAP case.

    binary: a name under /usr/lib/rdmalog/selftests/ (from build/selftests)
    or an absolute guest path.  Every "ok/not ok" line becomes its own
    result "suite.test.CASE" in the runner's output.  Also reported as
    failures: a timeout, a crash, a non-zero exit without a failing case,
    and missing cases (fewer results than the plan).  A binary that is
    not there is reported as one skipped case.  Returns the SubResults.
    """
    path = binary if binary.startswith("/") else \
        f"{GUEST_SELFTESTS}/{binary}"
    base = os.path.basename(binary)
    if node.run(f"test -x {shlex.quote(path)}", timeout=30).rc != 0:
        return [add_result(base, "skip", reason=f"SKIP {path} not built")]
    r = node.run(f"cd {shlex.quote(os.path.dirname(path))} && "
                 f"{shlex.quote(path)} {args}", timeout=timeout)
    results, plan = parse_tap(r.out)
    extra = []
    tail = r.out.rstrip("\n").split("\n")[-30:]
    if r.timed_out:
        extra.append(SubResult(f"{base}_timeout", "fail",
                               [f"{path} timed out after {timeout}s"] + tail))
    elif not results and r.rc == 4:
        extra.append(SubResult(base, "skip",
                               reason="SKIP binary exited with KSFT_SKIP"))
    elif r.rc not in (0, 4) and not any(x.status == "fail" for x in results):
        extra.append(SubResult(f"{base}_exit", "fail",
                               [f"{path} exited with status {r.rc}"] + tail))
    if plan is not None and len(results) < plan and not r.timed_out:
        extra.append(SubResult(f"{base}_missing", "fail",
                               [f"plan 1..{plan} but {len(results)} results"]
                               + tail))
    for x in results + extra:
        if _current_results is not None:
            _current_results.append(x)
    return results + extra


# RDMALOG_TIMEOUT_SCALE (make check-debug: the debug kernel runs several
# times slower in TCG): a wait's limit and a cluster file's timers times
# this; 1 in make check
TIMEOUT_SCALE = max(float(os.environ.get("RDMALOG_TIMEOUT_SCALE", "1")
                          or 1), 1)


def wait_for(fn, timeout=60, interval=0.5, what="condition"):
    """Poll fn() until it returns a true value; return that value.
    The limit is timeout times TIMEOUT_SCALE."""
    timeout = timeout * TIMEOUT_SCALE
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for "
                                 f"{what}")
        time.sleep(interval)
