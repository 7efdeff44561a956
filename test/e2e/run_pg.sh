#!/usr/bin/env bash
# fence run and the PostgreSQL it announces to, when that is not the
# primary it should be, or not answering.
#
# Must hold:
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
. "$(dirname "$0")/lib/lib.sh"
e2e_init run_pg
need_client

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
as_pg "$PG_BINDIR/pg_basebackup" -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -D "$SB" -R -X stream \
	>"$WORK/basebackup.log" 2>&1 || fail "pg_basebackup: $(cat "$WORK/basebackup.log")"
cat >>"$SB/postgresql.conf" <<-CONF
	port = $SB_PORT
CONF
as_pg "$PG_BINDIR/pg_ctl" -D "$SB" -l "$SB/log" -w -t 60 start >/dev/null ||
	fail "the standby did not start: $(cat "$SB/log")"
E2E_ON_EXIT="as_pg $PG_BINDIR/pg_ctl -D $SB -m immediate -w stop"
standby="host=$PGHOST port=$SB_PORT user=$PGUSER dbname=$PGDATABASE"
wait_for "the standby" 30 eval '[ "$(psql -X -qAt -c "SELECT pg_is_in_recovery()" "$standby" 2>/dev/null)" = t ]'

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
