#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check, after "make deps" (the Makefile's check-run): build, lint,
# the DKMS build and the test suite, each phase timed; for every extra
# kernel (Linux 6.12 on Debian 12) also its build and lint before the
# tests and a smoke subset of the suite on its guests (tests-6.12), which
# with a few of the main kernel's suites runs in a third lane beside the
# main run, niced, as a few more do in a second (their output printed
# after the main run's). Ends with a
# table of the phases, the runners' per-suite tables above it, and one
# summary line "N passed, N failed" (all runs added up) as the very last
# line.
#
# Environment: MAKE (the make to use), RDMALOG_KVER (the kernel the VMs
# boot), RDMALOG_CHECK_ARGS (more arguments for selftests/run.py),
# RDMALOG_EXTRA_KVERS (the extra kernels, space separated),
# RDMALOG_SMOKE_SUITES (the smoke subset: -k patterns), RDMALOG_SMOKE_HISTORY_DURATION
# (seconds of load and faults of its history run, default 20),
# RDMALOG_SMOKE_HISTORY_KINDS (the fault kinds of that run, default the
# five that go through the kernel's interfaces differently: cut, reload,
# quorum, trim, catchup; the main kernel's run has every kind),
# RDMALOG_BESIDE=0 (one lane: no niced lanes beside the main run),
# RDMALOG_BESIDE_SUITES (the main kernel's suites in the second lane),
# RDMALOG_BESIDE2_SUITES (those in the third, before the smoke runs).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
MAKE=${MAKE:-make}
# the builds and lints in parallel on every CPU (the tests are not make's)
jobs=-j$(nproc 2>/dev/null || echo 1)
phases=()
rc=0
t_all=$(date +%s)

phase() {
	local name=$1 t0 t1 r
	shift
	echo "==> check: $name"
	t0=$(date +%s)
	"$@"
	r=$?
	t1=$(date +%s)
	phases+=("$(printf '%-12s %5ds  %s' "$name" $((t1 - t0)) \
		"$([ $r -eq 0 ] && echo ok || echo "FAILED (rc $r)")")")
	return $r
}

# shellcheck disable=SC2206 # a list of kernel releases
extra=(${RDMALOG_EXTRA_KVERS:-})
# the smoke subset: run.py -k patterns (no globbing here); the catchup
# tests that force races with delay points test the module's logic and
# run on the main kernel only, and so does the history run with primary
# faults (leader change: elect.c and role.c, no kernel interface of
# their own): the smoke has one short history run
read -r -a smoke <<<"${RDMALOG_SMOKE_SUITES:-vm_smoke.* device.* \
replication.* history.checks_* history.writer_* history.history_short \
catchup.behind_* catchup.trimmed_* catchup.join_is_*}"
smoke_args=()
for p in "${smoke[@]}"; do
	smoke_args+=(-k "$p")
