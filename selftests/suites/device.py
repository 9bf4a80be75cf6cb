# SPDX-License-Identifier: GPL-2.0
"""The kselftest programs on one node: /dev/rdmalog semantics
(device_test), concurrent appends and tailing readers (concurrency_test)
and the generic netlink family spoken directly (netlink_test).  Every
kselftest case is its own TAP line ("device.device_test.dev.lseek_...").

The programs configure the log themselves (rdmalogctl / netlink); the
suite only loads the module.  netlink_test reloads it (fixture "fresh"),
so it runs last.
"""

from testlib import ksft, test

NODES = 1
TIMEOUT = 1800


def load(c):
    c[1].run("modprobe rdmalog", timeout=120, check=True)


def setup(c):
    load(c)


@test(timeout=1800)
def device_test(c):
    load(c)
    ksft(c[1], "device_test", timeout=1500)


@test(timeout=2400)
def concurrency_test(c):
    load(c)
    ksft(c[1], "concurrency_test", timeout=2100)


@test(timeout=1200)
def netlink_test(c):
    load(c)
    ksft(c[1], "netlink_test", timeout=900)
