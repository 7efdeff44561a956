#!/usr/bin/env bash
# client/test/counted.sh SOURCE CMD...: run a test program of SOURCE (a C
# binary of client/test/test_*.c, or a shell test), pass its output
# through, and fail loudly when it reported fewer or more tests than SOURCE
# declares (its TEST(...) or "run_test" lines): a binary that crashes half
# way (a sanitizer's abort, a signal) must not lose its remaining tests
# without a line.  FENCE_C_ONLY or FENCE_CLI_ONLY (a chosen few) turn the
# count off.
set -uo pipefail
src=$1
shift
name=${src##*/}
name=${name%.*}
case $src in
*.c) want=$(grep -cE '^[[:space:]]*TEST\(' "$src") ;;
*) want=$(grep -cE '^[[:space:]]*run_test ' "$src") ;;
esac
out=$(mktemp "${TMPDIR:-/tmp}/fence-counted.XXXXXX")
"$@" | tee "$out"
rc=${PIPESTATUS[0]}
got=$(grep -cE '^(ok|not ok|skip) - ' "$out")
rm -f "$out"
if [ -z "${FENCE_C_ONLY:-}${FENCE_CLI_ONLY:-}" ] && [ "$got" -ne "$want" ]; then
	echo "not ok - $name (reported $got of its $want tests; exit $rc)"
	exit 1
fi
exit "$rc"
