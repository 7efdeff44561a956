#!/usr/bin/env bash
# fence run and the PostgreSQL it announces to, when that is not the
# primary it should be, or not answering.
#
# Must hold:
# - without --pg, fence run announces to FENCE_PG, else to the server
#   libpq's PGSERVICE, PGHOST or PGDATABASE name (as psql does); with none
#   of them it runs the command and warns that the lease was taken with no
#   PostgreSQL to announce it to; --no-pg says none is meant (no warning,
#   no announce); --no-pg with --pg, and --no-pg or --pooler outside run,
#   are usage errors (64);
# - a server that stalls after the announce (new sessions accepted by the
#   kernel, then nothing: a frozen primary, a failover under way; here the
#   proxy holds the bytes of every session after the first) makes the
#   probe of "fence run --pg" fail with and without the fence settings:
#   PostgreSQL unreachable, exit 69, not 78 ("configuration, do not
#   retry"); the command is not started and the lease is given back;
# - --pg naming a streaming standby (pg_basebackup -R): fence acquire and
#   fence run say that the server is read-only and how to reach the
#   primary (target_session_attrs=read-write, several hosts), exit 69,
#   before any lease is taken; with both servers listed and
#   target_session_attrs=read-write the announce reaches the primary.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init run_pg
need_client

# --- where fence run announces without --pg
mark() { sql -c "SELECT coalesce(max(token), 0) FROM fence.fences WHERE resource = '$1'"; }
nopg() { env -u PGHOST -u PGDATABASE -u PGSERVICE -u FENCE_PG "$@"; }
# PGHOST and PGDATABASE (e2e_init exports them), as psql reads them
"$FENCE_BIN" run rp-env -- sh -c 'psql -X -qAt -c "SHOW fence.token" >"$0"' "$WORK/env.token" \
	2>"$WORK/env.err" || fail "fence run with PGHOST: $(cat "$WORK/env.err")"
[ ! -s "$WORK/env.err" ] || fail "fence run with PGHOST said: $(cat "$WORK/env.err")"
[ "$(mark rp-env)" -gt 0 ] && [ "$(mark rp-env)" = "$(cat "$WORK/env.token")" ] ||
	fail "fence run with PGHOST did not announce (mark $(mark rp-env), token $(cat "$WORK/env.token"))"
# FENCE_PG, a connection string, when libpq's variables say nothing
nopg FENCE_PG="$PGCONN" "$FENCE_BIN" run rp-fpg -- true 2>"$WORK/env.err" ||
	fail "fence run with FENCE_PG: $(cat "$WORK/env.err")"
[ ! -s "$WORK/env.err" ] && [ "$(mark rp-fpg)" -gt 0 ] || fail "fence run with FENCE_PG did not announce"
# and --pg wins over both
FENCE_PG="host=127.0.0.1 port=1" "$FENCE_BIN" run rp-fpg --pg "$PGCONN" -- true 2>"$WORK/env.err" ||
	fail "fence run --pg with FENCE_PG set: $(cat "$WORK/env.err")"
# none of them: the lease is taken, the command runs, and that is said
nopg "$FENCE_BIN" run rp-none -- touch "$WORK/ran-none" 2>"$WORK/env.err" || fail "fence run with no PostgreSQL"
[ -e "$WORK/ran-none" ] || fail "the command did not run"
grep -q 'warning: the lease on "rp-none" was taken with no PostgreSQL to announce it to' "$WORK/env.err" ||
	fail "fence run with no PostgreSQL said: $(cat "$WORK/env.err")"
[ "$(mark rp-none)" = 0 ] || fail "announced to a PostgreSQL nobody named"
# --no-pg: meant, so nothing is said, and nothing announced even with PGHOST set
nopg "$FENCE_BIN" run rp-none --no-pg -- true 2>"$WORK/env.err" || fail "fence run --no-pg"
[ ! -s "$WORK/env.err" ] || fail "fence run --no-pg said: $(cat "$WORK/env.err")"
"$FENCE_BIN" run rp-nopg --no-pg -- true 2>"$WORK/env.err" || fail "fence run --no-pg with PGHOST"
[ "$(mark rp-nopg)" = 0 ] || fail "fence run --no-pg announced"
for bad in "run rp-x --no-pg --pg $PGCONN -- true" "acquire rp-x --no-pg" "acquire rp-x --pooler" \
	"run rp-x --no-pg --pooler -- true"; do
	set +e
	# shellcheck disable=SC2086 # words on purpose
	"$FENCE_BIN" $bad >/dev/null 2>"$WORK/env.err"
	rc=$?
	set -e
	[ $rc = 64 ] || fail "fence $bad: exit $rc, expected 64: $(cat "$WORK/env.err")"
done
say "no --pg: announced to FENCE_PG or libpq's PGHOST/PGDATABASE; with none, a warning; --no-pg: silent"

