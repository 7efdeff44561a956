#!/usr/bin/env bash
# test/packaging/run.sh: "make check-packaging".  Runs every check in this
# folder (META.json, the man page, bash completion, the install layout and
# make uninstall, make dist, the Debian packages) and prints one closing
# line "N passed, N failed, N skipped", as test/run.sh does.
#
# FENCE_PACKAGING="man deb" picks checks by file-name prefix.  A check's
# log is shown when it fails.
set -uo pipefail
cd "$(dirname "$0")"
# The checks run make on trees of their own: the variables given to "make
# check-packaging" (PGTREE=..., PG_CFLAGS=...) must not reach those runs
# through MAKEFLAGS.
unset MAKEFLAGS MFLAGS MAKELEVEL
logs=$(mktemp -d "${TMPDIR:-/tmp}/pgfence-packaging.XXXXXX")
trap 'rm -rf "$logs"' EXIT
passed=0 failed=0 skipped=0

for t in [a-z]*.sh; do
	name=${t%.sh}
	[ "$name" = lib ] || [ "$name" = run ] && continue
	if [ -n "${FENCE_PACKAGING:-}" ]; then
		want=0
		for p in $FENCE_PACKAGING; do [[ $name == "$p"* ]] && want=1; done
		[ $want = 1 ] || continue
	fi
	start=$SECONDS
	bash "$t" >"$logs/$name.log" 2>&1
	rc=$?
	case $rc in
	0) echo "ok - packaging_$name ($((SECONDS - start)) s)"; passed=$((passed + 1)) ;;
	77) echo "skip - packaging_$name: $(grep -m1 SKIP "$logs/$name.log")"; skipped=$((skipped + 1)) ;;
	*) echo "not ok - packaging_$name (exit $rc)"; failed=$((failed + 1))
	   tail -n 60 "$logs/$name.log" | sed 's/^/#   /' ;;
	esac
done

echo
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
