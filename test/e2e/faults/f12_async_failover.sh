#!/usr/bin/env bash
# F12: failover to an asynchronous standby that missed the last announce,
# and the repair step.
#
# A primary and a streaming standby of the test's own (asynchronous: no
# synchronous_standby_names).  Holder A takes the lease (token 1) and
# writes a protected row; the standby replays it.  Then the standby stops
# receiving WAL (primary_conninfo emptied and reloaded: a replay paused
# with pg_wal_replay_pause() is not enough, as the promotion replays what
# was received first), A's lease is given back, B
# takes it (token 2), announces on the primary and writes; the primary
# refuses A's token 1.  The primary is killed with SIGKILL and the standby
# promoted: it never replayed B's announce.
#
# Must hold: before the promotion, "fence show --pg" on the standby says
# FENCE_PG_STANDBY=yes, and "fence resync" against it is refused; after it,
# on the promoted server, "fence resync --pg" raises the mark to Redis's
# counter (FENCE_RESYNC_CHANGED=1), after which A's token 1 is refused with
# LF001 and B's token 2 writes; "fence show --pg" says FENCE_PG_STANDBY=no.
# Negative control: before the repair, the promoted server has A's mark 1
# back and accepts A's stale write (what PostgreSQL cannot prevent, and
# what README.md's promises say the guarantee needs synchronous
# replication for; docs/operating.md has the repair).
. "$(dirname "$0")/../lib/lib.sh"
e2e_init f12
need_client
# a Redis of its own: fence resync reads every counter there
redis_start f12
export FENCE_REDIS_URL
FENCE_REDIS_URL=$(redis_url f12)

res=f12:stock
pg_node_init prim -c shared_preload_libraries=fence
pg_node_up prim
pport=$PORT_prim
node_sql prim -c 'CREATE EXTENSION fence' \
	-c 'CREATE TABLE f12_stock (id int PRIMARY KEY, qty int NOT NULL, by text)' \
	-c 'INSERT INTO f12_stock VALUES (1, 100, NULL)' \
	-c "SELECT fence.protect('f12_stock', '$res')" >/dev/null

mkdir -m 700 "$WORK/stby"
[ "$(id -u)" -ne 0 ] || chown postgres: "$WORK/stby"
as_pg "$PG_BINDIR/pg_basebackup" -h "$WORK/sock" -p "$pport" -U postgres \
	-D "$WORK/stby" -R -X stream >"$WORK/basebackup.log" 2>&1 ||
	{ cat "$WORK/basebackup.log"; fail "pg_basebackup failed"; }
pg_node_conf stby "$(spare_port)"
pg_node_up stby
streaming() { [ "$(node_sql prim -c "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")" = 1 ]; }
wait_for 30 streaming
say "primary on $pport, standby on $PORT_stby, streaming"

conn() { printf 'host=%s port=%s user=postgres dbname=postgres' "$WORK/sock" "$1"; }
# write WHO TOKEN OWNER NODE: the protected write under the token
write() {
	PGOPTIONS="-c fence.resource=$res -c fence.token=$2 -c fence.owner=$3" \
		node_sql "$4" -v VERBOSITY=verbose -c "UPDATE f12_stock SET qty = qty - 1, by = '$1' WHERE id = 1" 2>&1
}

# A: token 1, one write, replayed by the standby
eval "$("$FENCE_BIN" acquire "$res" --ttl 60s)"
a_token=$FENCE_TOKEN a_owner=$FENCE_OWNER
write A "$a_token" "$a_owner" prim >/dev/null || fail "A's first write failed"
replayed() { [ "$(node_sql stby -c "SELECT by FROM f12_stock WHERE id = 1")" = A ]; }
wait_for 30 replayed

# the standby stops receiving WAL (an asynchronous standby that lags: a
# paused replay is not enough, as a promotion first replays what was
# received); B takes over on the primary
node_sql stby -c "ALTER SYSTEM SET primary_conninfo = ''" -c 'SELECT pg_reload_conf()' >/dev/null
cut_off() { [ "$(node_sql stby -c 'SELECT count(*) FROM pg_stat_wal_receiver')" = 0 ]; }
wait_for 30 cut_off
"$FENCE_BIN" release "$res" "$a_owner" || fail "A could not give its lease back"
eval "$("$FENCE_BIN" acquire "$res" --ttl 60s --pg "$(conn "$pport")")"
b_token=$FENCE_TOKEN b_owner=$FENCE_OWNER
[ "$b_token" -gt "$a_token" ] || fail "B's token $b_token is not above A's $a_token"
write B "$b_token" "$b_owner" prim >/dev/null || fail "B's write on the primary failed"
out=$(write A "$a_token" "$a_owner" prim) && fail "the primary accepted A's stale token"
case $out in *LF001*) ;; *) fail "A's stale write on the primary failed, but not with LF001: $out" ;; esac
say "B announced token $b_token and wrote; the primary refused A's token $a_token"

