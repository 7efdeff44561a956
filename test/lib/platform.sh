# test/lib/platform.sh: what this platform's Debian cannot give a test.
#
# A test whose dependency is missing skips.  Under CI that skip is a
# failure where "make test" (test/lib/deps.sh) would have installed the
# dependency (its reason says "not installed"), and not where this
# Debian's archive has no such package at all, which deps.sh leaves out
# and says so (psycopg 3 and Debian's pgx before bookworm): no command of
# the README can install it there.  The reason then names the platform,
# and never the words of a missing dependency (run.sh's dep_skip).

# platform_name: this Debian's codename, or its name.
platform_name() {
	local name=
	[ -r /etc/os-release ] &&
		name=$(. /etc/os-release && echo "${VERSION_CODENAME:-${PRETTY_NAME:-}}")
	echo "${name:-this platform}"
}

# platform_lacks PACKAGE: true when apt knows no package PACKAGE here
# (false where there is no apt: the dependency is then only missing).
platform_lacks() {
	command -v apt-cache >/dev/null &&
		[ -z "$(apt-cache show --no-all-versions "$1" 2>/dev/null | head -n 1)" ]
}

# platform_skip_reason PACKAGE WHAT: the reason of a skip for WHAT, which
# needs PACKAGE, that this Debian lacks.
platform_skip_reason() {
	echo "$(platform_name) has no package $1 ($2)"
}

# The words of a skip for a dependency that "make test" installs
# (test/lib/deps.sh): under CI such a skip fails the run (test/run.sh).
FENCE_DEP_SKIP='not installed|not available|no fence command|no C compiler'

# dep_skip REASON: true when a skip for REASON hides a missing dependency
# that deps.sh installs (a failure under CI), not one the platform lacks.
dep_skip() { grep -qE "$FENCE_DEP_SKIP" <<<"$1"; }

# ci_dep_failures RESULTS: a "not ok" line for each skip of the results
# file RESULTS ("skip - NAME # REASON" lines) that hides such a dependency:
# what run.sh adds to its results under CI.
ci_dep_failures() {
	grep '^skip - ' "$1" | grep -E "$FENCE_DEP_SKIP" | sed 's/^skip - /not ok - (CI: a missing dependency) /'
	return 0
}

# tool_skip node|go: why the Node.js or the Go package cannot be tested
# here, or nothing when it can.  A command deps.sh installs but that is
# not there is "not installed" (a failure under CI), never a platform's
# skip: only a Debian whose own package is too old (bullseye's Node.js 12
# and Go 1.15) or absent (pgx before bookworm) is.
tool_skip() {
	local v
	case $1 in
	node)
		command -v node >/dev/null || { echo "Node.js not installed (nodejs: test/lib/deps.sh)"; return; }
		v=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)
		[ -n "$v" ] || { echo "Node.js not available (node -p failed)"; return; }
		[ "$v" -ge 18 ] || { echo "Node.js $v is older than the package's 18"; return; }
		[ -d node/node_modules/koffi ] ||
			echo "node/node_modules not installed (npm ci in node/: test/lib/deps.sh)"
		;;
	go)
		command -v go >/dev/null || { echo "Go not installed (golang-go)"; return; }
		v=$(go version 2>/dev/null | sed -n 's/^go version go1\.\([0-9]*\).*/\1/p')
		[ -n "$v" ] || { echo "Go not available (go version failed)"; return; }
		[ "$v" -ge 19 ] || { echo "Go 1.$v is older than the package's 1.19"; return; }
		[ -d /usr/share/gocode/src/github.com/jackc/pgx/v4 ] && return
		if platform_lacks golang-github-jackc-pgx-v4-dev; then
			platform_skip_reason golang-github-jackc-pgx-v4-dev "pgx v4"
		else
			echo "pgx not installed (golang-github-jackc-pgx-v4-dev)"
		fi
		;;
	esac
}
