#!/usr/bin/env bash
# test/run.sh: run every pgfence suite against throwaway servers and print
# one closing line "N passed, N failed, N skipped".
#
# Suites: pg_regress and isolation specs (extension/), the same against
# the SQL edition for hosted PostgreSQL (regress_sql: test/hosted/), the client's C tests
# under ASan/UBSan (client/), its C tests on Redis Cluster, Sentinel and a
# quorum (topo: servers of their own), the client's C and CLI tests over
# TLS (tls: TLS-only servers of their own, certificates made here),
# fence.fenced_update from every driver (test/drivers/), the Python
# package over libfence (python/tests, pytest), the Node.js package
# (node/test, node --test), the Go package (go/, go test), and the
# end-to-end fault
# tests (test/e2e/).
# Each suite reports a line per test, "ok - NAME", "not ok - NAME" or
# "skip - NAME # REASON"; this script counts them, and fails loudly where
# a platform takes something away:
# - every suite runs, and is reported, whatever the one before it said;
# - every suite has a time limit (FENCE_SUITE_TIMEOUT, seconds; every
#   end-to-end test FENCE_E2E_TIMEOUT, every shell test of the client
#   FENCE_TEST_TIMEOUT), and a suite or test past it is a failure;
# - a suite that reports fewer tests than it has (a crash, a make that
#   stops) is a failure (the client's programs check their own counts:
#   client/test/counted.sh);
# - the closing line names every skip and its reason; under CI a skip for
#   a dependency that "make test" installs (test/lib/deps.sh) is a failure;
# - a process that a suite started and left running is a failure
#   (leftover_processes), and is killed.
#
# FENCE_SUITES="regress regress_sql client topo tls drivers python node go e2e" picks suites; FENCE_E2E="f01 f06" picks
# end-to-end tests by file-name prefix, FENCE_E2E=faults by purpose (the
# directory under test/e2e/).
#
# Lanes: the units (each suite, each of the client's programs and shell
# tests, each end-to-end test) run in FENCE_JOBS lanes at once (default 4),
# each lane with a PostgreSQL, a Redis and a range of ports of its own, so
# that no unit sees another's keys, roles or servers; each unit's output
# is kept and printed in the fixed order, with its seconds ("# time NAME:
# S s (lane N)"), and a table of the seconds closes the run.  The time
# limits stay per suite and per test.  FENCE_SERIAL="NAME ..." (the names
# of the table) runs those alone, after the lanes.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$PWD
. test/lib/servers.sh
. test/lib/tls.sh
. test/lib/platform.sh

# Every process started from here carries this mark in its environment:
# what still carries it when the suites are done was left behind.
export FENCE_RUN_MARK="run-$$-$RANDOM$RANDOM"
export FENCE_BIN=$top/client/fence
# The ACL words of newer servers (client/test/cli_servers.sh): when no
# other server is named, the platform's own lock server if it is Redis 7.2
# or later, or Valkey.
if [ -z "${FENCE_REDIS_SERVER_NEWER:-}" ]; then
	read -r major minor < <(redis-server --version 2>/dev/null | sed -n 's/.* v=\([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
	if [ "${major:-0}" -gt 7 ] || { [ "${major:-0}" -eq 7 ] && [ "${minor:-0}" -ge 2 ]; }; then
		FENCE_REDIS_SERVER_NEWER=$(command -v redis-server)
		export FENCE_REDIS_SERVER_NEWER
	fi
fi

# Each unit (a suite, one program of the client's, one end-to-end test)
# writes its output and its result lines to files of its own here; the
# units' lines are gathered into $results, in their fixed order, as they
# finish.  Outside any lane's FENCE_TMP: the lanes' servers (and their
# FENCE_TMP) are stopped before the closing line is counted.
runs=$(mktemp -d "${TMPDIR:-/tmp}/pgfence-run.XXXXXX")
all_results=$runs/results
: >"$all_results"
results=$all_results
trap 'rm -rf "$runs"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# report: copy a suite's output through, keeping its per-test lines.
report() {
	tee -a "$results"
}

# tests_so_far: how many ok/not ok/skip lines the results hold.
tests_so_far() { grep -cE '^(ok|not ok|skip) - ' "$results"; }

# limited NAME SECS CMD...: run CMD (its output to stdout) with a time
# limit; past it CMD and everything in its process group are killed, and
# "not ok - NAME" says so.  Returns CMD's status (124: timed out).
limited() {
	local name=$1 secs=$2 rc
	shift 2
	timeout -k 20 "$secs" "$@"
	rc=$?
	case $rc in
	124 | 137) echo "not ok - $name (timed out after $secs s)" | report ;;
	esac
	return $rc
}

