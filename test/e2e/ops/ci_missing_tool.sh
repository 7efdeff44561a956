#!/usr/bin/env bash
# ci_missing_tool: under CI, a Node.js or a Go that test/lib/deps.sh
# installs but that is not there fails the run; it is no platform's skip.
#
# The node and go suites of test/run.sh ask test/lib/platform.sh's
# tool_skip why they cannot run, and report "skip - node # WHY"; under CI
# run.sh turns each skip that ci_dep_failures picks into a failure.  Here
# both run as run.sh runs them, on a PATH that has every command of this
# one but node, npm and go (a machine where deps.sh's nodejs or golang-go
# went missing), and the results they give are what run.sh would count.
#
# Must hold: each suite skips saying its tool is not installed, and under
# CI that skip becomes a "not ok" line; a platform's own skip (a Debian
# whose package is too old or absent) does not.
# Control: on this machine's own PATH neither reason is that the tool is
# missing (the test can tell the two apart).
. "$(dirname "$0")/../lib/lib.sh"
e2e_init ci_missing_tool
. "$TOP/test/lib/platform.sh"
cd "$TOP"

# a PATH with every command of this one but the tools (first one wins,
# as on PATH)
bin=$WORK/bin
mkdir -p "$bin"
declare -A seen=()
links=()
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
	[ -d "$d" ] || continue
	for f in "$d"/*; do
		n=${f##*/}
		case $n in node | nodejs | npm | npx | go | gofmt) continue ;; esac
		[ -x "$f" ] && [ -z "${seen[$n]:-}" ] || continue
		seen[$n]=1
		links+=("$f")
	done
done
ln -s -t "$bin" -- "${links[@]}"

for tool in node go; do
	# control: where the tool is on PATH, its reason (if any) is not that
	command -v "$tool" >/dev/null || skip "$tool not installed (test/lib/deps.sh installs it)"
	why=$(tool_skip "$tool")
	case $why in
	"Node.js not installed"* | "Go not installed"*)
		fail "control: with $tool on PATH ($(command -v "$tool")), tool_skip says: $why" ;;
	esac
	why=$(PATH=$bin tool_skip "$tool")
	[ -n "$why" ] || fail "with no $tool on PATH, tool_skip $tool gives no reason to skip"
	printf 'skip - %s # %s\n' "$tool" "$why" >"$WORK/results.$tool"
	out=$(ci_dep_failures "$WORK/results.$tool")
	[ "$out" = "not ok - (CI: a missing dependency) $tool # $why" ] ||
		fail "with no $tool on PATH, the skip \"$why\" is not a failure under CI (ci_dep_failures: '$out')"
	say "no $tool: skip ($why), under CI: $out"
done

# a platform's own skips stay skips under CI
printf '%s\n' "skip - node # Node.js 12 is older than the package's 18" \
	"skip - go # $(platform_skip_reason golang-github-jackc-pgx-v4-dev "pgx v4")" >"$WORK/results.platform"
out=$(ci_dep_failures "$WORK/results.platform")
[ -z "$out" ] || fail "a platform's own skip fails under CI: $out"
say "pass"
