# client/test/clilib.sh: the harness the fence command's shell tests share
# (cli*.sh, tls.sh), sourced from client/: the binary under test ($F), a
# temp dir ($TMP) and the servers a file starts of its own (own_pid,
# own_redis, auth_redis), expect_rc, lock_free, and run_test, which prints one
# "ok - NAME" / "not ok - NAME" / "skip - NAME" line per test.  What every
# shell suite shares (spare_port, wait_for, dead, fence_key, rcli) is
# test/lib/harness.sh's.
#
# FENCE_REDIS_URL names the Redis under test (default: a local one);
# FENCE_BIN names the binary under test (default: ./fence in client/);
# FENCE_CLI_ONLY picks tests by name.  Resource names carry the pid: other
# suites share the servers.
# The Redis under test: test/run.sh names one, else a local one.
: "${FENCE_REDIS_URL:=redis://127.0.0.1:6379}"
export FENCE_REDIS_URL
F=${FENCE_BIN:-$PWD/fence}
# the random part of an owner id (what --name goes in front of)
# shellcheck disable=SC2034 # the test files'
HEX='[0-9a-f]{32}'
PGC="dbname=${PGDATABASE:-postgres}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fence-cli.XXXXXX")
# shellcheck source=../../test/lib/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../test/lib/harness.sh"

# Servers a test file starts of its own (own_pid PID) are killed on exit,
# with the temp dir.  Their ids go to a file: each test runs in a subshell
# (run_test), where an array of them would be the subshell's and lost.
own_pid() { echo "$1" >>"$TMP/own.pids"; }
clilib_cleanup() {
	local p
	if [ -f "$TMP/own.pids" ]; then
		while read -r p; do kill -9 "$p" 2>/dev/null; done <"$TMP/own.pids"
	fi
	rm -rf "$TMP"
}
trap clilib_cleanup EXIT
failed=0 passed=0 skipped=0

rname() { echo "cli-$$-$1"; }
# refute CMD...: fails when CMD succeeds.  A test runs under errexit, which
# ignores "! CMD" (a negated command never stops it): mid-test, only this
# makes such a check count.
refute() { ! "$@"; }

# own_redis DIR [ARG...]: a redis-server of the test's own on a spare port
# (OWN_PORT, its pid OWN_REDIS) with the extra ARGs, its files in DIR.
# Stopped when the test's subshell ends, and with this file at the latest
# (own_pid: a second own_redis in one test replaces the first's trap, and
# outside a test there is no subshell to trap).
own_redis() {
	local dir=$1
	shift
	mkdir -p "$dir"
	OWN_PORT=$(spare_port)
	redis-server --port "$OWN_PORT" --bind 127.0.0.1 --save '' --appendonly no \
		--dir "$dir" --daemonize no --logfile "$dir/log" "$@" &
	OWN_REDIS=$!
	own_pid "$OWN_REDIS"
	[ "$BASHPID" = $$ ] ||
		trap 'kill $OWN_REDIS 2>/dev/null; wait $OWN_REDIS 2>/dev/null' EXIT
}

# auth_redis PASSWORD: own_redis with requirepass, answering; its port in
# PORT.
auth_redis() {
	own_redis "$TMP/redis-auth-$BASHPID-$RANDOM" --requirepass "$1"
	PORT=$OWN_PORT
	wait_for 5 redis-cli -p "$PORT" -a "$1" --no-auth-warning PING >/dev/null
}
lock_free() { [ "$(rcli EXISTS "$(fence_key "$1" lock)")" = 0 ]; }

# conns_of PID PORT: the local addresses of process PID's TCP connections
# to 127.0.0.1:PORT (ss names the process of each socket; we are root).
conns_of() {
	ss -tnpH state established "( dport = :$2 )" | grep "pid=$1," | awk '{print $3}'
}

# kill_conns PID PORT [REDIS-CLI-ARG...]: have the Redis on PORT close
# every connection process PID has to it (CLIENT KILL ADDR), as Redis's
# idle "timeout" or a failover would; "1" when there was one to close.
kill_conns() {
	local pid=$1 port=$2 a n=0
	shift 2
	for a in $(conns_of "$pid" "$port"); do
		redis-cli "$@" -p "$port" CLIENT KILL ADDR "$a" >/dev/null && n=$((n + 1))
	done
	[ $n -gt 0 ]
}

# expect_rc WANT CMD...: run CMD, fail unless it exits with WANT
expect_rc() {
	local want=$1 rc=0
	shift
	"$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
	if [ "$rc" != "$want" ]; then
		echo "expected exit $want, got $rc from: $*"
		cat "$TMP/out" "$TMP/err"
		return 1
	fi
}

pg_ready=0
if psql -XAtqc "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS fence" >/dev/null 2>&1 ||
	[ "$(psql -XAtc "SELECT to_regprocedure('fence.advance(text,bigint,text)') IS NOT NULL" 2>/dev/null)" = t ]; then
	pg_ready=1
fi

# kill_tree PID: kill PID and every process under it, children first found
kill_tree() {
	local c
	kill -STOP "$1" 2>/dev/null
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		kill_tree "$c"
	done
	kill -9 "$1" 2>/dev/null
}

# FENCE_CLI_ONLY="NAME..." runs only the tests named (while iterating).
run_test() {
	local name=$1 needs_pg=${2:-}
	[ -z "${FENCE_CLI_ONLY:-}" ] || [[ " $FENCE_CLI_ONLY " == *" $name "* ]] || return 0
	if [ "$needs_pg" = pg ] && [ $pg_ready = 0 ]; then
		echo "skip - $name # extension fence not available"
		skipped=$((skipped + 1))
		return
	fi
	# not inside "if": errexit would be ignored there.  A test that hangs
	# (a lease never lost, a server that never answers) fails after
	# FENCE_TEST_TIMEOUT seconds, and what it started is killed with it.
	local pid limiter rc done_id=
	(set -e; "test_$name") >"$TMP/log" 2>&1 &
	pid=$!
	sleep "${FENCE_TEST_TIMEOUT:-300}" &
	limiter=$!
	wait -n -p done_id "$pid" "$limiter"
	rc=$?
	if [ "$done_id" = "$pid" ]; then
		kill "$limiter" 2>/dev/null
		wait "$limiter" 2>/dev/null
	else
		kill_tree "$pid"
		wait "$pid" 2>/dev/null
		echo "timed out after ${FENCE_TEST_TIMEOUT:-300} s" >>"$TMP/log"
		rc=124
	fi
	if [ $rc = 0 ]; then
		echo "ok - $name"
		passed=$((passed + 1))
	else
		echo "not ok - $name"
		sed 's/^/#   /' "$TMP/log" | tail -n 30
		failed=$((failed + 1))
	fi
}
