#!/bin/sh
# tools/layers.sh OBJ...: fail when libfence's layers or the fence
# command's rooms are broken.  OBJ: libfence's objects and the command's
# (those under a cli/ folder).
#
#  1. No loop: A -> B when object A calls a function that object B defines
#     (nm); tsort(1) names any loop, among libfence's objects, among the
#     command's, or between the two.  Calls through a topology's vtable
#     (ctx->conn->ops->exec) are not seen, which is the point: that is the
#     interface, store/store.h.
#  2. The ground is ground: error, clock, pid, random and the pure helpers call
#     no other object of the library (they may call each other only as
#     listed in the loop-free order).
#  3. The topologies see only their interface: every file in store/
#     includes "store.h" and no other header of ours, and none names a
#     lease's mutex.
#  4. Comments that name a file name one that exists.
#  5. The fence command is a program on the public API: its files include
#     no header of ours but cli/cli.h and fence.h, and its objects call no
#     function of libfence that libfence.map does not export.
#  6. Files stay small enough to hold one idea: no C source or header
#     over 800 lines in client/ or extension/ (tests excepted), none in
#     client/cli/ over 500; and functions too: none over 150 lines but
#     those of the allow-list below, each with its reason.
#  7. Every C source of libfence and of the command has its row in a
#     table of client/README.md (a topology's by its name, or as
#     `store/NAME`).
#
# Run from client/ ("make check-layers").
set -eu
defs=$(mktemp) pairs=$(mktemp) exported=$(mktemp) called=$(mktemp)
trap 'rm -f "$defs" "$pairs" "$exported" "$called"' EXIT
fail=0

for o in "$@"; do
	nm -g --defined-only "$o" | awk -v f="$o" '$2 ~ /[TDRB]/ {print $3, f}'
done >"$defs"
for o in "$@"; do
	nm -u "$o" | awk -v f="$o" '{print f, $NF}'
done | awk 'NR == FNR {d[$1] = $2; next} ($2 in d) && d[$2] != $1 {print $1, d[$2]}' "$defs" - |
	sort -u >"$pairs"
if ! tsort "$pairs" >/dev/null 2>"$defs.err"; then
	echo "layers: objects call each other in a loop:" >&2
	cat "$defs.err" >&2
	fail=1
fi
rm -f "$defs.err"

for g in error clock pid random url duration sha1 keys tokens; do
	bad=$(awk -v g="/$g.o" 'index($1, g) == length($1) - length(g) + 1 {print $2}' "$pairs" |
		grep -vE '/(error|clock|pid)\.o$' || true)
	if [ -n "$bad" ]; then
		echo "layers: $g.c is ground but calls into:" $bad >&2
		fail=1
	fi
done

other=$(grep -h '^#include "' store/*.c | sort -u | grep -vx '#include "store.h"' || true)
if [ -n "$other" ]; then
	echo "layers: store/ must include only store.h, found:" $other >&2
	fail=1
fi
if grep -nE -- '->mu\b|pthread_cond' store/*.c >&2; then
	echo "layers: a topology names a lease's mutex (above)" >&2
	fail=1
fi

for f in $(grep -rhoE '[A-Za-z_0-9-]+\.[ch]\b' --include='*.[ch]' . ../extension | sort -u); do
	case $f in
	parse_param.c) continue ;;	# PostgreSQL's own (src/backend/parser)
	esac
	if [ -z "$(find . ../extension -name "$f" -print -quit)" ] &&
		[ -z "$(find /usr/include -name "$f" -print -quit 2>/dev/null)" ]; then
		echo "layers: a comment names $f, which does not exist:" >&2
		grep -rnw --include='*.[ch]' "$f" . ../extension | head -3 >&2
		fail=1
	fi
done

other=$(grep -h '^#include "' cli/*.[ch] | sort -u | grep -vxE '#include "(cli|fence)\.h"' || true)
if [ -n "$other" ]; then
	echo "layers: cli/ must include only cli.h and fence.h, found:" $other >&2
	fail=1
fi
# what the command's objects call that libfence's define, less the exports
sed -n 's/^[[:space:]]*\(fence_[a-z0-9_]*\);.*/\1/p' libfence.map | sort -u >"$exported"
for o in "$@"; do
	case $o in
	*/cli/*) nm -u "$o" | awk '{print $NF}' ;;
	esac
done | sort -u >"$called"
internal=$(for o in "$@"; do
	case $o in
	*/cli/*) ;;
	*) nm -g --defined-only "$o" | awk '$2 ~ /[TDRB]/ {print $3}' ;;
	esac
done | sort -u | comm -12 - "$called" | comm -23 - "$exported")
if [ -n "$internal" ]; then
	echo "layers: the fence command calls functions libfence does not export:" $internal >&2
	fail=1
fi

for f in $(find . ../extension -name '*.[ch]' ! -path '*/test/*' ! -path './build/*' | sort); do
	n=$(wc -l <"$f")
	case $f in
	./cli/*) max=500 ;;
	*) max=800 ;;
	esac
	if [ "$n" -gt $max ]; then
		echo "layers: $f has $n lines, more than $max: split it by idea" >&2
		fail=1
	fi
done

# Function bodies in PostgreSQL's layout: the name opens a line at column
# 0 ("name(...") and the body is "{" ... "}" at column 0.  FILE:FUNCTION
# allowed over the limit, and why (none now: main and cmd_run were split),
# a tab and the reason on each line:
long_ok='
'
long=$(find . ../extension -name '*.c' ! -path '*/test/*' ! -path './build/*' ! -path './tools/*' |
	sed 's|^\./|../client/|' | sort | xargs awk '
	/^[A-Za-z_][A-Za-z0-9_]*\(/ { name = $0; sub(/\(.*/, "", name) }
	/^\{/ { start = FNR }
	/^\}/ && start { if (FNR - start + 1 > 150) print FILENAME ":" name " " FNR - start + 1; start = 0 }')
echo "$long" | while read -r fn n; do
	[ -n "$fn" ] || continue
	if ! printf '%s\n' "$long_ok" | cut -f1 | grep -qxF "$fn"; then
		echo "layers: $fn has $n lines, more than 150: split it by phase" >&2
		echo 1 >"$defs.long"
	fi
done
[ -s "$defs.long" ] && fail=1
rm -f "$defs.long"

for f in $(find . -name '*.c' ! -path './test/*' ! -path './tools/*' ! -path './examples/*' ! -path './build/*' | sort); do
	# a topology's file by its name in the Topologies table, or as
	# `store/NAME` (store.c): each file its own row, not the folder's
	if ! grep -qF -e "\`${f##*/}\`" -e "\`${f#./}\`" README.md; then
		echo "layers: $f is in no table of client/README.md: give it its row" >&2
		fail=1
	fi
done

[ $fail -eq 0 ] && echo "layers: no loop between $# objects; ground, store/, cli/, file and function sizes, file names and the README's tables in order"
exit $fail