# --- a server that stalls after the announce
proxy_start
via_proxy="host=127.0.0.1 port=$PROXY_PORT user=$PGUSER dbname=$PGDATABASE connect_timeout=2"
proxy_ctl "hold-new 1" >/dev/null
set +e
"$FENCE_BIN" run rp-stall --pg "$via_proxy" -- touch "$WORK/ran" >"$WORK/run.out" 2>"$WORK/run.err"
rc=$?
set -e
proxy_ctl release >/dev/null
[ "$rc" = 69 ] || fail "a stalled server at the probe: exit $rc, expected 69: $(cat "$WORK/run.err")"
grep -q 'could not connect to PostgreSQL at --pg (neither with the fence' "$WORK/run.err" ||
	fail "unexpected message: $(cat "$WORK/run.err")"
! grep -q 'refuses the fence settings' "$WORK/run.err" || fail "blamed the settings: $(cat "$WORK/run.err")"
[ ! -e "$WORK/ran" ] || fail "the command ran"
lock_gone rp-stall || fail "fence run left its lock behind"
[ "$(sql -c "SELECT token FROM fence.fences WHERE resource = 'rp-stall'")" -gt 0 ] ||
	fail "the announce did not reach PostgreSQL"
say "stalled at the probe: exit 69, $(head -n1 "$WORK/run.err")"
# and once it answers again, the same command runs
"$FENCE_BIN" run rp-stall --pg "$via_proxy" -- touch "$WORK/ran" 2>"$WORK/run.err" ||
	fail "fence run through the released proxy: $(cat "$WORK/run.err")"
[ -e "$WORK/ran" ] || fail "the command did not run"

# --- a streaming standby
SB=$WORK/standby
SB_PORT=$(spare_port)
mkdir -p "$SB"
[ "$(id -u)" -ne 0 ] || chown postgres: "$SB"
chmod 700 "$SB"
# a fast checkpoint: the lane's server holds other tests' dirty pages, and a
# spread one took 270 s there, past the test's 240 s watchdog
as_pg "$PG_BINDIR/pg_basebackup" -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -D "$SB" -R -X stream --checkpoint=fast \
	>"$WORK/basebackup.log" 2>&1 || fail "pg_basebackup: $(cat "$WORK/basebackup.log")"
cat >>"$SB/postgresql.conf" <<-CONF
	port = $SB_PORT
CONF
as_pg "$PG_BINDIR/pg_ctl" -D "$SB" -l "$SB/log" -w -t 60 start >/dev/null ||
	fail "the standby did not start: $(cat "$SB/log")"
E2E_ON_EXIT="as_pg $PG_BINDIR/pg_ctl -D $SB -m immediate -w stop"
standby="host=$PGHOST port=$SB_PORT user=$PGUSER dbname=$PGDATABASE"
wait_for 30 eval '[ "$(psql -X -qAt -c "SELECT pg_is_in_recovery()" "$standby" 2>/dev/null)" = t ]'

for verb in acquire run; do
	set +e
	if [ $verb = run ]; then
		"$FENCE_BIN" run rp-standby --pg "$standby" -- touch "$WORK/ran2" >"$WORK/sb.out" 2>"$WORK/sb.err"
	else
		"$FENCE_BIN" acquire rp-standby --pg "$standby" >"$WORK/sb.out" 2>"$WORK/sb.err"
	fi
	rc=$?
	set -e
	[ "$rc" = 69 ] || fail "fence $verb --pg STANDBY: exit $rc, expected 69: $(cat "$WORK/sb.err")"
	grep -q 'is a read-only server (a standby' "$WORK/sb.err" &&
		grep -q 'target_session_attrs=read-write' "$WORK/sb.err" ||
		fail "fence $verb --pg STANDBY said: $(cat "$WORK/sb.err")"
	lock_gone rp-standby || fail "fence $verb --pg STANDBY took a lease"
done
[ ! -e "$WORK/ran2" ] || fail "the command ran against a standby"
say "a standby at --pg: exit 69, $(head -n1 "$WORK/sb.err")"

# the advice works: both servers, standby first, and read-write picks the primary
both="host=$PGHOST,$PGHOST port=$SB_PORT,$PGPORT user=$PGUSER dbname=$PGDATABASE target_session_attrs=read-write"
"$FENCE_BIN" run rp-standby --pg "$both" -- touch "$WORK/ran2" 2>"$WORK/sb.err" ||
	fail "fence run with target_session_attrs=read-write: $(cat "$WORK/sb.err")"
[ -e "$WORK/ran2" ] || fail "the command did not run"
[ "$(sql -c "SELECT token FROM fence.fences WHERE resource = 'rp-standby'")" -gt 0 ] ||
	fail "the announce did not reach the primary"
say "pass"
