#!/usr/bin/env bash
# client/test/counted.sh SOURCE CMD...: run a test program of SOURCE (a C
# binary of client/test/test_*.c, or a shell test), pass its output
# through, and fail loudly when it reported fewer or more tests than SOURCE
# declares (its TEST(...) or "run_test" lines): a binary that crashes half
# way (a sanitizer's abort, a signal) must not lose its remaining tests
# without a line.  FENCE_C_ONLY or FENCE_CLI_ONLY (a chosen few) turn the
# count off.  A shell test's source is linted too (below).
set -uo pipefail
src=$1
shift
name=${src##*/}
name=${name%.*}
case $src in
*.c) want=$(grep -cE '^[[:space:]]*TEST\(' "$src") ;;
*) want=$(grep -cE '^[[:space:]]*run_test ' "$src") ;;
esac
# A shell test's source is read first, for two kinds of test that cannot
# fail, or cannot say what it proves: a "! CMD" with more of the test after
# it (errexit ignores a negated command: only refute CMD, clilib.sh, makes
# it count), and a test_NAME() without the comment above it that says
# what it proves.
case $src in
*.sh)
	lint=$(awk '
		pend && !/^[[:space:]]*(#|$)/ {
			if ($0 !~ /^}/)
				printf "%s:%d: \"! CMD\" mid-test never fails a test under errexit: use refute CMD\n", FILENAME, pline
			pend = 0
		}
		/^[[:space:]]+! / && !/(\|\||&&|then|\\)[[:space:]]*$/ && !/\|\| *(return|fail|exit)/ { pend = 1; pline = FNR }
		/^test_[a-z0-9_]+\(\) *\{/ && prev !~ /^#/ {
			printf "%s:%d: %s has no name line (a comment above it saying what it proves)\n", FILENAME, FNR, $1
		}
		{ prev = $0 }' "$src")
	if [ -n "$lint" ]; then
		echo "$lint" | sed 's/^/# /'
		echo "not ok - $name (its source: $(echo "$lint" | wc -l) tests that cannot fail or do not say what they prove)"
		exit 1
	fi
	;;
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