# counted NAME WANT BEFORE: the suite NAME reported WANT tests (BEFORE were
# there already), or says how many it lost.
counted() {
	local got
	got=$(($(tests_so_far) - $3))
	[ "$got" -ge "$2" ] || echo "not ok - $1 (reported $got of its $2 tests)" | report
}

# The PG15 pg_regress prints "test NAME ... ok"; PG16 and later print TAP
# ("ok 1 - NAME"). Both are turned into the common form.
regress_lines() {
	sed -u -E \
		-e 's/^(test |     )?([A-Za-z0-9_-]+) +\.\.\. ok.*/ok - \2/' \
		-e 's/^(test |     )?([A-Za-z0-9_-]+) +\.\.\. FAILED.*/not ok - \2/' \
		-e 's/^ok [0-9]+ +[-+] ([A-Za-z0-9_-]+).*/ok - \1/' \
		-e 's/^not ok [0-9]+ +[-+] ([A-Za-z0-9_-]+).*/not ok - \1/'
}

suite_regress() {
	echo "== pg_regress and isolation"
	local before d n specs
	before=$(tests_so_far)
	n=$(find test/sql -name '*.sql' | wc -l)
	limited regress "${FENCE_SUITE_TIMEOUT:-900}" make -s -C extension installcheck-regress 2>&1 |
		regress_lines | report
	counted regress "$n" "$before"
	# the isolation specs run whatever pg_regress said
	before=$(tests_so_far)
	specs=$(find test/specs -name '*.spec' | wc -l)
	if [ ! -x "$(dirname "$("$PG_CONFIG" --pgxs)")/../test/isolation/pg_isolation_regress" ]; then
		# Debian's -dev package of PostgreSQL 13 ships none: deps.sh builds
		# it (test/lib/pg_isolation.sh), so its absence is a failure under CI
		for d in test/specs/*.spec; do
			d=${d##*/}
			echo "skip - ${d%.spec} # pg_isolation_regress not installed (test/lib/pg_isolation.sh builds it)"
		done | report
	else
		limited isolation "${FENCE_SUITE_TIMEOUT:-900}" make -s -C extension installcheck-isolation 2>&1 |
			regress_lines | report
	fi
	counted isolation "$specs" "$before"
	for d in extension/regression.diffs extension/output_iso/regression.diffs; do
		[ -s "$d" ] && { echo "-- $d"; head -c 20000 "$d"; }
	done
	return 0
}

# made_it NAME STATUS BEFORE: a suite's make exited STATUS; when that is a
# failure that printed no "not ok" line of its own (BEFORE of them were
# there already), say so: a test program that does not build reports
# nothing, and must not pass for a suite without failures.
made_it() {
	if [ "$2" -ne 0 ] && [ "$(grep -c '^not ok - ' "$results")" -eq "$3" ]; then
		echo "not ok - $1 (make exited $2)" | report
	fi
}

