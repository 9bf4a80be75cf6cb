# SPDX-License-Identifier: GPL-2.0
#
# rdmalog - top-level Makefile.
#
#   make            module (rdmalog.ko) and tools (build/bin)
#   make selftests  the test programs and siw (needs the test packages)
#   make demo       install what is missing, build, boot a soft-RoCE cluster
#                   in QEMU and show the log working
#   make check      the same set-up, then lint and the whole test suite
#   make bench      rdmalog-bench beside perftest, in the same VMs and run
#   make bench-ab   one writer's commit with each data-path knob on and off
#                   (passive backups, the commit delay, the spin), interleaved
#   make bench-failover  the primary's VM killed 20 times under load: each
#                   leader change's phases beside ib_write_lat's round trip
#   make soak       the history checker under faults for DURATION (default
#                   30m; seconds or e.g. 30m, 2h), SEED=N replays a run,
#                   NODES=5 on five VMs, PRIMARY=1 faults the primary too
#   make stress     the teardown suite with 20 iterations (ITERS=N)
#   make check-debug  the whole suite on guests booting a debug kernel
#                   (KASAN, lockdep, DEBUG_OBJECTS, kmemleak) built once
#                   from linux-source into build/debug-SERIES (11-30 min)
#   make lint       checkpatch --strict, sparse (C=1) in a W=1 build, doccheck
#   make install    install the module, tools, headers, man pages, the udev
#                   rule and the group on this host (DESTDIR= honoured)
#   make dkms-install, dkms-uninstall   the same module through DKMS
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
# The version, written once: dkms.conf's PACKAGE_VERSION (Kbuild reads it
# there too).
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' $(CURDIR)/dkms.conf)

CC ?= gcc
USER_CFLAGS := -O2 -g -Wall -Wextra -Werror=implicit-function-declaration \
	-D_GNU_SOURCE -I$(CURDIR)/uapi -I$(CURDIR)/tools/lib \
	-DRDMALOG_VERSION='"$(VERSION)"'
NL_CFLAGS := $(shell pkg-config --cflags libnl-genl-3.0 2>/dev/null)
NL_LIBS := $(shell pkg-config --libs libnl-genl-3.0 2>/dev/null)

