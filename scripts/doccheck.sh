#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# doccheck: the file tables stay honest. Every kmod/*.c is named in
# Documentation/design.rst's table ("``kmod/NAME``") and in the kmod/ row
# of README.md's layout table ("`NAME`"), and every kmod/ file that
# either table names exists. Exit 1 with one line per problem.
set -uo pipefail
cd "$(dirname "$0")/.."
design=Documentation/design.rst
readme=README.md
bad=0
# design.rst's table: from its title to the next section's.
table=$(awk '/^Files and what they own/ { f = 1 } /^Objects and lifetimes/ { f = 0 } f' "$design")
row=$(grep -E '^\| `kmod/`' "$readme")

complain() {
	echo "doccheck: $*" >&2
	bad=1
}

for f in kmod/*.c; do
	n=${f#kmod/}
	grep -qF "\`\`kmod/$n\`\`" <<<"$table" ||
		complain "$f is not in $design's file table"
	grep -qF "\`$n\`" <<<"$row" ||
		complain "$f is not in $readme's layout table (the kmod/ row)"
done

# The other way round: what the tables name exists.
for n in $(grep -oE '``kmod/[A-Za-z0-9_]+\.[ch]``' <<<"$table" | tr -d '`' | sort -u); do
	[ -e "$n" ] || complain "$design names $n, which does not exist"
done
for n in $(grep -oE '`[A-Za-z0-9_]+\.[ch]`' <<<"$row" | tr -d '`' | sort -u); do
	[ -e "kmod/$n" ] || complain "$readme names kmod/$n, which does not exist"
done

[ "$bad" -eq 0 ] && echo "doccheck: the file tables name every kmod/*.c"
exit "$bad"