# The topologies of the topo suite: a cluster of 3 masters, a master with a
# replica watched by 3 sentinels (slow to fail over: the suite freezes the
# replica briefly), and 5 independent nodes for a quorum.
suite_topo() {
	echo "== topologies: Cluster, Sentinel, quorum (ASan/UBSan)"
	local i urls= pids=
	cluster_start tc 3 &&
		redis_start tm --repl-diskless-sync-delay 0 &&
		redis_start tr --replicaof 127.0.0.1 "$REDIS_PORT_tm" &&
		redis_wait_replica "$REDIS_PORT_tr" &&
		sentinel_start ts tm 3 5000 || { echo "not ok - topo_servers" | report; return; }
	for i in 1 2 3 4 5; do
		redis_start "tq$i" || { echo "not ok - topo_servers" | report; return; }
		urls+="$(redis_url "tq$i") "
		pids+="$(redis_pid "tq$i") "
	done
	local before
	before=$(grep -c '^not ok - ' "$results")
	FENCE_TEST_CLUSTER=$(cluster_url tc) \
		FENCE_TEST_CLUSTER_PORTS="$REDIS_PORT_tc1 $REDIS_PORT_tc2 $REDIS_PORT_tc3" \
		FENCE_TEST_SENTINEL=$(sentinel_url ts) \
		FENCE_TEST_SENTINEL_PORTS="$REDIS_PORT_tm $REDIS_PORT_tr" \
		FENCE_TEST_SENTINEL_PIDS="$REDIS_PID_tm $REDIS_PID_tr" \
		FENCE_TEST_SENTINELS_PIDS="$REDIS_PID_ts1 $REDIS_PID_ts2 $REDIS_PID_ts3" \
		FENCE_TEST_QUORUM=$urls FENCE_TEST_QUORUM_PIDS=$pids \
		limited topo "${FENCE_SUITE_TIMEOUT:-1500}" make -s -C client check-topo 2>&1 | report
	made_it topo "${PIPESTATUS[0]}" "$before"
}

# TLS-only servers with certificates made for the test: one with a good
# certificate, one that requires client certificates, three with
# certificates that must be refused (another host, expired, an unknown CA),
# one to freeze; a quorum of 3; a cluster of 3 masters (tls-cluster); a
# master and a replica (tls-replication) watched by 3 sentinels.
suite_tls() {
	echo "== TLS: one node, quorum, Cluster, Sentinel (ASan/UBSan)"
	local d=$FENCE_TMP/tls before
	# shellcheck disable=SC2030,SC2031 # tls_on sets these for this suite only
	local REDIS_TLS_SERVER REDIS_TLS_CLI REDIS_TLS_UNVERIFIED TLS_DIR
	tls_certs "$d" &&
		tls_on "$d" && redis_start tlsgood && redis_start tlsstop &&
		TLS_AUTH_CLIENTS=yes tls_on "$d" && redis_start tlsmtls &&
		tls_on "$d" wronghost && redis_start tlswrong &&
		tls_on "$d" expired && redis_start tlsexpired &&
		tls_on "$d" rogue && redis_start tlsrogue &&
		tls_on "$d" && redis_start tlsq1 && redis_start tlsq2 && redis_start tlsq3 &&
		cluster_start tlsc 3 --tls-cluster yes &&
		redis_start tlsmaster --repl-diskless-sync-delay 0 --tls-replication yes &&
		redis_start tlsreplica --replicaof 127.0.0.1 "$REDIS_PORT_tlsmaster" --tls-replication yes &&
		redis_wait_replica "$REDIS_PORT_tlsreplica" &&
		sentinel_start tlss tlsmaster 3 5000 || { echo "not ok - tls_servers" | report; tls_off; return; }
	tls_off
	before=$(grep -c '^not ok - ' "$results")
	FENCE_TEST_TLS_DIR=$d \
		FENCE_TEST_TLS_PORTS="$REDIS_PORT_tlsgood $REDIS_PORT_tlsmtls $REDIS_PORT_tlswrong $REDIS_PORT_tlsexpired $REDIS_PORT_tlsrogue $REDIS_PORT_tlsstop" \
		FENCE_TEST_TLS_STOP_PID=$REDIS_PID_tlsstop \
		FENCE_TEST_TLS_QUORUM="$REDIS_PORT_tlsq1 $REDIS_PORT_tlsq2 $REDIS_PORT_tlsq3" \
		FENCE_TEST_TLS_CLUSTER="$REDIS_PORT_tlsc1 $REDIS_PORT_tlsc2 $REDIS_PORT_tlsc3" \
		FENCE_TEST_TLS_SENTINEL="$REDIS_PORT_tlss1 $REDIS_PORT_tlss2 $REDIS_PORT_tlss3" \
		limited tls "${FENCE_SUITE_TIMEOUT:-1500}" make -s -C client check-tls 2>&1 | report
	made_it tls "${PIPESTATUS[0]}" "$before"
}