KMOD_SRC := $(wildcard kmod/*.c kmod/*.h uapi/*.h) Kbuild dkms.conf
# tools/lib: what the tools share (the JSON writer).
LIB_SRC := $(filter-out %_test.c,$(wildcard tools/lib/*.c))
LIB_HDR := $(wildcard tools/lib/*.h)
# What every tool is rebuilt for: the library, the ABI and the version.
TOOL_DEP := $(LIB_SRC) $(LIB_HDR) $(wildcard uapi/*.h) dkms.conf
CTL_SRC := $(wildcard tools/rdmalogctl/*.c) $(LIB_SRC)
CTL_HDR := $(wildcard tools/rdmalogctl/*.h) $(TOOL_DEP)
TEST_SRC := $(wildcard selftests/*.c)
TEST_HDR := $(wildcard selftests/*.h) $(wildcard uapi/*.h)
TEST_BIN := $(patsubst selftests/%.c,$(BUILD)/selftests/%,$(TEST_SRC))

.PHONY: all module tools selftests siw deps lint checkpatch sparse wbuild \
	check demo install uninstall clean ksft dkms-build lintbuild bench soak \
	check-run demo-run bench-run bench-ab bench-ab-run bench-failover bench-failover-run soak-run stress stress-run check-debug \
	check-debug-run

# The module and the tools only: what a real host needs. The test
# programs and siw need the test packages (make deps): make selftests;
# check, demo, bench, soak and stress build them.
all: module tools

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

$(BIN)/rdmalog-bench: tools/rdmalog-bench.c $(TOOL_DEP)
	@mkdir -p $(BIN)
	$(CC) $(USER_CFLAGS) -pthread -o $@ $< $(LIB_SRC)

$(BIN)/rdmalogcat: tools/rdmalogcat.c $(TOOL_DEP)
	@mkdir -p $(BIN)
	$(CC) $(USER_CFLAGS) -o $@ $< $(LIB_SRC)

$(BIN)/rdmalogctl: $(CTL_SRC) $(CTL_HDR)
	@mkdir -p $(BIN)
	$(CC) $(USER_CFLAGS) $(NL_CFLAGS) -o $@ $(CTL_SRC) $(NL_LIBS)

# The JSON writer's strings, checked on this host (no module needed).
.PHONY: toolcheck
toolcheck: $(BUILD)/json_test
	$(BUILD)/json_test

$(BUILD)/json_test: tools/lib/json_test.c $(LIB_SRC) $(LIB_HDR)
	@mkdir -p $(BUILD)
	$(CC) $(USER_CFLAGS) -o $@ $< $(LIB_SRC)

# kselftest_harness.h and kselftest.h come from Debian's linux-source of
# KVER's series, extracted at build time; they are never copied into the
# repository.
ksft: $(KSFT)/kselftest_harness.h

NO_LSRC = { echo "linux-source-$(KSERIES) missing: run 'make deps' or set LINUX_SOURCE" >&2; exit 1; }

# Everything taken from KVER's linux-source comes out of the tarball in one
# pass (xz is read whole for any member): kselftest's headers, siw's
# sources and checkpatch.pl with its data, into build/ksrc-SERIES.
LSRC_FILES := tools/testing/selftests/kselftest.h \
	tools/testing/selftests/kselftest_harness.h scripts/checkpatch.pl \
	scripts/spelling.txt scripts/const_structs.checkpatch \
	'drivers/infiniband/sw/siw/*'
$(KSRC)/.extracted:
	@test -n "$(LINUX_SOURCE)" || $(NO_LSRC)
	@mkdir -p $(KSRC)
	tar -xJf $(LINUX_SOURCE) --strip-components=1 -C $(KSRC) --wildcards \
		$(addprefix $(LSRC_TOP)/,$(LSRC_FILES))
	@touch $@

# order-only: a later extraction for another series rebuilds no test
$(KSFT)/kselftest_harness.h: | $(KSRC)/.extracted
	@mkdir -p $(KSFT)
	cp $(KSRC)/tools/testing/selftests/kselftest.h \
		$(KSRC)/tools/testing/selftests/kselftest_harness.h $(KSFT)/

selftests: $(TEST_BIN) siw

# Soft-iWARP for the iwarp suite: Debian's kernel does not build siw, so it
# is built out of tree from KVER's linux-source (never copied into the
# repo), in build/siw for the default kernel, in build/k/KVER/siw for any
# other; mkinitramfs.sh ships the one built for the guest's kernel.
siw: $(SIW_DIR)/siw.ko

$(SIW_DIR)/siw.ko: | $(KSRC)/.extracted
	@test -n "$(KDIR)" || { echo "no kernel headers: run 'make deps' or set KDIR" >&2; exit 1; }
	@mkdir -p $(SIW_DIR)
	cp -p $(KSRC)/drivers/infiniband/sw/siw/* $(SIW_DIR)/
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
# kmod/compat.h is the one file allowed to test LINUX_VERSION_CODE (where
# the headers offer no feature to test).
CHECKPATCH = $(KSRC)/scripts/checkpatch.pl --strict --no-tree --terse \
	--show-types --ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG
# checkpatch is one perl process per file list: the files in parallel
NPROC := $(shell nproc 2>/dev/null || echo 1)
checkpatch: $(KSRC)/.extracted
	printf '%s\n' $(filter-out kmod/compat.h,$(wildcard kmod/*.c kmod/*.h uapi/*.h)) | \
		xargs -P $(NPROC) -n 4 $(CHECKPATCH) -f
	$(CHECKPATCH) --ignore LINUX_VERSION_CODE -f kmod/compat.h

# sparse (C=1) and W=1 in one build of our objects only ("make -C KDIR
# M=. clean" would also delete the out-of-tree siw.ko under build/):
# every object is removed first, so every file is compiled and checked.
sparse wbuild: lintbuild
lintbuild:
	@test -n "$(KDIR)" || { echo "no kernel headers: run 'make deps' or set KDIR" >&2; exit 1; }
	@mkdir -p $(BUILD)
	$(sync_src)
	cd $(MOD_DIR) && rm -f kmod/*.o kmod/.*.o.cmd rdmalog.ko rdmalog.o \
		rdmalog.mod rdmalog.mod.o
	$(MAKE) -C $(KDIR) M=$(MOD_DIR) W=1 C=1 CF="-D__CHECK_ENDIAN__" \
		modules 2>&1 | tee $(BUILD)/lint-$(KVER).log
	@! grep -E "(warning|error):" $(BUILD)/lint-$(KVER).log

# The file tables of README.md and design.rst name every kmod/*.c.
.PHONY: doccheck
doccheck:
	@bash scripts/doccheck.sh

lint: doccheck checkpatch lintbuild
	@echo "lint: clean for $(KVER)"

-include selftests/vm/Makefile.inc

# The entry points: deps in this make, the rest in a fresh one (above).
demo bench bench-ab bench-failover soak stress check check-debug: deps
	@$(MAKE) --no-print-directory $@-run

demo-run: all selftests vm
	RDMALOG_KVER=$(VM_KVER) python3 selftests/demo.py

# Benchmark: rdmalog-bench against perftest over the same link, in the
# same VMs and the same run. make bench BENCH_ARGS=--quick for a smoke run.
bench-run: all selftests vm
	RDMALOG_KVER=$(VM_KVER) python3 selftests/bench.py $(BENCH_ARGS)

# The data path's knobs on and off in turn, rounds interleaved, in the
# same VMs: make bench-ab BENCH_ARGS="--threads 16 --count 300".
bench-ab-run: all selftests vm
	RDMALOG_KVER=$(VM_KVER) python3 selftests/bench_ab.py $(BENCH_ARGS)

# Leader change: the primary's VM killed 20 times under load, each time
# from the kill to the new primary's first commit, split into its phases,
# next to ib_write_lat's round trip in the same run; then a faultless run.
# make bench-failover BENCH_ARGS=--quick for a smoke run.
bench-failover-run: all selftests vm
	RDMALOG_KVER=$(VM_KVER) python3 selftests/bench_failover.py $(BENCH_ARGS)

# Soak: the history checker (selftests/history.py) for DURATION, on three
# VMs; exits non-zero when a record was lost or altered, or anything else
# in its checks failed. SEED=N replays a schedule; CATCHUP=0 keeps
# backups from ever rejoining behind the primary's trims (by default they
# do, and must catch up). PRIMARY=1 faults the primary too (failover
# auto: leader changes).
DURATION ?= 30m
soak-run: all selftests vm
	RDMALOG_KVER=$(VM_KVER) python3 selftests/history.py \
		--duration $(DURATION) $(if $(SEED),--seed $(SEED)) \
		$(if $(NODES),--nodes $(NODES)) \
		$(if $(filter 1,$(PRIMARY)),--primary-faults) \
		$(if $(filter 0,$(CATCHUP)),--no-catchup)

# Stress: the teardown suite with 20 iterations of every operation (make
# check runs 3 after the warm-up) and rdmalogctl wait under an event
# storm 200 times (make check: 40), STRESS_ARGS for more run.py arguments.
stress-run: all selftests vm
	RDMALOG_TD_ITERS=$(or $(ITERS),20) RDMALOG_STORM_ITERS=200 \
		RDMALOG_KVER=$(VM_KVER) python3 selftests/run.py --strict-skips \
		-k 'teardown.*' -k ops.wait_under_event_storm $(STRESS_ARGS)

# check: build, lint, dkms and the test suite, each phase timed, then the
# same build and lint and a smoke subset of the suite for every kernel in
# EXTRA_KVERS; the runners' per-suite tables and one summary line of both
# runs come last.
check-run:
	@MAKE="$(MAKE)" RDMALOG_KVER=$(VM_KVER) \
		RDMALOG_EXTRA_KVERS="$(EXTRA_KVERS)" bash selftests/check.sh

# check-debug: the whole suite on guests that boot a debug kernel of
# KVER's series (tools/debug-kernel.sh: KASAN, lockdep, DEBUG_ATOMIC_SLEEP,
# DEBUG_LIST, DEBUG_OBJECTS, kmemleak), built once and cached under
# build/debug-SERIES; the module, siw and the initramfs are built for it
# (KDIR its build tree, its modules from RDMALOG_MODROOT). Every limit of
# the runner is RDMALOG_TIMEOUT_SCALE (3) times longer and the guests get
# DEBUG_MEM (1G): KASAN's shadow and quarantine. The guests boot with
# no5lvl: with TCG's "-cpu max" the kernel otherwise takes 5-level paging,
# and an interrupt early in boot then made KASAN report a wild access in
# handle_edge_irq() (a guest of the device suite, 2026-12-02). A boot
# whose console is silent for 240 s is started again (twice at most):
# the debug kernel hung so, in its RCU-tasks self tests, on a loaded host.
# CHECK_DEBUG_ARGS: more run.py arguments (-k PATTERN). Not part of make
# check.
DEBUG_OUT := $(BUILD)/debug-$(KSERIES)
DEBUG_MEM ?= 1G
check-debug-run:
	bash tools/debug-kernel.sh build $(KSERIES) $(DEBUG_OUT)
	dk=$$(cat $(DEBUG_OUT)/release) && \
	RDMALOG_MODROOT=$(DEBUG_OUT)/root \
	RDMALOG_VM_KERNEL=$(DEBUG_OUT)/bzImage $(MAKE) --no-print-directory \
		KVER=$$dk KDIR=$(DEBUG_OUT)/obj all selftests vm && \
	RDMALOG_KVER=$$dk RDMALOG_MODROOT=$(DEBUG_OUT)/root \
	RDMALOG_VM_KERNEL=$(DEBUG_OUT)/bzImage RDMALOG_VM_MEM=$(DEBUG_MEM) \
	RDMALOG_VM_BOOT_TIMEOUT=600 RDMALOG_VM_BOOT_STALL=$${RDMALOG_VM_BOOT_STALL:-240} \
	RDMALOG_VM_APPEND="no5lvl $$RDMALOG_VM_APPEND" \
	RDMALOG_TIMEOUT_SCALE=$${RDMALOG_TIMEOUT_SCALE:-3} \
		python3 selftests/run.py --strict-skips $(CHECK_DEBUG_ARGS)

# --- Installing on a real host -------------------------------------------
#
# install puts the module into /lib/modules/IKVER/extra (IKVER: the running
# kernel when its headers are installed, else KVER, the newest with
# headers, said so; KVER= or KDIR= on the command line choose), runs
# depmod, and installs everything in INSTALL_LIST. DESTDIR=DIR installs
# under DIR instead and touches nothing else: INSTALL_MOD_PATH for
# modules_install, "depmod -b" when DIR holds the kernel's modules (an
# image's root; else depmod is left to the host), no group, no udev
# reload. Without
# DESTDIR it also creates the system group rdmalog (sysusers.d, else
# groupadd -r) and reloads udev when it runs. uninstall removes the same
# files (the group stays: "groupdel rdmalog").
#
# udev and sysusers.d read only their own directories (/usr/lib, /etc,
# /run), not PREFIX's, so UDEVRULESDIR and SYSUSERSDIR do not follow
# PREFIX.
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/rdmalog
UDEVRULESDIR ?= /usr/lib/udev/rules.d
SYSUSERSDIR ?= /usr/lib/sysusers.d

RUNNING_KVER = $(shell uname -r)
IKVER = $(if $(filter command line environment,$(origin KVER) $(origin KDIR)),$(KVER),$(if $(wildcard /lib/modules/$(RUNNING_KVER)/build/Makefile),$(RUNNING_KVER),$(KVER)))
IKDIR = $(if $(filter command line environment,$(origin KDIR)),$(KDIR),/lib/modules/$(IKVER)/build)
IMODDIR = $(DESTDIR)/lib/modules/$(IKVER)
IKVER_NOTE = if [ "$(IKVER)" != "$(RUNNING_KVER)" ]; then \
	echo "$@: for kernel $(IKVER), not the running $(RUNNING_KVER)$(if $(filter command line environment,$(origin KVER) $(origin KDIR)),, (it has no headers in /lib/modules/$(RUNNING_KVER)/build); set KVER= to choose)" >&2; \
	fi
# depmod; under DESTDIR "depmod -b" where DESTDIR holds that kernel's
# modules (an image's root), else nothing to index: the host's depmod
# runs when the files reach it.
DEPMOD = if [ -z "$(DESTDIR)" ]; then echo "depmod -a $(IKVER)"; depmod -a $(IKVER); \
	elif [ -e $(IMODDIR)/modules.order ]; then echo "depmod -b $(DESTDIR) -a $(IKVER)"; \
		depmod -b $(DESTDIR) -a $(IKVER); \
	else echo "depmod: skipped, $(IMODDIR) holds no modules.order"; fi

# The man pages with the version in their .TH line.
MAN_SRC := $(wildcard Documentation/*.[148])
MAN_OUT := $(patsubst Documentation/%,$(BUILD)/man/%,$(MAN_SRC))

$(BUILD)/man/%: Documentation/% dkms.conf
	@mkdir -p $(@D)
	sed '/^\.TH /s/ "rdmalog" / "rdmalog $(VERSION)" /' $< > $@

man: $(MAN_OUT)

.PHONY: man install-module install-tools dkms-export dkms-install \
	dkms-uninstall udevcheck

# SOURCE:DESTINATION:MODE, DESTINATION under $(DESTDIR).
INSTALL_LIST = \
	$(BIN)/rdmalogctl:$(SBINDIR)/rdmalogctl:0755 \
	$(BIN)/rdmalogcat:$(BINDIR)/rdmalogcat:0755 \
	$(BIN)/rdmalog-bench:$(BINDIR)/rdmalog-bench:0755 \
	uapi/rdmalog.h:$(INCLUDEDIR)/rdmalog/rdmalog.h:0644 \
	uapi/rdmalog_genl.h:$(INCLUDEDIR)/rdmalog/rdmalog_genl.h:0644 \
	$(BUILD)/man/rdmalogctl.8:$(MANDIR)/man8/rdmalogctl.8:0644 \
	$(BUILD)/man/rdmalogcat.1:$(MANDIR)/man1/rdmalogcat.1:0644 \
	$(BUILD)/man/rdmalog.4:$(MANDIR)/man4/rdmalog.4:0644 \
	udev/60-rdmalog.rules:$(UDEVRULESDIR)/60-rdmalog.rules:0644 \
	udev/rdmalog.sysusers:$(SYSUSERSDIR)/rdmalog.conf:0644 \
	tools/examples/cluster.conf:$(DOCDIR)/cluster.conf.example:0644

install: install-module install-tools
	@echo "installed$(if $(DESTDIR), under $(DESTDIR)):"
	@find $(IMODDIR)/extra -name 'rdmalog.ko*' | sed 's/^/  /'
	@for e in $(INSTALL_LIST); do \
		src=$${e%%:*}; dst=$${e#*:}; mode=$${dst#*:}; dst=$${dst%:*}; echo "  $(DESTDIR)$$dst"; \
	done
	@$(if $(DESTDIR),,echo "  the group rdmalog")

install-module:
	@test -d "$(IKDIR)" || { echo "install: no kernel headers for $(IKVER): install them or set KVER" >&2; exit 1; }
	@$(IKVER_NOTE)
	$(MAKE) -C $(IKDIR) M=$(CURDIR) modules
	$(MAKE) -C $(IKDIR) M=$(CURDIR) $(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR)) modules_install
	@$(DEPMOD)

# Everything but the module (with dkms-install, which installs that).
install-tools: tools man
	@for e in $(INSTALL_LIST); do \
		src=$${e%%:*}; dst=$${e#*:}; mode=$${dst#*:}; dst=$${dst%:*}; \
		echo "install -D -m $$mode $$src $(DESTDIR)$$dst"; \
		install -D -m "$$mode" "$$src" "$(DESTDIR)$$dst" || exit 1; \
	done
ifeq ($(DESTDIR),)
	@if ! getent group rdmalog >/dev/null; then \
		if command -v systemd-sysusers >/dev/null; then \
			echo "systemd-sysusers $(SYSUSERSDIR)/rdmalog.conf"; \
			systemd-sysusers $(SYSUSERSDIR)/rdmalog.conf; \
		else \
			echo "groupadd -r rdmalog"; groupadd -r rdmalog; \
		fi; \
	fi
	@if [ -d /run/udev ] && command -v udevadm >/dev/null; then \
		echo "udevadm control --reload-rules"; \
		udevadm control --reload-rules && \
		udevadm trigger --action=change --subsystem-match=misc --sysname-match=rdmalog; \
	fi
endif

# The udev rule parses and sets group and mode, the sysusers.d file makes
# the group: in scratch copies, nothing on this host changes (needs root;
# skipped otherwise).
udevcheck:
	@bash scripts/udevcheck.sh

uninstall:
	rm -f $(IMODDIR)/extra/rdmalog.ko* $(IMODDIR)/updates/rdmalog.ko*
	@rmdir $(IMODDIR)/extra $(IMODDIR)/updates 2>/dev/null || true
	@test ! -d $(IMODDIR) || $(DEPMOD)
	@for e in $(INSTALL_LIST); do \
		src=$${e%%:*}; dst=$${e#*:}; mode=$${dst#*:}; dst=$${dst%:*}; \
		echo "rm -f $(DESTDIR)$$dst"; rm -f "$(DESTDIR)$$dst"; \
	done
	@rmdir $(DESTDIR)$(INCLUDEDIR)/rdmalog $(DESTDIR)$(DOCDIR) 2>/dev/null || true
	@getent group rdmalog >/dev/null && [ -z "$(DESTDIR)" ] && \
		echo "uninstall: the group rdmalog stays (groupdel rdmalog removes it)" || true

# --- DKMS ----------------------------------------------------------------
#
# The DKMS source is an export of exactly what the module build needs,
# never a copy of the work tree (build/, .git, the selftests).
DKMS_SRC := /usr/src/rdmalog-$(VERSION)
DKMS_FILES = Kbuild dkms.conf $(sort $(wildcard kmod/*.c kmod/*.h uapi/*.h))

dkms-export:
	rm -rf $(DKMS_SRC)
	mkdir -p $(DKMS_SRC)
	tar -cf - $(DKMS_FILES) | tar -xf - -C $(DKMS_SRC)
	@dkms remove rdmalog/$(VERSION) --all >/dev/null 2>&1 || true
	dkms add rdmalog/$(VERSION)

# Build the module through DKMS exactly as a user would, against KVER's
# headers, then remove it again: proves dkms.conf works.
dkms-build: dkms-export
	dkms build rdmalog/$(VERSION) -k $(KVER) || \
		{ cat /var/lib/dkms/rdmalog/$(VERSION)/build/make.log; exit 1; }
	dkms remove rdmalog/$(VERSION) --all
	rm -rf $(DKMS_SRC)
	@echo "dkms: rdmalog/$(VERSION) builds for $(KVER)"

# Install through DKMS for IKVER (as install); DKMS rebuilds the module
# for every kernel installed later (AUTOINSTALL) and signs it with its
# MOK key where Secure Boot wants it (README).
dkms-install: dkms-export
	@$(IKVER_NOTE)
	dkms build rdmalog/$(VERSION) -k $(IKVER) || \
		{ cat /var/lib/dkms/rdmalog/$(VERSION)/build/make.log; exit 1; }
	dkms install rdmalog/$(VERSION) -k $(IKVER)
	@dkms status rdmalog/$(VERSION)

dkms-uninstall:
	-dkms remove rdmalog/$(VERSION) --all
	rm -rf $(DKMS_SRC)

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -rf $(BUILD)
