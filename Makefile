# SPDX-License-Identifier: GPL-2.0
#
# rdmalog - top-level Makefile.
#
#   make            module (rdmalog.ko), tools (build/bin), test programs
#   make demo       install what is missing, build, boot a soft-RoCE cluster
#                   in QEMU and show the log working
#   make check      the same set-up, then lint and the whole test suite
#   make bench      rdmalog-bench beside perftest, in the same VMs and run
#   make soak       the history checker under faults for DURATION (default
#                   30m; seconds or e.g. 30m, 2h), SEED=N replays a run
#   make lint       checkpatch --strict, sparse (C=1) and a W=1 build
#   make install    install the module (and rdmalogctl) on this host
#
# KVER defaults to the release's default kernel (the one Debian's
# linux-image-amd64 depends on: 6.1 on Debian 12, 6.12 on Debian 13) when
# its headers are installed, else to the newest kernel with headers; never
# to the running one: a build host may run a kernel it has no headers for
# (tools/kernels.sh). KDIR follows KVER; the test VMs boot KVER too.
#
# One source tree builds for every kernel (kmod/compat.h). The module for
# the default kernel is built in place (./rdmalog.ko); for any other KVER
# from a copy of the sources under build/k/KVER/ (6.1's Kbuild has no MO=),
# so that the objects of two kernels never mix. With Debian 12's Linux 6.12
# installed too ("make deps" does), "make check" also builds and lints the
# module for it and runs a smoke subset of the suite on 6.12 guests
# (EXTRA_KVERS); "make check KVER=<6.12 release>" runs everything on 6.12.
#
# demo, check, bench and soak install the packages first ("deps") and only
# then run a fresh make for everything else: KVER, KDIR, LINUX_SOURCE and
# the libnl flags are computed when the Makefile is read, which on a fresh
# machine is before the packages they come from are there, so nothing
# computed in the first make may reach the second (no "export").

