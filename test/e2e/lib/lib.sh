# test/e2e/lib/lib.sh: shared helpers of the end-to-end fault tests.
#
# test/run.sh runs every test/e2e/PURPOSE/*.sh as a test, PURPOSE one of
# faults (F1-F12: a fault and a history checked), topologies (Cluster,
# Sentinel, quorum; waiters riding failovers), features (one feature end to
# end: poolers, replication, the SQL edition, ACLs, sets of leases ...),
# docs (the documentation's blocks, signatures, links and queries run) and
# ops (install, upgrade, backups); the helpers (this file, worker.sh,
# wallclock_holder.sh, proxy.py, check_history.py) live in lib/ so that
# they are not taken for tests.
#
# A test sources this file and calls e2e_init NAME first.  test/run.sh runs
# the tests against its shared servers (PG* variables, FENCE_REDIS_URL,
# FENCE_BIN); run on its own, a test starts throwaway servers of its own.
# Exit status: 0 pass, 77 skip, anything else fail.
#
# Histories: every event of a test is one line of $HIST (see
# check_history.py for the format and what is checked).  The order of
# accepted writes comes from PostgreSQL, not from clocks: each write inserts
# a row into the test's log table in the same transaction, after it wrote
# the data row, and the log's serial is dumped as the commit sequence.
#
# Waiting: nothing here sleeps and hopes.  wait_for SECS CMD (the shell
# suites' harness, test/lib/harness.sh, which servers.sh sources) polls a
# condition every 50 ms with a bound; here a wait past its bound fails the
# test (harness_timeout below), saying what it waited for.

set -euo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$E2E_DIR/../../.." && pwd)
# shellcheck source=../lib/servers.sh
. "$TOP/test/lib/servers.sh"

E2E_PIDS=()
E2E_OWN_SERVERS=0
E2E_TIMEOUT=${E2E_TIMEOUT:-240}
# /usr/bin/python3 (Debian's) starts faster than a version manager's shim
E2E_PY=${E2E_PY:-$(command -v /usr/bin/python3 || command -v python3)}

# e2e_init NAME: work directory, history file, servers, extension; with
# FENCE_EDITION=sql, the SQL edition (sql/hosted/) in a database of its own.
e2e_init() {
	E2E_NAME=$1
	FENCE_TMP=$(mktemp -d "${TMPDIR:-/tmp}/pgfence-$E2E_NAME.XXXXXX")
	chmod 755 "$FENCE_TMP"
	WORK=$FENCE_TMP
	HIST=$WORK/history
	: >"$HIST"
	trap e2e_cleanup EXIT
	trap 'exit 130' INT
	trap 'say "stopped by SIGTERM (or the ${E2E_TIMEOUT}s watchdog)"; exit 143' TERM
	# set -e ends the test at a command that failed where nothing checked
	# it (a grep -c that counted 0, say): remember which, so that the test
	# still says why it failed (e2e_cleanup); -E: in functions too
	set -E
	trap 'E2E_ERR="${BASH_SOURCE[0]##*/}:$LINENO: $BASH_COMMAND (exit $?)"' ERR
	# every test is bounded as a whole, too
	(sleep "$E2E_TIMEOUT" && kill -TERM $$) 2>/dev/null &
	E2E_PIDS+=("$!")
	if [ -z "${PGPORT:-}" ] || [ -z "${FENCE_REDIS_URL:-}" ]; then
		E2E_OWN_SERVERS=1
		pg_start
		redis_start main
		FENCE_REDIS_URL=$(redis_url main)
	fi
	export FENCE_REDIS_URL PGHOST PGPORT PGUSER PGDATABASE
	unset PGOPTIONS
	FENCE_BIN=${FENCE_BIN:-$TOP/client/fence}
	PGCONN="host=$PGHOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE"
	if [ "${FENCE_EDITION:-c}" = sql ]; then
		# the SQL edition of hosted PostgreSQL, in a database of its own
		PGDATABASE=fence_sql_$$
		createdb -T template0 "$PGDATABASE" &&
			sql -1 -f "$TOP/sql/hosted/fence_hosted.sql" >/dev/null ||
			fail "could not install the SQL edition"
		PGCONN="host=$PGHOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE"
		say "SQL edition in database $PGDATABASE"
	else
		sql -c 'CREATE EXTENSION IF NOT EXISTS fence' 2>/dev/null ||
			sql -c 'CREATE EXTENSION IF NOT EXISTS fence'
	fi
	say "work dir $WORK"
}