# The same tests against the SQL edition (test/hosted/tests lists them),
# in databases of their own on the same server.
suite_regress_sql() {
	echo "== pg_regress and isolation, SQL edition"
	local before n
	before=$(tests_so_far)
	n=$(sed -n 's/^\(regress\|isolation\): //p' test/hosted/tests | wc -w)
	FENCE_TMP=$FENCE_TMP limited regress_sql "${FENCE_SUITE_TIMEOUT:-900}" bash test/hosted/regress.sh 2>&1 |
		regress_lines | report
	counted regress_sql "$n" "$before"
	return 0
}

suite_drivers() {
	echo "== drivers"
	limited drivers "${FENCE_SUITE_TIMEOUT:-900}" bash test/drivers/run.sh 2>&1 | report
	echo "== drivers, SQL edition"
	FENCE_EDITION=sql limited drivers_sql "${FENCE_SUITE_TIMEOUT:-900}" bash test/drivers/run.sh 2>&1 |
		sed -u -E 's/^((not )?ok|skip) - driver_/\1 - driver_sql_/' | report
}

# The pgfence Python package (python/) on the libfence just built, with
# Debian's pytest; each test reported as "ok - python_NAME".
suite_python() {
	echo "== python (pgfence over libfence)"
	local before f
	local -a ignore=()
	before=$(grep -c '^not ok - ' "$results")
	# psycopg 3, which these modules use, where this Debian has none
	if ! /usr/bin/python3 -c 'import psycopg' 2>/dev/null && platform_lacks python3-psycopg; then
		for f in $(grep -lE 'psycopg\.(connect|Error)' python/tests/test_*.py); do
			ignore+=("--ignore=tests/${f##*/}")
			echo "skip - python_${f##*/} # $(platform_skip_reason python3-psycopg "psycopg 3")" | report
		done
	fi
	(cd python && PGFENCE_LIBFENCE=$top/client/libfence.so.2 PYTHONDONTWRITEBYTECODE=1 \
		limited python "${FENCE_SUITE_TIMEOUT:-900}" /usr/bin/python3 -m pytest -vv -p no:cacheprovider "${ignore[@]}" tests 2>&1) |
		sed -u -E \
			-e 's/^tests\/[a-z0-9_]+\.py::(test_)?([^ ]+) PASSED.*/ok - python_\2/' \
			-e 's/^tests\/[a-z0-9_]+\.py::(test_)?([^ ]+) (FAILED|ERROR).*/not ok - python_\2/' \
			-e 's/^tests\/[a-z0-9_]+\.py::(test_)?([^ ]+) SKIPPED \((.*)\) +\[ *[0-9]+%\]$/skip - python_\2 # \3/' \
			-e 's/^tests\/[a-z0-9_]+\.py::(test_)?([^ ]+) SKIPPED.*/skip - python_\2/' | report
	made_it python "${PIPESTATUS[0]}" "$before"
}