done
series() { echo "$1" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p'; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
summaries=("$tmp/tests")

# the runner, its output also in $1 (for the summary line); exits with
# the runner's status
run_tests() {
	local out=$1
	shift
	python3 selftests/run.py --strict-skips "$@" | tee "$out"
	return "${PIPESTATUS[0]}"
}

# lint first: its W=1 build leaves the module that the build phase then
# finds up to date, and the initramfs is built after it (not stale)
ok=1
phase lint $MAKE "$jobs" --no-print-directory lint || ok=
for k in "${extra[@]}"; do
	[ -n "$ok" ] || break
	phase "lint-$(series "$k")" $MAKE "$jobs" --no-print-directory KVER="$k" lint || ok=
done
[ -n "$ok" ] && { phase build $MAKE "$jobs" --no-print-directory all selftests vm || ok=; }
for k in "${extra[@]}"; do
	[ -n "$ok" ] || break
	phase "build-$(series "$k")" $MAKE "$jobs" --no-print-directory KVER="$k" all selftests vm || ok=
done
[ -n "$ok" ] && { phase dkms $MAKE --no-print-directory dkms-build || ok=; }

# Three lanes. The tests keep about one of the two CPUs busy (TCG
# guests wait on timers and on each other much of the time), so beside
# the main run (phase tests) two more runners at nice 10 take only what
# the main run's guests leave: one runs a few suites of the main kernel
# (phase tests-beside; RDMALOG_BESIDE_SUITES), the other a few more
# (phase tests-beside2; RDMALOG_BESIDE2_SUITES) and then the smoke
# subset on every extra kernel (tests-SERIES), each with its own
# initramfs (build/vm/initramfs-KVER.cpio, built above). Their output is
# printed after the main run's. RDMALOG_BESIDE=0 runs everything in one
# lane, the beside suites in the main run and the smoke runs after it.
# shellcheck disable=SC2206 # a list of suite names
beside=(${RDMALOG_BESIDE_SUITES-forward iwarp observe ops replication rogue datapath})
# shellcheck disable=SC2206 # a list of suite names
beside2=(${RDMALOG_BESIDE2_SUITES-catchup teardown connect})
lanes=1
[ "${RDMALOG_BESIDE:-1}" = 0 ] && lanes=
# the caller chose what to run: all of it in the main run
[ -n "${RDMALOG_CHECK_ARGS:-}" ] && beside=() beside2=()
[ -n "$lanes" ] || beside=() beside2=()
nice2=${lanes:+nice -n 10}

# one run beside the tests (or after the main run): NAME OUT ARGS...
lane_run() {
	local name=$1 out=$2 t0 r
	shift 2
	t0=$(date +%s)
	$nice2 python3 selftests/run.py --strict-skips "$@" >"$out" 2>&1
	r=$?
	printf '%-12s %5ds  %s%s\n' "$name" $(($(date +%s) - t0)) \
		"$([ $r -eq 0 ] && echo ok || echo "FAILED (rc $r)")" \
		"${nice2:+ (beside tests, niced)}" >>"$tmp/lane-phases-$name"
}
lane2_runs() {
	[ ${#beside[@]} -gt 0 ] &&
		lane_run tests-beside "$tmp/tests-beside" "${beside[@]}"
}
lane3_runs() {
	local k
	[ ${#beside2[@]} -gt 0 ] &&
		lane_run tests-beside2 "$tmp/tests-beside2" "${beside2[@]}"
	for k in "${extra[@]}"; do
		RDMALOG_KVER=$k \
		RDMALOG_HISTORY_DURATION=${RDMALOG_SMOKE_HISTORY_DURATION:-20} \
		RDMALOG_HISTORY_KINDS=$smoke_kinds \
			lane_run "tests-$(series "$k")" "$tmp/tests-$(series "$k")" \
			"${smoke_args[@]}"
	done
}
# The smoke's history run has these kinds of fault; then the main run's
# leaves them out, but for trim: without it the writers fill the ring
# and wait (each kind runs once per make check, not twice).
smoke_kinds=${RDMALOG_SMOKE_HISTORY_KINDS-cut reload quorum trim catchup}
main_skip=
if [ ${#extra[@]} -gt 0 ] && [[ " ${smoke[*]} " == *" history.history_short "* ]]; then
	for k in $smoke_kinds; do
		[ "$k" = trim ] || main_skip+="${main_skip:+ }$k"
	done
fi
lane_out=()
[ ${#beside[@]} -gt 0 ] && lane_out+=("$tmp/tests-beside")
[ ${#beside2[@]} -gt 0 ] && lane_out+=("$tmp/tests-beside2")
for k in "${extra[@]}"; do
	lane_out+=("$tmp/tests-$(series "$k")")
done
summaries+=("${lane_out[@]}")

if [ -n "$ok" ]; then
	main_args=()
	if [ -n "$lanes" ]; then
		for b in "${beside[@]}" "${beside2[@]}"; do
			main_args+=(-x "$b")
		done
		echo "==> check: beside the tests, niced: ${beside[*]:+${beside[*]} on ${RDMALOG_KVER:-?}; }${beside2[*]:+${beside2[*]} on ${RDMALOG_KVER:-?}}${extra[*]:+, then the smoke on ${extra[*]}} (output below them)"
		lane2_runs &
		lane2_pid=$!
		lane3_runs &
		lane3_pid=$!
		trap 'kill "$lane2_pid" "$lane3_pid" 2>/dev/null; wait; rm -rf "$tmp"' EXIT
	fi
	[ -n "$main_skip" ] && echo "==> check: the main history run leaves out what the smoke's has: $main_skip"
	# shellcheck disable=SC2086 # RDMALOG_CHECK_ARGS is a list
	RDMALOG_HISTORY_SKIP=${RDMALOG_HISTORY_SKIP-$main_skip} \
		phase tests run_tests "$tmp/tests" "${main_args[@]}" ${RDMALOG_CHECK_ARGS:-} || rc=1
	if [ -n "$lanes" ]; then
		t0=$(date +%s)
		wait "$lane2_pid" "$lane3_pid"
		echo "==> check: the other lanes ended $(($(date +%s) - t0))s after the tests"
	else
		lane3_runs
	fi
	for f in "${lane_out[@]}"; do
		echo "==> check: ${f##*/}"
		cat "$f"
		# the runner's own status is in its summary line, counted below
	done
	for f in "$tmp"/lane-phases-*; do
		[ -s "$f" ] || continue
		mapfile -t -O "${#phases[@]}" phases <"$f"
		grep -q FAILED "$f" && rc=1
	done
else
	rc=1
fi

echo "# make check phases (KVER ${RDMALOG_KVER:-?}${extra[*]:+; smoke on ${extra[*]}}):"
for p in "${phases[@]}"; do
	echo "#   $p"
done
echo "#   total        $(($(date +%s) - t_all))s"
# one line for all runs: their counts added up; a run that printed none
# (or never ran) counts as one failure
passed=0 failed=0 skipped=0
for f in "${summaries[@]}"; do
	last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$f" 2>/dev/null | tail -n 1)
	if [ -z "$last" ]; then
		failed=$((failed + 1))
		rc=1
		continue
	fi
	read -r p f2 sk < <(echo "$last" | sed -E \
		's/^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?.*/\1 \2 \4/')
	passed=$((passed + p)) failed=$((failed + f2)) skipped=$((skipped + ${sk:-0}))
done
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
exit $rc