DEFAULT_KVER := $(shell tools/kernels.sh default)
ifeq ($(origin KVER),undefined)
KVER := $(DEFAULT_KVER)
endif
EXTRA_KVERS := $(shell tools/kernels.sh extra $(KVER))
KDIR ?= $(if $(KVER),/lib/modules/$(KVER)/build)
BUILD := $(CURDIR)/build
BIN := $(BUILD)/bin
KSFT := $(BUILD)/ksft
# KVER's series (6.1, 6.12) and its linux-source, where kselftest's
# headers, checkpatch.pl and siw come from (the tarball's top directory
# is its name: linux-source-6.1/...)
KSERIES := $(shell echo $(KVER) | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
LINUX_SOURCE ?= $(firstword $(wildcard /usr/src/linux-source-$(KSERIES).tar.xz))
LSRC_TOP := $(basename $(basename $(notdir $(LINUX_SOURCE))))
KSRC := $(BUILD)/ksrc-$(KSERIES)
# where KVER's rdmalog.ko and siw.ko are built
ifeq ($(KVER),$(DEFAULT_KVER))
MOD_DIR := $(CURDIR)
SIW_DIR := $(BUILD)/siw
else
MOD_DIR := $(BUILD)/k/$(KVER)
SIW_DIR := $(MOD_DIR)/siw
endif
MOD_KO := $(MOD_DIR)/rdmalog.ko
PREFIX ?= /usr/local

CC ?= gcc
USER_CFLAGS := -O2 -g -Wall -Wextra -Werror=implicit-function-declaration \
	-D_GNU_SOURCE -I$(CURDIR)/uapi
NL_CFLAGS := $(shell pkg-config --cflags libnl-genl-3.0 2>/dev/null)
NL_LIBS := $(shell pkg-config --libs libnl-genl-3.0 2>/dev/null)

KMOD_SRC := $(wildcard kmod/*.c kmod/*.h uapi/*.h) Kbuild
CTL_SRC := $(wildcard tools/rdmalogctl/*.c)
CTL_HDR := $(wildcard tools/rdmalogctl/*.h) $(wildcard uapi/*.h)
TEST_SRC := $(wildcard selftests/*.c)
TEST_HDR := $(wildcard selftests/*.h) $(wildcard uapi/*.h)
TEST_BIN := $(patsubst selftests/%.c,$(BUILD)/selftests/%,$(TEST_SRC))

.PHONY: all module tools selftests siw deps lint checkpatch sparse wbuild \
	check demo install uninstall clean ksft dkms-build bench soak \
	check-run demo-run bench-run soak-run

all: module tools selftests

deps:
	@bash tools/install-deps.sh

module: $(MOD_KO)

# the copy under build/k/KVER/: only what changed is copied (cp -u keeps
# the times), so Kbuild rebuilds only what changed
sync_src = $(if $(filter-out $(CURDIR),$(MOD_DIR)),\
	mkdir -p $(MOD_DIR) && cp -pu --parents $(KMOD_SRC) $(MOD_DIR)/)

$(MOD_KO): $(KMOD_SRC)
	@test -n "$(KDIR)" || { echo "no kernel headers: run 'make deps' or set KDIR" >&2; exit 1; }
	$(sync_src)
	$(MAKE) -C $(KDIR) M=$(MOD_DIR) modules

tools: $(BIN)/rdmalogctl $(BIN)/rdmalogcat $(BIN)/rdmalog-bench

$(BIN)/rdmalog-bench: tools/rdmalog-bench.c $(wildcard uapi/*.h)
	@mkdir -p $(BIN)
	$(CC) $(USER_CFLAGS) -pthread -o $@ $<

$(BIN)/rdmalogcat: tools/rdmalogcat.c $(wildcard uapi/*.h)
	@mkdir -p $(BIN)
	$(CC) $(USER_CFLAGS) -o $@ $<

$(BIN)/rdmalogctl: $(CTL_SRC) $(CTL_HDR)
	@mkdir -p $(BIN)
	$(CC) $(USER_CFLAGS) $(NL_CFLAGS) -o $@ $(CTL_SRC) $(NL_LIBS)

# kselftest_harness.h and kselftest.h come from Debian's linux-source of
# KVER's series, extracted at build time; they are never copied into the
# repository.
ksft: $(KSFT)/kselftest_harness.h

NO_LSRC = { echo "linux-source-$(KSERIES) missing: run 'make deps' or set LINUX_SOURCE" >&2; exit 1; }

$(KSFT)/kselftest_harness.h:
	@test -n "$(LINUX_SOURCE)" || $(NO_LSRC)
	@mkdir -p $(KSFT)
	tar -xJf $(LINUX_SOURCE) --strip-components=4 -C $(KSFT) \
		$(LSRC_TOP)/tools/testing/selftests/kselftest.h \
		$(LSRC_TOP)/tools/testing/selftests/kselftest_harness.h
	@touch $@

selftests: $(TEST_BIN) siw

# Soft-iWARP for the iwarp suite: Debian's kernel does not build siw, so it
# is built out of tree from KVER's linux-source (never copied into the
# repo), in build/siw for the default kernel, in build/k/KVER/siw for any
# other; mkinitramfs.sh ships the one built for the guest's kernel.
siw: $(SIW_DIR)/siw.ko

$(SIW_DIR)/siw.ko:
	@test -n "$(LINUX_SOURCE)" || $(NO_LSRC)
	@test -n "$(KDIR)" || { echo "no kernel headers: run 'make deps' or set KDIR" >&2; exit 1; }
	@mkdir -p $(SIW_DIR)
	tar -xJf $(LINUX_SOURCE) --strip-components=5 -C $(SIW_DIR) \
		--wildcards '$(LSRC_TOP)/drivers/infiniband/sw/siw/*'
	$(MAKE) -C $(KDIR) M=$(SIW_DIR) CONFIG_RDMA_SIW=m modules >/dev/null

$(BUILD)/selftests/%: selftests/%.c $(TEST_HDR) $(KSFT)/kselftest_harness.h
	@mkdir -p $(BUILD)/selftests
	$(CC) $(USER_CFLAGS) -I$(KSFT) $(NL_CFLAGS) -pthread -o $@ $< $(NL_LIBS)

# rogue_peer speaks kmod/proto.h from userspace over libibverbs and
# librdmacm (no libnl); the kernel's <linux/build_bug.h> becomes C11's
# static_assert.
ROGUE_INC := $(BUILD)/rogue-inc

$(ROGUE_INC)/linux/build_bug.h:
	@mkdir -p $(dir $@)
	printf '#include <assert.h>\n' > $@

$(BUILD)/selftests/rogue_peer: selftests/rogue_peer.c kmod/proto.h \
		$(ROGUE_INC)/linux/build_bug.h
	@mkdir -p $(BUILD)/selftests
	$(CC) $(USER_CFLAGS) -I$(ROGUE_INC) -o $@ $< -lrdmacm -libverbs

# Lint, for KVER: checkpatch.pl --strict (extracted from KVER's
# linux-source), sparse and W=1 against KVER's headers. "make lint" lints
# for the default kernel; "make KVER=... lint" for another one (make check
# does both when Linux 6.12 is installed).
$(KSRC)/scripts/checkpatch.pl:
	@test -n "$(LINUX_SOURCE)" || $(NO_LSRC)
	@mkdir -p $(KSRC)
	tar -xJf $(LINUX_SOURCE) --strip-components=1 -C $(KSRC) \
		$(LSRC_TOP)/scripts/checkpatch.pl \
		$(LSRC_TOP)/scripts/spelling.txt \
		$(LSRC_TOP)/scripts/const_structs.checkpatch
	@touch $@

# kmod/compat.h is the one file allowed to test LINUX_VERSION_CODE (where
# the headers offer no feature to test).
CHECKPATCH = $(KSRC)/scripts/checkpatch.pl --strict --no-tree --terse \
	--show-types --ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG
checkpatch: $(KSRC)/scripts/checkpatch.pl
	$(CHECKPATCH) -f $(filter-out kmod/compat.h,$(wildcard kmod/*.c kmod/*.h uapi/*.h))
	$(CHECKPATCH) --ignore LINUX_VERSION_CODE -f kmod/compat.h

sparse: $(MOD_KO)
	$(MAKE) -C $(KDIR) M=$(MOD_DIR) C=2 CF="-D__CHECK_ENDIAN__" modules 2>&1 | \
		tee $(BUILD)/sparse-$(KVER).log
	@! grep -E "(warning|error):" $(BUILD)/sparse-$(KVER).log

# Our objects only: "make -C KDIR M=. clean" would also delete the
# out-of-tree siw.ko under build/.
wbuild:
	@mkdir -p $(BUILD)
	$(sync_src)
	cd $(MOD_DIR) && rm -f kmod/*.o kmod/.*.o.cmd rdmalog.ko rdmalog.o \
		rdmalog.mod rdmalog.mod.o
	$(MAKE) -C $(KDIR) M=$(MOD_DIR) W=1 modules 2>&1 | tee $(BUILD)/w1-$(KVER).log
	@! grep -E "(warning|error):" $(BUILD)/w1-$(KVER).log

lint: checkpatch sparse wbuild
	@echo "lint: clean for $(KVER)"

-include selftests/vm/Makefile.inc

# The entry points: deps in this make, the rest in a fresh one (above).
demo bench soak check: deps
	@$(MAKE) --no-print-directory $@-run

demo-run: all vm
	RDMALOG_KVER=$(VM_KVER) python3 selftests/demo.py

# Benchmark: rdmalog-bench against perftest over the same link, in the
# same VMs and the same run. make bench BENCH_ARGS=--quick for a smoke run.
bench-run: all vm
	RDMALOG_KVER=$(VM_KVER) python3 selftests/bench.py $(BENCH_ARGS)

# Soak: the history checker (selftests/history.py) for DURATION, on three
# VMs; exits non-zero when a record was lost or altered, or anything else
# in its checks failed. SEED=N replays a schedule; CATCHUP=0 keeps
# backups from ever rejoining behind the primary's trims (by default they
# do, and must catch up).
DURATION ?= 30m
soak-run: all vm
	RDMALOG_KVER=$(VM_KVER) python3 selftests/history.py \
		--duration $(DURATION) $(if $(SEED),--seed $(SEED)) \
		$(if $(filter 0,$(CATCHUP)),--no-catchup)

# check: build, lint, dkms and the test suite, each phase timed, then the
# same build and lint and a smoke subset of the suite for every kernel in
# EXTRA_KVERS; the runners' per-suite tables and one summary line of both
# runs come last.
check-run:
	@MAKE="$(MAKE)" RDMALOG_KVER=$(VM_KVER) \
		RDMALOG_EXTRA_KVERS="$(EXTRA_KVERS)" bash selftests/check.sh

install: $(MOD_KO) tools
	$(MAKE) -C $(KDIR) M=$(MOD_DIR) modules_install
	depmod -a $(KVER)
	install -D -m 0755 $(BIN)/rdmalogctl $(DESTDIR)$(PREFIX)/sbin/rdmalogctl
	install -D -m 0755 $(BIN)/rdmalogcat $(DESTDIR)$(PREFIX)/bin/rdmalogcat
	install -D -m 0644 tools/examples/cluster.conf \
		$(DESTDIR)$(PREFIX)/share/doc/rdmalog/cluster.conf.example
	install -D -m 0644 Documentation/rdmalogctl.8 \
		$(DESTDIR)$(PREFIX)/share/man/man8/rdmalogctl.8

# Build the module through DKMS exactly as a user would, against KVER's
# headers, then remove it again: proves dkms.conf works.
DKMS_VER := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
dkms-build:
	rm -rf /usr/src/rdmalog-$(DKMS_VER)
	mkdir -p /usr/src/rdmalog-$(DKMS_VER)
	cp -r Kbuild Makefile dkms.conf kmod uapi /usr/src/rdmalog-$(DKMS_VER)/
	-dkms remove rdmalog/$(DKMS_VER) --all >/dev/null 2>&1
	dkms add rdmalog/$(DKMS_VER)
	dkms build rdmalog/$(DKMS_VER) -k $(KVER) || \
		{ cat /var/lib/dkms/rdmalog/$(DKMS_VER)/build/make.log; exit 1; }
	dkms remove rdmalog/$(DKMS_VER) --all
	rm -rf /usr/src/rdmalog-$(DKMS_VER)
	@echo "dkms: rdmalog/$(DKMS_VER) builds for $(KVER)"

uninstall:
	rm -f /lib/modules/$(KVER)/updates/rdmalog.ko /lib/modules/$(KVER)/extra/rdmalog.ko
	depmod -a $(KVER)
	rm -f $(DESTDIR)$(PREFIX)/sbin/rdmalogctl $(DESTDIR)$(PREFIX)/share/man/man8/rdmalogctl.8

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -rf $(BUILD)