# The pgfence Node.js package (node/, its modules from "npm ci") on the
# libfence just built, with node's own test runner; each test reported as
# "ok - node_NAME".
suite_node() {
	echo "== node (pgfence over libfence)"
	local before
	before=$(grep -c '^not ok - ' "$results")
	# the package needs Node.js 18 (node --test, koffi; bookworm's); bullseye
	# has 12, and deps.sh leaves its modules out there (platform.sh)
	local why
	why=$(tool_skip node)
	if [ -n "$why" ]; then
		echo "skip - node # $why" | report
		return
	fi
	(cd node && PGFENCE_LIBFENCE=$top/client/libfence.so.2 \
		limited node "${FENCE_SUITE_TIMEOUT:-900}" node --test --test-force-exit --test-reporter=tap --test-concurrency=1 test/*.test.js 2>&1) |
		sed -u -E \
			-e 's/^ *ok [0-9]+ - ([a-z0-9_]+) # SKIP ?(.*)$/skip - node_\1 # \2/' \
			-e 's/^ *ok [0-9]+ - ([a-z0-9_]+)$/ok - node_\1/' \
			-e 's/^ *not ok [0-9]+ - ([a-z0-9_]+)( #.*)?$/not ok - node_\1/' | report
	made_it node "${PIPESTATUS[0]}" "$before"
}

# The Go package (go/) on the libfence just built, found through a
# libfence.pc of this tree (as a user's pkg-config finds the installed
# one), in GOPATH mode with Debian's pgx (golang-github-jackc-pgx-v4-dev):
# no module proxy is needed.  Each test reported as "ok - go_NAME".
suite_go() {
	echo "== go (pgfence over libfence, cgo)"
	local before pc=$FENCE_TMP/go-pkgconfig
	before=$(grep -c '^not ok - ' "$results")
	# the package needs Go 1.19 (bookworm's; bullseye has 1.15) and pgx
	# (platform.sh)
	local why
	why=$(tool_skip go)
	if [ -n "$why" ]; then
		echo "skip - go # $why" | report
		return
	fi
	go/tree-pkgconfig.sh "$pc"
	(cd go && PKG_CONFIG_PATH=$pc GO111MODULE=off GOPATH=/usr/share/gocode GOFLAGS= \
		CGO_CFLAGS="-g -O2 -Wall -Werror" \
		limited go "${FENCE_SUITE_TIMEOUT:-900}" go test -v -count=1 -timeout 600s -tags pgx ./... 2>&1) |
		sed -u -E \
			-e 's/^--- PASS: Test([^ ]+).*/ok - go_\1/' \
			-e 's/^--- FAIL: Test([^ ]+).*/not ok - go_\1/' \
			-e 's/^--- SKIP: Test([^ ]+).*/skip - go_\1/' | report
	made_it go "${PIPESTATUS[0]}" "$before"
	# "go test ./..." as a user runs it: module mode, nothing fetched (the
	# tests that need pgx are behind the build tag "pgx")
	if (cd go && PKG_CONFIG_PATH=$pc GO111MODULE=on GOPROXY=off GOFLAGS= \
		timeout 300 go test -count=1 -run '^$' ./... >"$FENCE_TMP/go-module.log" 2>&1); then
		echo "ok - go_module_mode_builds"
	else
		echo "not ok - go_module_mode_builds"
		tail -n 20 "$FENCE_TMP/go-module.log"
	fi | report
}

# e2e_one SCRIPT NAME: run one end-to-end test and report it as NAME.
e2e_one() {
	local rc limit=${FENCE_E2E_TIMEOUT:-600}
	timeout -k 20 "$limit" bash "$1" >"$FENCE_TMP/$2.log" 2>&1
	rc=$?
	case $rc in
	0) echo "ok - $2" | report ;;
	77) echo "skip - $2 # $(sed -n 's/.*SKIP: //p' "$FENCE_TMP/$2.log" | tail -n 1)" | report ;;
	124 | 137) echo "not ok - $2 (timed out after $limit s)" | report
	   tail -n 150 "$FENCE_TMP/$2.log" ;;
	*) echo "not ok - $2 (exit $rc)" | report
	   tail -n 150 "$FENCE_TMP/$2.log" ;;
	esac
}

# client_one NAME: one of the client's test programs or shell tests
# (client/Makefile's CHECK), on the sanitized build.
client_one() {
	local before
	before=$(grep -c '^not ok - ' "$results")
	limited "client_$1" "${FENCE_SUITE_TIMEOUT:-1500}" make -s -C client check CHECK="$1" 2>&1 | report
	made_it "client_$1" "${PIPESTATUS[0]}" "$before"
}

