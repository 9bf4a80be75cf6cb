#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check, after "make deps" (the Makefile's check-run): build, lint,
# the DKMS build and the test suite, each phase timed; for every extra
# kernel (Linux 6.12 on Debian 12) also its build and lint before the
# tests and a smoke subset of the suite on its guests (tests-6.12: beside
# the main run, niced, its output printed after it). Ends with a table of the phases, the runners' per-suite
# tables above it, and one summary line "N passed, N failed" (both runs
# added up) as the very last line.
#
# Environment: MAKE (the make to use), RDMALOG_KVER (the kernel the VMs
# boot), RDMALOG_CHECK_ARGS (more arguments for selftests/run.py),
# RDMALOG_EXTRA_KVERS (the extra kernels, space separated),
# RDMALOG_SMOKE_SUITES (the smoke subset: -k patterns), RDMALOG_SMOKE_HISTORY_DURATION
# (seconds of load and faults of its history run, default 20),
# RDMALOG_SMOKE_BESIDE=0 (the smoke runs after the main run, not beside).
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
	phases+=("$(printf '%-10s %5ds  %s' "$name" $((t1 - t0)) \
		"$([ $r -eq 0 ] && echo ok || echo "FAILED (rc $r)")")")
	return $r
}

# shellcheck disable=SC2206 # a list of kernel releases
extra=(${RDMALOG_EXTRA_KVERS:-})
# the smoke subset: run.py -k patterns (no globbing here); the catchup
# tests that force races with delay points test the module's logic and
# run on the main kernel only
read -r -a smoke <<<"${RDMALOG_SMOKE_SUITES:-vm_smoke.* device.* \
replication.* history.* catchup.behind_* catchup.trimmed_* \
catchup.join_is_*}"
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

ok=1
phase build $MAKE "$jobs" --no-print-directory all selftests vm || ok=
for k in "${extra[@]}"; do
	[ -n "$ok" ] || break
	phase "build-$(series "$k")" $MAKE "$jobs" --no-print-directory KVER="$k" all selftests vm || ok=
done
[ -n "$ok" ] && { phase lint $MAKE "$jobs" --no-print-directory lint || ok=; }
for k in "${extra[@]}"; do
	[ -n "$ok" ] || break
	phase "lint-$(series "$k")" $MAKE "$jobs" --no-print-directory KVER="$k" lint || ok=
done
[ -n "$ok" ] && { phase dkms $MAKE --no-print-directory dkms-build || ok=; }
# the smoke subset on every extra kernel's guests, in series, each with
# its own initramfs (build/vm/initramfs-KVER.cpio.gz, built above); its
# output in $tmp/tests-SERIES, its phase lines in $tmp/smoke-phases
smoke_runs() {
	local k s t0 r
	for k in "${extra[@]}"; do
		s=$(series "$k")
		t0=$(date +%s)
		RDMALOG_KVER=$k \
		RDMALOG_HISTORY_DURATION=${RDMALOG_SMOKE_HISTORY_DURATION:-20} \
			$smoke_nice python3 selftests/run.py --strict-skips \
			"${smoke_args[@]}" >"$tmp/tests-$s" 2>&1
		r=$?
		printf '%-10s %5ds  %s%s\n' "tests-$s" $(($(date +%s) - t0)) \
			"$([ $r -eq 0 ] && echo ok || echo "FAILED (rc $r)")" \
			"${smoke_nice:+ (beside tests, niced)}" >>"$tmp/smoke-phases"
	done
}
for k in "${extra[@]}"; do
	summaries+=("$tmp/tests-$(series "$k")")
done

if [ -n "$ok" ]; then
	# The tests keep about one of the two CPUs busy (TCG guests wait on
	# timers and on each other much of the time): by default the smoke
	# runs go beside the main run, at nice 10 so that the main run's
	# guests keep the CPU they want; RDMALOG_SMOKE_BESIDE=0 runs them
	# after it.
	smoke_pid=
	smoke_nice=
	if [ "${RDMALOG_SMOKE_BESIDE:-1}" != 0 ] && [ ${#extra[@]} -gt 0 ]; then
		smoke_nice="nice -n 10"
		echo "==> check: smoke on ${extra[*]}, beside the tests (output below them)"
		smoke_runs &
		smoke_pid=$!
		trap 'kill "$smoke_pid" 2>/dev/null; wait; rm -rf "$tmp"' EXIT
	fi
	# shellcheck disable=SC2086 # RDMALOG_CHECK_ARGS is a list
	phase tests run_tests "$tmp/tests" ${RDMALOG_CHECK_ARGS:-} || rc=1
	if [ -n "$smoke_pid" ]; then
		t0=$(date +%s)
		wait "$smoke_pid"
		echo "==> check: the smoke runs, $(($(date +%s) - t0))s after the tests"
	else
		echo "==> check: smoke on ${extra[*]}"
		smoke_runs
	fi
	for k in "${extra[@]}"; do
		s=$(series "$k")
		echo "==> check: tests-$s (smoke on $k)"
		cat "$tmp/tests-$s"
		# the runner's own status is in its summary line, counted below
	done
	if [ -s "$tmp/smoke-phases" ]; then
		mapfile -t -O "${#phases[@]}" phases <"$tmp/smoke-phases"
		grep -q FAILED "$tmp/smoke-phases" && rc=1
	fi
else
	rc=1
fi

echo "# make check phases (KVER ${RDMALOG_KVER:-?}${extra[*]:+; smoke on ${extra[*]}}):"
for p in "${phases[@]}"; do
	echo "#   $p"
done
echo "#   total      $(($(date +%s) - t_all))s"
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