# on the standby: fence show says so, and fence resync is refused
show=$("$FENCE_BIN" show "$res" --pg "$(conn "$PORT_stby")" 2>"$WORK/show.err") ||
	fail "fence show --pg on the standby failed: $(cat "$WORK/show.err")"
grep -qx "FENCE_PG_STANDBY=yes" <<<"$show" || fail "fence show --pg does not say the standby is one: $show"
grep -q "standby" "$WORK/show.err" || fail "fence show --pg gave no warning on a standby"
rc=0
"$FENCE_BIN" resync --pg "$(conn "$PORT_stby")" >/dev/null 2>"$WORK/resync_stby.err" || rc=$?
[ "$rc" = 1 ] || fail "fence resync against the standby exited $rc: $(cat "$WORK/resync_stby.err")"
grep -q "standby" "$WORK/resync_stby.err" || fail "fence resync's refusal does not name the standby"
state=$(node_sql stby -v VERBOSITY=verbose -c "SELECT fence.advance('$res', 9)" 2>&1 || true)
case $state in *"on a standby"*) ;; *) fail "fence.advance on the standby did not say it is one: $state" ;; esac
grep -q "cannot execute fence.advance() on a standby" "$WORK/stby.log" ||
	fail "the standby's log does not say that it is one"

# the primary dies; the standby that missed B's announce is promoted
pg_node_crash prim
as_pg "$PG_BINDIR/pg_ctl" -D "$WORK/stby" -w -t 60 promote >/dev/null || fail "the promotion failed"
promoted() { [ "$(node_sql stby -c 'SELECT pg_is_in_recovery()')" = f ]; }
wait_for 30 promoted
mark=$(node_sql stby -c "SELECT token || '/' || owner FROM fence.fences WHERE resource = '$res'")
say "promoted; the mark there is $mark"
[ "$mark" = "$a_token/$a_owner" ] || fail "set-up: the promoted standby has mark $mark, not A's (it did not miss B's announce)"

# negative control: without the repair, A's stale write lands
write A "$a_token" "$a_owner" stby >/dev/null ||
	fail "negative control: the promoted server refused A's token before the repair"
say "negative control: A's stale token $a_token accepted before the repair"

# another resource with a counter and no mark, outside the prefix
eval "$("$FENCE_BIN" acquire 'other:x{1}' --ttl 60s)"
out=$("$FENCE_BIN" resync --pg "$(conn "$PORT_stby")" --prefix f12: 2>"$WORK/resync.err") ||
	fail "fence resync failed: $(cat "$WORK/resync.err")"
say "fence resync --prefix f12: $(echo $out)"
grep -qx "FENCE_RESYNC_CHANGED=1" <<<"$out" && grep -qx "FENCE_RESYNC_COUNTERS=1" <<<"$out" ||
	fail "fence resync --prefix f12: did not raise the one mark: $out"
[ "$(node_sql stby -c "SELECT token FROM fence.fences WHERE resource = '$res'")" = "$b_token" ] ||
	fail "the mark is not at B's token $b_token after the repair"

out=$(write A "$a_token" "$a_owner" stby) && fail "A's stale token was accepted after the repair"
case $out in *LF001*) ;; *) fail "A's stale write failed, but not with LF001: $out" ;; esac
write B "$b_token" "$b_owner" stby >/dev/null || fail "B's token $b_token does not write after the repair"
[ "$(node_sql stby -c "SELECT by FROM f12_stock WHERE id = 1")" = B ] || fail "B's write is not there"
show=$("$FENCE_BIN" show "$res" --pg "$(conn "$PORT_stby")" 2>/dev/null) || fail "fence show --pg failed"
grep -qx "FENCE_PG_STANDBY=no" <<<"$show" || fail "fence show --pg calls the promoted server a standby: $show"
# every counter: the other resource's mark is made; a second run changes nothing
out=$("$FENCE_BIN" resync --pg "$(conn "$PORT_stby")" 2>/dev/null) || fail "fence resync (all) failed"
grep -qx "FENCE_RESYNC_CHANGED=1" <<<"$out" && grep -qx "FENCE_RESYNC_COUNTERS=2" <<<"$out" ||
	fail "fence resync of every counter did not make the other mark: $out"
[ "$(node_sql stby -c "SELECT token FROM fence.fences WHERE resource = 'other:x{1}'")" = 1 ] ||
	fail "the mark of other:x{1} was not made at its counter"
out=$("$FENCE_BIN" resync --pg "$(conn "$PORT_stby")" --json 2>/dev/null) || fail "a second fence resync failed"
[ "$out" = '{"counters":2,"changed":0}' ] || fail "a second fence resync changed marks: $out"
say "pass"