# A test may set E2E_ON_EXIT to a command run first on exit (say, to drop
# roles it made); the exit status is kept.
E2E_ON_EXIT=
e2e_cleanup() {
	local rc=$? pid
	trap - EXIT ERR
	# a failure must say why: an exit that no fail() announced names the
	# command set -e stopped at
	case $rc in
	0 | 77 | 130 | 143) ;;
	*) [ -n "$E2E_FAILED" ] ||
		fail_quiet "exited $rc without a FAIL line; the last command that failed: ${E2E_ERR:-none recorded}" ;;
	esac
	[ -z "$E2E_ON_EXIT" ] || $E2E_ON_EXIT >/dev/null 2>&1 || true
	# before anything is killed; shown after the history, nearer the tail
	[ -z "$E2E_SNAPSHOT" ] || snapshot >"$WORK/snapshot" 2>&1
	# (braces: keep bash's "Killed" job notices out of the log)
	{
		for pid in "${E2E_PIDS[@]}" $(cat "$WORK"/*.pid 2>/dev/null); do
			kill -CONT "$pid" || true
			pkill -9 -P "$pid" || true
			kill -9 "$pid" || true
		done
		for pid in "${E2E_PIDS[@]}"; do wait "$pid" || true; done
	} 2>/dev/null
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && [ -s "$HIST" ]; then
		echo "--- history ($HIST)"
		cat "$HIST"
		[ ! -s "$WORK/snapshot" ] || tail -n 400 "$WORK/snapshot"
		# the history is long: say again what failed, where a tail shows it
		[ -z "$E2E_FAILED" ] || say "FAIL: $E2E_FAILED"
	fi
	for pid in "${E2E_PG_NODES[@]}"; do
		[ ! -f "$pid/postmaster.pid" ] ||
			as_pg "$PG_BINDIR/pg_ctl" -D "$pid" -m immediate -w stop >/dev/null 2>&1 || true
	done
	# servers.sh stops our own Redis servers and, if we started it, PostgreSQL
	[ "$E2E_OWN_SERVERS" = 1 ] || FENCE_PGDATA=
	FENCE_KEEP_TMP=${FENCE_KEEP_TMP:-}
	servers_stop
	exit "$rc"
}

# PostgreSQL servers of a test's own (a crash, a standby), apart from the
# shared one: pg_node_init NAME [-c name=value ...] makes $WORK/NAME with
# initdb and its settings, pg_node_up NAME starts it and sets PORT_<NAME>;
# pg_node_crash NAME kills every process of it with SIGKILL, by pid (the
# postmaster's, read from postmaster.pid, and its children's), as a crash
# of the machine's PostgreSQL would end them.  Stopped on exit.
E2E_PG_NODES=()
pg_node_init() {
	local name=$1 dir=$WORK/$1 port opt
	shift
	port=$(spare_port)
	mkdir -p "$dir" "$WORK/sock"
	[ "$(id -u)" -ne 0 ] || chown postgres: "$dir" "$WORK/sock"
	as_pg "$PG_BINDIR/initdb" -D "$dir" -U postgres -A trust --no-sync -E UTF8 \
		--locale=C >"$WORK/$name.initdb.log" 2>&1 || { cat "$WORK/$name.initdb.log"; return 1; }
	pg_node_conf "$name" "$port" "$@"
}
# pg_node_conf NAME PORT [-c name=value ...]: the settings of a node.
pg_node_conf() {
	local name=$1 dir=$WORK/$1 port=$2 opt
	shift 2
	cat >>"$dir/postgresql.conf" <<-CONF
		port = $port
		listen_addresses = '127.0.0.1'
		unix_socket_directories = '$WORK/sock'
		log_min_messages = warning
		log_line_prefix = '%m [%p] '
	CONF
	for opt in "$@"; do
		[ "$opt" = -c ] && continue
		echo "${opt%%=*} = '${opt#*=}'" >>"$dir/postgresql.conf"
	done
	printf -v "PORT_$name" %s "$port"
}
pg_node_up() {
	local dir=$WORK/$1
	E2E_PG_NODES+=("$dir")
	touch "$WORK/$1.log"
	[ "$(id -u)" -ne 0 ] || chown postgres: "$WORK/$1.log"
	as_pg "$PG_BINDIR/pg_ctl" -D "$dir" -l "$WORK/$1.log" -w -t 60 start >/dev/null ||
		{ cat "$WORK/$1.log"; return 1; }
}
pg_node_crash() {
	local dir=$WORK/$1 pm kids
	pm=$(head -n 1 "$dir/postmaster.pid")
	kids=$(pgrep -P "$pm" || true)
	# shellcheck disable=SC2086 # a list of pids
	kill -9 "$pm" $kids
	while kill -0 "$pm" 2>/dev/null; do sleep 0.05; done
	for pm in $kids; do
		while kill -0 "$pm" 2>/dev/null; do sleep 0.05; done
	done
}
# node_sql NAME ARG...: psql on node NAME.
node_sql() {
	local name=$1 port
	shift
	port=PORT_$name
	psql -X -qAt -v ON_ERROR_STOP=1 -h "$WORK/sock" -p "${!port}" -U postgres -d postgres "$@"
}

# a wait_for past its bound ends the test, with a picture of what was
# still running: a test that times out on CI cannot be rerun to see where
# a worker was stuck
harness_timeout() {
	E2E_SNAPSHOT=1
	fail "$*"
}
E2E_SNAPSHOT=

# descendants PID: the process ids under PID, depth first.
descendants() {
	local kid
	for kid in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		echo "$kid"
		descendants "$kid"
	done
}

# snapshot: every process this test started, with its state and where it
# sleeps, the fence processes' threads' stacks (gdb, when installed), and
# the last lines the workers wrote to stderr.
snapshot() {
	local pids pid f
	pids=$(descendants $$ | tr '\n' ',')
	echo "--- processes still running"
	[ -z "$pids" ] || ps -o pid,ppid,stat,etimes,wchan:22,args -p "${pids%,}" || true
	if command -v gdb >/dev/null; then
		for pid in ${pids//,/ }; do
			[ "$(cat /proc/"$pid"/comm 2>/dev/null)" = fence ] || continue
			echo "--- fence $pid: $(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null)"
			timeout 20 gdb -p "$pid" -batch -nx -ex 'thread apply all bt 12' 2>/dev/null |
				grep -E '^(Thread|#)' || true
		done
	fi
	for f in "$WORK"/*.err; do
		[ -s "$f" ] || continue
		echo "--- $(basename "$f") (last lines)"
		tail -n 8 "$f"
	done
}

say() { printf '%s %s: %s\n' "$(date +%T.%3N)" "${E2E_NAME:-e2e}" "$*"; }
E2E_FAILED=
fail() {
	fail_quiet "$@"
	exit 1
}
# fail_quiet MSG: fail()'s record and line without its exit (e2e_cleanup)
fail_quiet() {
	E2E_FAILED=$*
	say "FAIL: $*"
}
skip() { say "SKIP: $*"; exit 77; }
now_ms() { date +%s%3N; }

# need_client: skip unless the fence command has been built.
need_client() {
	[ -x "$FENCE_BIN" ] || skip "no fence command at $FENCE_BIN (build client/ first)"
}

# have_guard: true when the extension has the guard trigger (fence.protect).
have_guard() {
	[ "$(sql -c "SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE n.nspname = 'fence' AND p.proname = 'protect'")" -gt 0 ]
}

# guarded_mode: how the fault tests carry the token into a write: "guard"
# (plain UPDATE on a table under fence.protect) once the extension has the
# guard trigger, else "advance" (fence.advance in the same transaction).
guarded_mode() {
	if have_guard; then echo guard; else echo advance; fi
}

# protect_if MODE PREFIX RESOURCE: put PREFIX_stock under the guard when
# MODE is guard.
protect_if() {
	[ "$1" = guard ] || return 0
	sql -c "SELECT fence.protect('${2}_stock', $(sqlq "$3"))" >/dev/null
}

# export_lease: export the FENCE_* variables that "eval $(fence acquire)"
# set, and PGOPTIONS the way "fence run" does.
export_lease() {
	export FENCE_RESOURCE FENCE_TOKEN FENCE_OWNER
	export PGOPTIONS="-c fence.resource=$FENCE_RESOURCE -c fence.token=$FENCE_TOKEN -c fence.owner=$FENCE_OWNER"
}
unexport_lease() {
	unset FENCE_RESOURCE FENCE_TOKEN FENCE_OWNER PGOPTIONS
}

sql() { psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }
sqlq() { local s=${1//\'/\'\'}; printf "'%s'" "$s"; }

# sqlstate CMD...: run a psql command, print the SQLSTATE it failed with
# ("00000" when it succeeded).
sqlstate() {
	local err
	if err=$(psql -X -qAt -v ON_ERROR_STOP=1 -v VERBOSITY=verbose "$@" 2>&1 >/dev/null); then
		echo 00000
	else
		# a here-string, not "echo |": grep -m1 may exit before echo has
		# written everything, and SIGPIPE would fail the pipe (pipefail)
		grep -o -m1 -E '(ERROR|FATAL):  [0-9A-Z]{5}' <<<"$err" | awk '{print $2}' || echo unknown
	fi
}

# hist WORKER OP RESOURCE TOKEN OWNER START END OUTCOME [KEY=VALUE...]
hist() {
	local IFS=$'\t'
	printf '%s\n' "$*" >>"$HIST"
}

# A stock table with one row (id 1) and the log table of accepted writes.
# make_tables PREFIX QTY
make_tables() {
	sql <<-SQL
		SET client_min_messages = warning;
		DROP TABLE IF EXISTS ${1}_stock, ${1}_log;
		CREATE TABLE ${1}_stock (id int PRIMARY KEY, qty int NOT NULL);
		INSERT INTO ${1}_stock VALUES (1, $2);
		CREATE TABLE ${1}_log (
			seq bigserial PRIMARY KEY, worker text, resource text,
			token bigint, owner text, xid bigint DEFAULT txid_current());
	SQL
}

qty() { sql -c "SELECT qty FROM ${1}_stock WHERE id = 1"; }

# dump_commits PREFIX: the committed writes, in commit order, into $HIST.
dump_commits() {
	sql -F $'\t' -c "SELECT worker, 'commit', resource, token, coalesce(owner, '-'),
		'-', '-', 'committed', 'seq=' || seq, 'xid=' || xid FROM ${1}_log ORDER BY seq" >>"$HIST"
}

# record_counter PREFIX RESOURCE INITIAL STEP: the counter's end state.
record_counter() {
	hist check counter "$2" - - - - "value=$(qty "$1")" "initial=$3" "final=$(qty "$1")" "step=$4"
}

# check_ok: the history passes the checker.
check_ok() {
	say "checker on $HIST"
	"$E2E_PY" "$E2E_DIR/check_history.py" "$HIST" | sed 's/^/    /'
	[ "${PIPESTATUS[0]}" -eq 0 ] || fail "the checker found a violation"
}

# check_fails KIND...: the checker reports each violation KIND (negative
# control: the hazard must show, or the test proves nothing).
check_fails() {
	local out rc kind
	say "checker on $HIST (negative control, must fail)"
	set +e
	out=$("$E2E_PY" "$E2E_DIR/check_history.py" "$HIST")
	rc=$?
	set -e
	echo "$out" | sed 's/^/    /'
	[ "$rc" -eq 1 ] || fail "negative control: checker exit $rc, expected 1 (the hazard did not show)"
	for kind in "$@"; do
		grep -q "^violation $kind:" <<<"$out" || fail "negative control: no $kind violation"
	done
}

# new_history: start a fresh history (a test with several phases).
new_history() {
	HIST=$WORK/history.$1
	: >"$HIST"
}

# kill9 PID...: SIGKILL background processes of this shell and reap them
# quietly (no "Killed" job notice).
kill9() {
	local pid
	{
		for pid in "$@"; do kill -9 "$pid" || true; done
		for pid in "$@"; do wait "$pid" || true; done
	} 2>/dev/null
}

# --- Redis

rkeys() { redis-cli -u "$FENCE_REDIS_URL" --raw KEYS "$1"; }
# lock_owner [URL] RESOURCE, lock_gone [URL] RESOURCE
lock_owner() {
	if [ $# = 2 ]; then rcli "$1" GET "$(fence_key "$2" lock)"; else rcli GET "$(fence_key "$1" lock)"; fi
}
lock_gone() { [ "$(lock_owner "$@")" = "" ]; }

# --- workers

# start_worker NAME RESOURCE MODE [FENCE-RUN OPTION...]: start
# "fence run RESOURCE OPTIONS -- worker.sh" in the background.  The worker
# is configured by the variables TBL (table prefix), PAUSE, HOLD, WRITES,
# GAP_MS, STEP (see worker.sh).  Sets LAST_PID to the fence process.
start_worker() {
	local name=$1 res=$2 mode=$3
	shift 3
	W=$name RES_HINT=$res MODE=$mode STATE=$WORK HIST=$HIST \
		"$FENCE_BIN" run "$res" "$@" -- bash "$E2E_DIR/worker.sh" \
		>"$WORK/$name.out" 2>"$WORK/$name.err" &
	LAST_PID=$!
	E2E_PIDS+=("$LAST_PID")
	echo "$LAST_PID" >"$WORK/$name.fence.pid"
}

# start_plain_worker NAME MODE: the same worker without "fence run" (no
# heartbeat, nothing stops it): the caller exports FENCE_RESOURCE,
# FENCE_TOKEN and FENCE_OWNER (say, from "fence acquire").
start_plain_worker() {
	W=$1 MODE=$2 STATE=$WORK HIST=$HIST bash "$E2E_DIR/worker.sh" \
		>"$WORK/$1.out" 2>"$WORK/$1.err" &
	LAST_PID=$!
	E2E_PIDS+=("$LAST_PID")
}

# start_stalled NAME RESOURCE MODE TTL [FENCE-ACQUIRE OPTION...]: take a
# lease with "fence acquire" (no heartbeat), start the plain worker NAME
# with it (TBL as for start_worker), and wait until it has read; it then
# stalls until "go NAME", long after its lease is gone.
start_stalled() {
	local name=$1 res=$2 mode=$3 ttl=$4
	shift 4
	FENCE_TOKEN=
	eval "$("$FENCE_BIN" acquire "$res" --ttl "$ttl" "$@")"
	export_lease
	PAUSE=1 start_plain_worker "$name" "$mode"
	unexport_lease
	wait_for 20 state_is "$name" read
}

# start_loop_worker NAME RESOURCE MODE [FENCE-RUN OPTION...]: run "fence
# run RESOURCE OPTIONS -- worker.sh" again and again (workers NAME-1,
# NAME-2, ...) until stop_loop_workers; each run's exit status goes into
# the history ("run" events).  Whatever a run ends with (lease lost, Redis
# failing over, a write refused), the next one starts: the history and
# the counter say whether anything went wrong.  Configured like
# start_worker (TBL, WRITES, GAP_MS, STEP).
start_loop_worker() {
	local name=$1 res=$2 mode=$3
	shift 3
	(
		i=0
		while [ ! -e "$WORK/loop.stop" ]; do
			i=$((i + 1))
			# (|| rc=: under set -e the first run that failed would end
			# the loop unseen, and a test meant for three workers would go
			# on with fewer, or none)
			rc=0
			W=$name-$i RES_HINT=$res MODE=$mode STATE=$WORK HIST=$HIST \
				"$FENCE_BIN" run "$res" "$@" -- bash "$E2E_DIR/worker.sh" \
				>>"$WORK/$name.out" 2>>"$WORK/$name.err" || rc=$?
			hist "$name-$i" run "$res" - - "$(now_ms)" - "exit=$rc"
			sleep 0.02
		done
	) &
	E2E_PIDS+=("$!")
	LOOP_PIDS+=("$!")
}
LOOP_PIDS=()

# stop_loop_workers: let the current runs finish, start no more (60 s).
stop_loop_workers() {
	local pid
	# a loop runs until told to stop: one that ended by itself lost workers
	for pid in "${LOOP_PIDS[@]}"; do
		if dead "$pid"; then
			fail "a loop worker (pid $pid) ended before it was told to stop"
		fi
	done
	touch "$WORK/loop.stop"
	for pid in "${LOOP_PIDS[@]}"; do wait_exit "$pid" 60; done
	LOOP_PIDS=()
	rm -f "$WORK/loop.stop"
}

# accepted RESOURCE: how many writes of RESOURCE the workers saw accepted.
accepted() { grep -c "	write	$1	.*	ok	" "$HIST" || true; }
accepted_at_least() { [ "$(accepted "$1")" -ge "$2" ]; }

# state_is NAME STATE: the worker has reached STATE (read, wrote, done).
state_is() { [ -e "$WORK/$1.$2" ]; }
worker_pid() { cat "$WORK/$1.pid"; }
# psql_pid NAME: the worker's psql (its libpq client)
psql_pid() { pgrep -P "$(worker_pid "$1")" -x psql; }
go() { touch "$WORK/$1.go"; }
quit() { touch "$WORK/$1.quit"; }
outcome() { cat "$WORK/$1.wrote" 2>/dev/null; }
token_of() { sed -n 's/^token=//p' "$WORK/$1.env"; }
owner_of() { sed -n 's/^owner=//p' "$WORK/$1.env"; }

# wait_exit PID TIMEOUT_S: wait for a background process of this shell;
# its exit status goes to RC (not printed: a subshell cannot wait for it).
wait_exit() {
	local pid=$1 limit=$2 t0=$SECONDS
	while kill -0 "$pid" 2>/dev/null; do
		if ((SECONDS - t0 >= limit)); then
			# a stopped or zombie process: let wait decide
			[ "$(ps -o stat= -p "$pid" 2>/dev/null | cut -c1)" = Z ] && break
			fail "process $pid still running after ${limit}s"
		fi
		sleep 0.05
	done
	RC=0
	wait "$pid" || RC=$?
}

# three_holders PREFIX RESOURCE MODE: A1, A2 and A3 take the lease in turn
# under "fence run --pg" and write (tokens 1, 2 and 3 on a fresh Redis).
three_holders() {
	local p=$1 res=$2 mode=$3 i
	for i in 1 2 3; do
		TBL=$p start_worker "A$i" "$res" "$mode" --ttl 5s --pg "$PGCONN"
		wait_exit "$LAST_PID" 20
		[ "$RC" = 0 ] || fail "A$i: exit $RC"
	done
}

# repeated_token PREFIX RESOURCE MODE SECS [FENCE-RUN OPTION...]: after
# the test made Redis lose RESOURCE's keys (F6: a restart without data; its
# quorum twin: a majority of nodes), "fence acquire" is handed token 1
# again; the plain worker S writes with it (its outcome the test checks),
# then B takes over under "fence run OPTIONS" (SECS to finish).
repeated_token() {
	local p=$1 res=$2 mode=$3 secs=$4
	shift 4
	# nothing renews this lease and the release below is explicit: a TTL
	# that outlasts a loaded machine's worker, not one that hopes to
	eval "$("$FENCE_BIN" acquire "$res" --ttl 60s)"
	say "fence acquire after the loss: token $FENCE_TOKEN"
	[ "$FENCE_TOKEN" = 1 ] || fail "after the loss Redis gave token $FENCE_TOKEN, expected 1 again"
	export_lease
	TBL=$p start_plain_worker S "$mode"
	unexport_lease
	wait_exit "$LAST_PID" 20
	say "the write with the repeated token 1: $(outcome S)"
	"$FENCE_BIN" release "$res" "$(owner_of S)" >/dev/null

	TBL=$p start_worker B "$res" "$mode" --ttl 5s "$@"
	wait_exit "$LAST_PID" "$secs"
	[ "$RC" = 0 ] || fail "B: exit $RC: $(cat "$WORK/B.err")"
	say "fence run${1:+ --pg}: token $(token_of B), write $(outcome B)"
}

# healed: after repeated_token with "fence run --pg", S's write with the
# repeated token was refused, and B's fence run lifted its token above
# A3's 3 (healing) and wrote.
healed() {
	[ "$(outcome S)" = LF001 ] || fail "the repeated token's write: $(outcome S), expected LF001"
	[ "$(token_of B)" -gt 3 ] || fail "fence run --pg did not lift the token above 3: $(token_of B)"
	[ "$(outcome B)" = ok ] || fail "B's write after healing: $(outcome B)"
}

# --- one holder, one waiter (the failover tests)

# start_holder NAME RESOURCE [FENCE-RUN OPTION...]: "fence run" whose
# command writes its token and owner to NAME.token and NAME.owner, then
# waits for "go NAME"; returns once the lease is held.  Sets LAST_PID.
start_holder() {
	local name=$1 res=$2
	shift 2
	"$FENCE_BIN" run "$res" "$@" -- sh -c "echo \$FENCE_TOKEN >'$WORK/$name.token'
		echo \$FENCE_OWNER >'$WORK/$name.owner.tmp' && mv '$WORK/$name.owner.tmp' '$WORK/$name.owner'
		while [ ! -e '$WORK/$name.go' ]; do sleep 0.05; done" \
		>"$WORK/$name.out" 2>"$WORK/$name.err" &
	LAST_PID=$!
	E2E_PIDS+=("$LAST_PID")
	wait_for 30 test -s "$WORK/$name.owner"
}
holder_token() { cat "$WORK/$1.token"; }
holder_owner() { cat "$WORK/$1.owner"; }

# start_waiter NAME RESOURCE [FENCE-ACQUIRE OPTION...]: "fence acquire
# RESOURCE --wait 60s" in the background, its FENCE_* lines in NAME.out.
# Sets LAST_PID.
start_waiter() {
	local name=$1 res=$2
	shift 2
	"$FENCE_BIN" acquire "$res" --wait 60s "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
	LAST_PID=$!
	E2E_PIDS+=("$LAST_PID")
}
waiter_token() { sed -n 's/^FENCE_TOKEN=//p' "$WORK/$1.out"; }

# start_pair N RESOURCE PORT TTL [WAITER-OPTION...]: holder HN (fence run
# --ttl TTL) and waiter WN behind it, queued on the redis at PORT; their
# processes in HPID and WPID.
start_pair() {
	local n=$1 res=$2 port=$3 ttl=$4
	shift 4
	start_holder "H$n" "$res" --ttl "$ttl"
	HPID=$LAST_PID
	start_waiter "W$n" "$res" "$@"
	WPID=$LAST_PID
	wait_for 20 waiter_queued "W$n" "$WPID" "$port" "$res"
}

# waiter_queued NAME PID PORT RESOURCE: the waiter NAME (process PID) is in
# RESOURCE's queue on the redis at PORT; a waiter that ended instead fails
# the test with its words (a refused login is no timeout).
waiter_queued() {
	! dead "$2" || fail "$1 ended before it queued: $(cat "$WORK/$1.err" "$WORK/$1.out")"
	in_queue "$3" "$4"
}

# replica_of PORT MASTER: the redis at PORT replicates MASTER, in sync.
replica_of() {
	local info
	info=$(redis-cli -p "$1" info replication | tr -d '\r')
	grep -q "^master_port:$2$" <<<"$info" && grep -q '^master_link_status:up' <<<"$info"
}

# in_queue PORT RESOURCE: someone waits in RESOURCE's queue on the redis at PORT.
in_queue() { [ "$(redis-cli -p "$1" ZCARD "fence:{$2}:queue")" -ge 1 ]; }

# waits_behind PID NAME HOLDER PORT RESOURCE SECONDS: for SECONDS, the
# waiter NAME (process PID) goes on waiting, without a lease, while the
# lock on the redis at PORT stays the holder's.
waits_behind() {
	local pid=$1 name=$2 holder=$3 port=$4 res=$5 t0=$SECONDS
	while :; do
		[ ! -s "$WORK/$name.out" ] ||
			fail "$name got the lease while $holder held it: $(cat "$WORK/$name.out")"
		kill -0 "$pid" 2>/dev/null || fail "$name stopped waiting: $(cat "$WORK/$name.err")"
		[ "$(redis-cli -p "$port" GET "$(fence_key "$res" lock)")" = "$(holder_owner "$holder")" ] ||
			fail "the lock on $port is not $holder's"
		((SECONDS - t0 < $6)) || break
		sleep 0.1
	done
}

# lease_passed HOLDER HPID WAITER WPID: the holder's command ends, fence
# run exits 0, its release works, and the waiter gets the lease with a
# higher token.
lease_passed() {
	go "$1"
	wait_exit "$2" 30
	[ "$RC" = 0 ] || fail "$1's fence run exited $RC: $(cat "$WORK/$1.err")"
	[ ! -s "$WORK/$1.err" ] || fail "$1: $(cat "$WORK/$1.err")"
	wait_exit "$4" 30
	[ "$RC" = 0 ] || fail "$3 exited $RC: $(cat "$WORK/$3.err")"
	[ "$(waiter_token "$3")" -gt "$(holder_token "$1")" ] ||
		fail "$3 got token $(waiter_token "$3"), not above $1's $(holder_token "$1")"
}

# cmd_calls PORT COMMAND: how often the redis at PORT ran COMMAND.
cmd_calls() {
	redis-cli -p "$1" INFO commandstats | tr -d '\r' |
		sed -n "s/^cmdstat_$2:calls=\([0-9]*\).*/\1/p" | grep . || echo 0
}

# --- Redis Cluster

# cluster_slot_of PORT RESOURCE: the slot of RESOURCE's keys
cluster_slot_of() { redis-cli -p "$1" cluster keyslot "$(fence_key "$2" lock)"; }

# cluster_slot_owner PORT SLOT: the port of the master serving SLOT, as the
# node at PORT sees it
cluster_slot_owner() {
	redis-cli -p "$1" cluster nodes | awk -v s="$2" '$3 ~ /master/ && $3 !~ /fail/ {
		for (i = 9; i <= NF; i++) {
			if (split($i, a, "-") == 1)
				a[2] = a[1]
			if (a[1] ~ /^[0-9]+$/ && s >= a[1] + 0 && s <= a[2] + 0) {
				split($2, h, "[:@]")
				print h[2]
				exit
			}
		}
	}'
}

