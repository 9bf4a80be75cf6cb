#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check, after "make deps" (the Makefile's check-run): build, lint,
# the DKMS build and the test suite, each phase timed. Ends with a table
# of the phases, the runner's per-suite table above it, and the runner's
# summary line "N passed, N failed" again as the very last line.
#
# Environment: MAKE (the make to use), RDMALOG_KVER (the kernel the VMs
# boot), RDMALOG_CHECK_ARGS (more arguments for selftests/run.py).
set -uo pipefail
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
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

summary=$(mktemp)
trap 'rm -f "$summary"' EXIT

if phase build $MAKE --no-print-directory all selftests vm &&
   phase lint $MAKE --no-print-directory lint &&
   phase dkms $MAKE --no-print-directory dkms-build; then
	# shellcheck disable=SC2086 # RDMALOG_CHECK_ARGS is a list
	phase tests bash -c 'python3 selftests/run.py --strict-skips "$@" | tee "$0"; exit "${PIPESTATUS[0]}"' \
		"$summary" ${RDMALOG_CHECK_ARGS:-} || rc=1
else
	rc=1
fi

echo "# make check phases (KVER ${RDMALOG_KVER:-?}):"
for p in "${phases[@]}"; do
	echo "#   $p"
done
echo "#   total      $(($(date +%s) - t_all))s"
last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$summary" | tail -n 1)
if [ -n "$last" ]; then
	echo "$last"
else
	echo "0 passed, 1 failed"
	rc=1
fi
exit $rc
