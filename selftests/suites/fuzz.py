# SPDX-License-Identifier: GPL-2.0
"""Bad input (selftests/fuzz_test.c): a bounded, replayable fuzz of the
generic netlink family (raw, malformed TLVs included) and of
/dev/rdmalog (ioctl numbers, argument pointers, structure contents,
read/write/lseek), as root and as an unprivileged user.  Every call must
return with a valid reply or an expected errno, and afterwards the log
must hold exactly what the valid operations put there and a normal
up/append/read/down sequence must work.

The seed is printed in the TAP output ("seed N"); to replay a run, set
RDMALOG_FUZZ_SEED=N (and RDMALOG_FUZZ_ITERS=N to change the iteration
counts) in the environment of run.py: both are passed to the guest.
"""

import os
import shlex

from testlib import ksft, test

NODES = 1
TIMEOUT = 1200

BIN = "/usr/lib/rdmalog/selftests/fuzz_test"
WRAPPER = "/tmp/fuzz/fuzz_test"


def setup(c):
    c[1].run("modprobe rdmalog", timeout=120, check=True)


@test(timeout=1200)
def fuzz_test(c):
    c[1].run("modprobe rdmalog", timeout=120, check=True)
    env = " ".join(f"{v}={shlex.quote(os.environ[v])}"
                   for v in ("RDMALOG_FUZZ_SEED", "RDMALOG_FUZZ_ITERS")
                   if os.environ.get(v))
    if not env:
        ksft(c[1], "fuzz_test", timeout=1100)
        return
    # the same binary, with the replay variables in its environment
    script = f'#!/bin/sh\nexec env {env} {BIN} "$@"\n'
    c[1].run(f"mkdir -p /tmp/fuzz && printf %s {shlex.quote(script)} "
             f"> {WRAPPER} && chmod +x {WRAPPER}", timeout=30, check=True)
    ksft(c[1], WRAPPER, timeout=1100)