# cluster_migrating SLOT SRC DST: the first steps of a reshard, the way
# redis-cli --cluster reshard does them: IMPORTING, MIGRATING, the keys moved
cluster_migrating() {
	local slot=$1 src=$2 dst=$3 keys reply
	setslot "$dst" "$slot" importing "$(redis-cli -p "$src" cluster myid)" || return 1
	setslot "$src" "$slot" migrating "$(redis-cli -p "$dst" cluster myid)" || return 1
	while keys=$(redis-cli -p "$src" cluster getkeysinslot "$slot" 100) && [ -n "$keys" ]; do
		# shellcheck disable=SC2086
		reply=$(redis-cli -p "$src" migrate 127.0.0.1 "$dst" "" 0 5000 keys $keys 2>&1)
		case $reply in OK | NOKEY) ;; *) fail "MIGRATE of slot $slot from $src to $dst: $reply" ;; esac
	done
}

# setslot PORT SLOT ARG...: CLUSTER SETSLOT on the node at PORT, which must
# answer OK.  Valkey 8 and later wait for the node's replicas and answer
# NOREPLICAS when one does not acknowledge (a frozen one): ignored, the
# slot would never move and the keys' loop never end.
setslot() {
	local port=$1 slot=$2 reply
	shift 2
	reply=$(redis-cli -p "$port" cluster setslot "$slot" "$@" 2>&1)
	[ "$reply" = OK ] || fail "CLUSTER SETSLOT $slot $* on $port: $reply"
}