# The units, in the order their output is printed: a suite, or each of
# the client's programs (client:NAME) and end-to-end tests (e2e:SCRIPT:NAME)
# on its own.
units=() picked=
for s in ${FENCE_SUITES:-regress regress_sql client topo tls drivers python node go e2e}; do
	case $s in
	client)
		for t in $(sed -n 's/^CHECK_\(PROGRAMS\|SCRIPTS\) = //p' client/Makefile); do
			units+=("client:$t")
		done ;;
	e2e)
		# test/e2e/PURPOSE/NAME.sh (faults, topologies, features, docs,
		# ops); lib/ holds the helpers
		for t in test/e2e/*/[a-z0-9]*.sh; do
			[ -e "$t" ] || continue
			dir=${t%/*} dir=${dir##*/}
			[ "$dir" != lib ] || continue
			name=$(basename "$t" .sh)
			if [ -n "${FENCE_E2E:-}" ]; then
				want=0
				for p in $FENCE_E2E; do
					[[ $name == "$p"* || $dir == "$p" ]] || continue
					want=1 picked+=" $p "
				done
				[ $want = 1 ] || continue
			fi
			units+=("e2e:$t:$name")
			# F1 and F6 also against the SQL edition of hosted PostgreSQL
			case $name in
			f01_* | f06_*) units+=("e2e:$t:${name}_sql") ;;
			esac
		done
		# a pattern that picks nothing is a typing slip ("f1" for f01),
		# not a run of no test
		for p in ${FENCE_E2E:-}; do
			[[ $picked == *" $p "* ]] || { echo "run: FENCE_E2E=$p picks no end-to-end test" >&2; exit 2; }
		done ;;
	*)
		declare -F "suite_$s" >/dev/null || { echo "run: no suite $s" >&2; exit 2; }
		units+=("suite:$s") ;;
	esac
done

# unit_name UNIT: what the timing table calls it.
unit_name() {
	case $1 in
	suite:*) echo "${1#suite:}" ;;
	client:*) echo "client_${1#client:}" ;;
	e2e:*) echo "${1##*:}" ;;
	esac
}

# unit_run UNIT: run it (in a lane, on that lane's servers).
unit_run() {
	local t
	case $1 in
	suite:*) "suite_${1#suite:}" ;;
	client:*) client_one "${1#client:}" ;;
	e2e:*)
		t=${1#e2e:}
		case ${t##*:} in
		*_sql) FENCE_EDITION=sql e2e_one "${t%:*}" "${t##*:}" ;;
		*) e2e_one "${t%:*}" "${t##*:}" ;;
		esac ;;
	esac
}

# The lanes: FENCE_JOBS of them (default 4; the tests mostly wait on TTLs
# and timers, not on the CPU), each with a PostgreSQL and a Redis of its
# own and a range of ports of its own, take the next unit from one queue,
# longest first.  What cannot share the machine with others runs after
# them, alone (FENCE_SERIAL, unit names).
jobs=${FENCE_JOBS:-4}
# longest first (measured, 2026-12-07): a long unit started last would be
# the tail; the rest in their order
slow='client:cli client:cli_secrets suite:drivers suite:regress_sql client:cli_ux client:cli_ops
	suite:python suite:node suite:go wait_topologies interop client:cli_servers topo_sentinel transfers
	wait_failover_sentinel topo_quorum_backstop f09_bad_input client:cli_set dump_restore
	suite:regress client:cli_idle f08_concurrent_advance upgrade_preloaded suite:topo
	f04_clock_jump f12_async_failover wait_failover_cluster client:test_fence'
# Alone, after the lanes (FENCE_SERIAL="" for none): tests of timing that failed beside the others on
# a loaded 2-core machine (TLS handshakes timed out under ASan; topo_cluster
# and topo_quorum's helpers outwaited their bounds).
serial=" ${FENCE_SERIAL-tls topo_cluster topo_quorum} "
queue=() queue_serial=()
for u in $slow; do
	for i in "${!units[@]}"; do
		[ "${units[i]}" = "$u" ] || [ "$(unit_name "${units[i]}")" = "$u" ] && queue+=("$i")
	done
done
for i in "${!units[@]}"; do
	[[ " ${queue[*]} " == *" $i "* ]] || queue+=("$i")
done
q=()
for i in "${queue[@]}"; do
	if [[ $serial == *" $(unit_name "${units[i]}") "* ]]; then queue_serial+=("$i"); else q+=("$i"); fi
done
queue=("${q[@]}")

# needs_build UNIT: the unit runs the client's sanitized tests, which the
# build below makes once, while the lanes run other units.
needs_build() {
	case $1 in client:* | suite:topo | suite:tls) return 0 ;; esac
	return 1
}

# next_unit QUEUEFILE: claim and print the index of the first unit of the
# queue whose indices (one a line) QUEUEFILE holds that no lane has taken
# and that can run (its build done); fail when none is left.
next_unit() {
	local i pending
	while :; do
		pending=
		while read -r i; do
			[ -e "$runs/$i.taken" ] && continue
			if needs_build "${units[i]}" && [ ! -e "$runs/build.done" ]; then
				pending=1
				continue
			fi
			# mkdir is atomic: one lane alone claims a unit
			mkdir "$runs/$i.taken" 2>/dev/null && { echo "$i"; return 0; }
		done <"$1"
		[ -n "$pending" ] || return 1
		sleep 0.5
	done
}

