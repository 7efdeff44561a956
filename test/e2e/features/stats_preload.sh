#!/usr/bin/env bash
# fence.stats with and without preloading, and fence.log_refusals.
#
# Must hold: on a server that does not preload the library, every write
# path works as before (advance, fenced_update, the guard, refusals with
# their SQLSTATEs), while fence.stats and fence.stats_reset() fail with
# 55000 and a hint naming shared_preload_libraries, and "fence show --pg"
# gives the mark and a warning instead of counts.  With
# fence.log_refusals on, each refusal leaves a LOG line naming the
# resource, the token, application_name and the process id, preloaded or
# not; off, none.  On the shared server (preloaded by test/run.sh), a
# refusal counted in one session is seen from another.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init stats

# --- the shared server preloads: counts cross sessions and aborts
if [ "$(sql -c "SELECT setting FROM pg_settings WHERE name = 'shared_preload_libraries'")" = fence ]; then
	sql -c "SELECT fence.advance('e2e:stats', 5)" >/dev/null
	[ "$(sqlstate -c "SELECT fence.advance('e2e:stats', 4)")" = LF001 ] || fail "stale advance not refused"
	got=$(sql -c "SELECT accepted >= 1, stale, last_refused_token FROM fence.stats WHERE resource = 'e2e:stats'")
	[ "$got" = "t|1|4" ] || fail "shared server: fence.stats shows '$got', expected 't|1|4'"
	say "preloaded: the refusal of another session is counted"
else
	say "the shared server does not preload fence: skipping the cross-session check"
fi

# --- a server of our own without preloading
saved=("$PGHOST" "$PGPORT")
pg_start
stop_own() { as_pg "$PG_BINDIR/pg_ctl" -D "$WORK/pgdata" -m immediate -w stop; }
E2E_ON_EXIT=stop_own
log=$WORK/postgres.log
[ "$PGPORT" != "${saved[1]}" ] || fail "did not get a server of our own"
sql -c "CREATE EXTENSION fence"
sql <<-'SQL'
	CREATE TABLE st_stock (id int PRIMARY KEY, qty int NOT NULL);
	INSERT INTO st_stock VALUES (1, 10);
	SELECT fence.protect('st_stock', 'st');
SQL

# the write paths work as before
sql -c "SELECT fence.advance('st', 5)" >/dev/null
[ "$(sql -c "SELECT fence.fenced_update('st', 5, 'UPDATE st_stock SET qty = qty - \$1 WHERE id = \$2', '1', '1')")" = 1 ] ||
	fail "fenced_update without preloading"
sql -c "BEGIN" -c "SET LOCAL fence.resource = 'st'" -c "SET LOCAL fence.token = '5'" \
	-c "UPDATE st_stock SET qty = qty - 1" -c "COMMIT" >/dev/null
[ "$(qty st)" = 8 ] || fail "the guarded writes did not land: qty $(qty st)"
[ "$(sqlstate -c "SELECT fence.advance('st', 4)")" = LF001 ] || fail "stale advance without preloading"
[ "$(sqlstate -c "UPDATE st_stock SET qty = 0")" = LF002 ] || fail "guard without a token, without preloading"
[ "$(sqlstate -c "SELECT fence.advance('st', 0)")" = LF003 ] || fail "token 0 without preloading"
[ "$(qty st)" = 8 ] || fail "a refused write landed"
say "not preloaded: writes and refusals as before"

# the statistics say what they need
for q in "SELECT * FROM fence.stats" "SELECT fence.stats_reset()"; do
	err=$(psql -X -qAt -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -c "$q" 2>&1 >/dev/null) && fail "$q worked without preloading"
	grep -q 'ERROR:  55000: fence statistics are not being collected' <<<"$err" || fail "$q: $err"
	grep -q 'HINT:  Add fence to shared_preload_libraries' <<<"$err" || fail "$q: no hint: $err"
done
say "not preloaded: fence.stats and fence.stats_reset() fail with 55000 and the hint"
if [ -x "$FENCE_BIN" ]; then
	"$FENCE_BIN" show st --pg "host=$PGHOST port=$PGPORT dbname=$PGDATABASE" >"$WORK/show.out" 2>"$WORK/show.err" ||
		fail "fence show --pg without preloading: exit $?: $(cat "$WORK/show.err")"
	grep -qx 'FENCE_PG_TOKEN=5' "$WORK/show.out" || fail "fence show: no mark: $(cat "$WORK/show.out")"
	! grep -q '^FENCE_PG_STALE=' "$WORK/show.out" || fail "fence show printed counts PostgreSQL does not keep"
	grep -q 'warning: no counts from PostgreSQL: .*shared_preload_libraries' "$WORK/show.err" ||
		fail "fence show: no warning: $(cat "$WORK/show.err")"
	say "not preloaded: fence show gives the mark and says why there are no counts"
fi

# fence.log_refusals: off by default, then one line per refusal with
# application_name and the process id
before=$(grep -c 'refused as' "$log" || true)
[ "$(PGAPPNAME=e2e-quiet sqlstate -c "SELECT fence.advance('st', 3)")" = LF001 ] || fail "stale advance"
[ "$(grep -c 'refused as' "$log" || true)" = "$before" ] || fail "a refusal was logged with fence.log_refusals off"
sql -c "LOAD 'fence'" -c "ALTER SYSTEM SET fence.log_refusals = on" -c "SELECT pg_reload_conf()" >/dev/null
log_refusals_on() { [ "$(sql -c "LOAD 'fence'" -c 'SHOW fence.log_refusals')" = on ]; }
wait_for 10 log_refusals_on
out=$(PGAPPNAME=e2e-worker psql -X -qAt -c "SELECT pg_backend_pid()" -c "SELECT fence.advance('st', 2)" 2>/dev/null || true)
pid=$(head -n1 <<<"$out")
PGAPPNAME=e2e-worker psql -X -qAt -c "SELECT pg_backend_pid()" -c "UPDATE st_stock SET qty = 0" >"$WORK/pid2" 2>/dev/null || true
pid2=$(head -n1 "$WORK/pid2")
wait_for 10 grep -q "process $pid2\." "$log"
grep -A1 "LOG:  fencing token for resource \"st\" refused as stale" "$log" |
	grep -q "DETAIL:  Token 2, application_name \"e2e-worker\", process $pid\." ||
	fail "no log line for the stale token: $(grep -A1 'refused as' "$log")"
grep -A1 "LOG:  fencing token for resource \"st\" refused as missing" "$log" |
	grep -q "DETAIL:  Token none, application_name \"e2e-worker\", process $pid2\." ||
	fail "no log line for the missing token: $(grep -A1 'refused as' "$log")"
say "fence.log_refusals: one line per refusal, with application_name and pid"
say "pass"