# cluster_moved SLOT DST PORT...: the last step, on every master PORT (the
# target first)
cluster_moved() {
	local slot=$1 dst=$2 p id
	shift 2
	id=$(redis-cli -p "$dst" cluster myid)
	setslot "$dst" "$slot" node "$id"
	for p in "$@"; do
		[ "$p" = "$dst" ] || setslot "$p" "$slot" node "$id"
	done
}

# --- the proxy of F2

# proxy_start [PORT]: proxy in front of PostgreSQL's TCP port (or of PORT
# on 127.0.0.1); sets PROXY_PORT.
proxy_start() {
	PROXY_PORT=$(spare_port)
	PROXY_CTL=$(spare_port)
	mkdir -p "$WORK/proxy"
	"$E2E_PY" "$E2E_DIR/proxy.py" "$PROXY_PORT" 127.0.0.1 "${1:-$PGPORT}" "$PROXY_CTL" "$WORK/proxy" 2>"$WORK/proxy.log" &
	E2E_PIDS+=("$!")
	wait_for 10 proxy_up
}

# proxy_ctl COMMAND: send a control command, print the reply.
proxy_ctl() {
	local reply
	{ exec {fd}<>"/dev/tcp/127.0.0.1/$PROXY_CTL"; } 2>/dev/null || return 1
	echo "$1" >&"$fd"
	read -r reply <&"$fd"
	exec {fd}>&-
	echo "$reply"
}
proxy_up() { proxy_ctl status >/dev/null; }
proxy_field() { proxy_ctl status | tr ' ' '\n' | sed -n "s/^$1=//p"; }
proxy_holds() { [ "$(proxy_field held)" -gt 0 ]; }
proxy_idle() { [ "$(proxy_field open)" = 0 ]; }