# lane W QUEUEFILE: a lane's servers, then units of the queue until it is
# empty.  Each unit's output goes to $runs/I.out, its result lines to
# $runs/I.res, its seconds and lane to $runs/I.time; $runs/I.done last.
lane() {
	local w=$1 qf=$2 i t0 ok=1
	# ports of its own: two lanes never pick the same spare one.  The
	# lanes share 12000-21999 between them; a Cluster node's bus port is
	# its port + 10000 (test/lib/servers.sh cluster_port), so 22000-31999
	# holds only the bus ports of the same lane's range.  The serial lane
	# (jobs + 1) starts once the others are done and takes lane 1's range;
	# with no other lane (only serial units picked) it is the one lane.
	local lanes_at_once=$((jobs > 0 ? jobs : 1))
	FENCE_PORT_SPAN=$((10000 / lanes_at_once))
	FENCE_PORT_BASE=$((12000 + (w - 1) % lanes_at_once * FENCE_PORT_SPAN))
	export FENCE_PORT_BASE FENCE_PORT_SPAN
	servers_init
	# fence.stats counts in shared memory, which needs the library
	# preloaded; test/e2e/features/stats_preload.sh covers a server without it.
	# Every suite names resources of its own on this one server, more than
	# the default capacity of 1000: past it, new resources are counted
	# together in the overflow row, and the tests that read a resource's
	# own row would find none.
	{
		pg_start -c shared_preload_libraries=fence -c fence.stats_max_resources=20000 &&
			redis_start main
	} >"$runs/lane$w.log" 2>&1 || ok=
	export FENCE_REDIS_URL
	FENCE_REDIS_URL=$(redis_url main)
	while i=$(next_unit "$qf"); do
		results=$runs/$i.res
		: >"$results"
		t0=$EPOCHREALTIME
		if [ -n "$ok" ]; then
			unit_run "${units[i]}" >"$runs/$i.out" 2>&1
		else
			{ cat "$runs/lane$w.log"; echo "not ok - $(unit_name "${units[i]}") (lane $w: its servers did not start)" | report; } >"$runs/$i.out" 2>&1
		fi
		awk -v a="$t0" -v b="$EPOCHREALTIME" -v w="$w" 'BEGIN { printf "%.1f %s\n", b - a, w }' >"$runs/$i.time"
		: >"$runs/$i.done"
	done
	servers_stop
}

# The build the client's units share, once, before the lanes start: make
# in one directory from two lanes at once would race.  Not beside the
# lanes: on 2 loaded cores the build then took 467 s instead of 69, and
# the longest units, the client's, started last.
build=
for u in "${units[@]}"; do needs_build "$u" && build=1; done
if [ -n "$build" ]; then
	t0=$EPOCHREALTIME
	make -s -j"$(nproc)" -C client check-build >"$runs/build.log" 2>&1
	awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f\n", b - a }' >"$runs/build.time"
fi
: >"$runs/build.done"

