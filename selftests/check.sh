#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check, after "make deps" (the Makefile's check-run): build, lint,
# the DKMS build and the test suite, each phase timed; for every extra
# kernel (Linux 6.12 on Debian 12) also its build and lint before the
# tests and a smoke subset of the suite on its guests after them
# (tests-6.12). Ends with a table of the phases, the runners' per-suite
# tables above it, and one summary line "N passed, N failed" (both runs
# added up) as the very last line.
#
# Environment: MAKE (the make to use), RDMALOG_KVER (the kernel the VMs
# boot), RDMALOG_CHECK_ARGS (more arguments for selftests/run.py),
# RDMALOG_EXTRA_KVERS (the extra kernels, space separated),
# RDMALOG_SMOKE_SUITES (the smoke subset: -k patterns), RDMALOG_SMOKE_HISTORY_DURATION
# (seconds of load and faults of its history run, default 20).
set -uo pipefail
cd "$(dirname "$0")/.."
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
if [ -n "$ok" ]; then
	# shellcheck disable=SC2086 # RDMALOG_CHECK_ARGS is a list
	phase tests run_tests "$tmp/tests" ${RDMALOG_CHECK_ARGS:-} || rc=1
	# the smoke subset on every extra kernel's guests: its own
	# initramfs (build/vm/initramfs-KVER.cpio.gz, built above)
	for k in "${extra[@]}"; do
		s=$(series "$k")
		summaries+=("$tmp/tests-$s")
		RDMALOG_KVER=$k \
		RDMALOG_HISTORY_DURATION=${RDMALOG_SMOKE_HISTORY_DURATION:-20} \
			phase "tests-$s" run_tests "$tmp/tests-$s" \
			"${smoke_args[@]}" || rc=1
	done
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