start_all=$EPOCHREALTIME
printf '%s\n' "${queue[@]}" >"$runs/queue"
printf '%s\n' "${queue_serial[@]}" | grep . >"$runs/queue_serial"
lanes=()
[ ${#queue[@]} -gt 0 ] || jobs=0
for w in $(seq "$jobs"); do
	lane "$w" "$runs/queue" &
	lanes+=($!)
done
serial_lane=
# the serial units: once the other lanes are done, in one lane
if [ ${#queue_serial[@]} -gt 0 ]; then
	(
		for p in "${lanes[@]}"; do
			while kill -0 "$p" 2>/dev/null; do sleep 1; done
		done
		lane $((jobs + 1)) "$runs/queue_serial"
	) &
	serial_lane=$!
fi

# Print each unit's output in the fixed order, as soon as it and those
# before it are done.
group=
for i in "${!units[@]}"; do
	while [ ! -e "$runs/$i.done" ]; do
		alive=
		for p in "${lanes[@]}" $serial_lane; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ -n "$alive" ] || break
		sleep 0.5
	done
	u=${units[i]}
	if [ -n "$build" ] && needs_build "$u"; then
		echo "== build of the client's tests (ASan/UBSan)"
		tail -n 40 "$runs/build.log" 2>/dev/null
		echo "# time build: $(cat "$runs/build.time" 2>/dev/null) s (before the lanes)"
		build=
	fi
	case ${u%%:*} in
	client) [ "$group" = client ] || echo "== client (ASan/UBSan)" ;;
	e2e) [ "$group" = e2e ] || echo "== end-to-end" ;;
	esac
	group=${u%%:*}
	if [ -e "$runs/$i.done" ]; then
		cat "$runs/$i.out"
		cat "$runs/$i.res" >>"$all_results"
		read -r secs w <"$runs/$i.time"
		echo "# time $(unit_name "$u"): $secs s (lane $w)"
	else
		echo "not ok - $(unit_name "$u") (never ran: its lane ended)" | tee -a "$all_results"
	fi
done
wait
results=$all_results
wall=$(awk -v a="$start_all" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')

# The timing table: every unit's seconds, the slowest first, and their sum
# (what one lane alone would take, roughly) against the wall time.
echo
echo "== times (seconds; lane)"
for i in "${!units[@]}"; do
	[ -e "$runs/$i.time" ] || continue
	read -r secs w <"$runs/$i.time"
	printf '%8s  %s  %s\n' "$secs" "$w" "$(unit_name "${units[i]}")"
done | sort -rn | awk -v wall="$wall" -v lanes="$jobs" '{ sum += $1; printf "%s", $0; if (NR % 2 == 0) printf "\n"; else printf "%*s", 44 - length($0), "" }
	END { if (NR % 2) printf "\n"; printf "sum %.0f s, wall %s s, %s lanes\n", sum, wall, lanes }'

# leftovers: every process started here is gone once the servers are
# stopped; one that is not (a server a test forgot, a listener whose pid
# was lost) is a failure, and is killed.  A few seconds' grace for those
# being reaped.
leftovers() {
	local p i found
	for i in $(seq 50); do
		found=()
		for p in /proc/[0-9]*; do
			p=${p#/proc/}
			[ "$p" = $$ ] || [ "$p" = "$BASHPID" ] && continue
			grep -qz "^FENCE_RUN_MARK=$FENCE_RUN_MARK\$" "/proc/$p/environ" 2>/dev/null || continue
			# this shell's own helpers (the command substitution, grep)
			[ "$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null)" = $$ ] && continue
			[ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" = Z ] && continue
			found+=("$p")
		done
		[ ${#found[@]} -eq 0 ] && return 0
		sleep 0.2
	done
	for p in "${found[@]}"; do
		echo "#   left running: $p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-120)"
		kill -9 "$p" 2>/dev/null
	done
	echo "not ok - leftover_processes (${#found[@]} still running after the suites: ${found[*]})" | report
}
leftovers

# Skips for a dependency that "make test" installs (test/lib/deps.sh) hide
# a test that never ran: under CI they fail the run (platform.sh).
passed=$(grep -c '^ok - ' "$results")
skipped=$(grep -c '^skip - ' "$results")
[ -z "${CI:-}" ] || ci_dep_failures "$results" | tee -a "$results"
failed=$(grep -c '^not ok - ' "$results")
echo
if [ "$skipped" -gt 0 ]; then
	# "NAME (REASON); ..." with the same reason said once for its tests
	skips=$(sed -n 's/^skip - \([^ ]*\)\( # \(.*\)\)\{0,1\}$/\3\t\1/p' "$results" |
		awk -F '\t' '{ r = ($1 == "" ? "no reason given" : $1); if (!(r in n)) order[++k] = r; n[r] = n[r] (n[r] == "" ? "" : " ") $2 }
			END { for (i = 1; i <= k; i++) printf "%s%s: %s", (i > 1 ? "; " : ""), order[i], n[order[i]] }')
	echo "$passed passed, $failed failed, $skipped skipped ($skips)"
else
	echo "$passed passed, $failed failed, $skipped skipped"
fi
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
