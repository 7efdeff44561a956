#!/usr/bin/env bash
# The SQL edition of hosted PostgreSQL, end to end, and the move from it to
# the C extension without losing a mark (docs/hosted.md).
#
# Installed as a plain script (sql/hosted/fence_hosted.sql) in a database
# of its own: fence show names the edition; worker A takes the lease and
# announces its token, B takes over and announces a higher one; A's write
# to a guarded table is refused with LF001, B's lands.  Then
# sql/hosted/to_extension.sql moves the database to the C extension in one
# transaction: fence show names the extension, the mark is B's token, the
# guard is still there (a write without a token is LF002), A's stale token
# is still refused and B's still accepted.  A mark forgotten before the move
# (fence.forget) leaves a floor, which the move carries over: a token at or
# below it is refused for every resource under its prefix, before and after.
. "$(dirname "$0")/../lib/lib.sh"
FENCE_EDITION=sql e2e_init sql_edition
need_client

res=acct
sql -c "CREATE TABLE acct_stock (id int PRIMARY KEY, qty int NOT NULL);
        INSERT INTO acct_stock VALUES (1, 100);
        SELECT fence.protect('acct_stock', 'acct')" >/dev/null

"$FENCE_BIN" show "$res" --pg "$PGCONN" >"$WORK/show" || fail "fence show --pg"
grep -qx "FENCE_PG_EDITION=sql" "$WORK/show" || fail "fence show: $(cat "$WORK/show")"
"$FENCE_BIN" show "$res" --pg "$PGCONN" --json >"$WORK/show.json" || fail "fence show --json"
grep -q '"pg_stats":null,"pg_edition":"sql","pg_standby":false}' "$WORK/show.json" || fail "fence show --json: $(cat "$WORK/show.json")"

eval "$("$FENCE_BIN" acquire "$res" --ttl 30s --pg "$PGCONN")" || fail "A's acquire"
a_token=$FENCE_TOKEN a_owner=$FENCE_OWNER
"$FENCE_BIN" release "$res" "$a_owner" || fail "A's release"
eval "$("$FENCE_BIN" acquire "$res" --ttl 30s --pg "$PGCONN")" || fail "B's acquire"
b_token=$FENCE_TOKEN b_owner=$FENCE_OWNER
[ "$b_token" -gt "$a_token" ] || fail "B's token $b_token is not above A's $a_token"
say "A has token $a_token, B has $b_token (announced)"

# write: the guarded UPDATE, with the token PGOPTIONS carries, as under
# "fence run"; prints its SQLSTATE
write() {
	sqlstate -c "UPDATE acct_stock SET qty = qty - 1 WHERE id = 1"
}
stale=$(PGOPTIONS="-c fence.resource=$res -c fence.token=$a_token -c fence.owner=$a_owner" write)
[ "$stale" = LF001 ] || fail "A's stale write in the SQL edition: $stale"
fresh=$(PGOPTIONS="-c fence.resource=$res -c fence.token=$b_token -c fence.owner=$b_owner" write)
[ "$fresh" = 00000 ] || fail "B's write in the SQL edition: $fresh"
[ "$(qty acct)" = 99 ] || fail "qty $(qty acct) after one write"

# a floor: acct:old's mark 7 is forgotten, and prefix acct keeps it
sql -c "SELECT fence.advance('acct:old', 7)" >/dev/null || fail "acct:old's mark"
sql -c "UPDATE fence.fences SET updated_at = updated_at - interval '2 days' WHERE resource = 'acct:old'"
[ "$(sql -c "SELECT fence.forget('1 day')")" = 1 ] || fail "fence.forget in the SQL edition"
[ "$(sql -c "SELECT token FROM fence.floors WHERE prefix = 'acct'")" = 7 ] || fail "no floor 7 for acct"
floor_refused() {
	local state
	state=$(sqlstate -c "SELECT fence.advance('$1', 7)")
	[ "$state" = LF001 ] || fail "token 7 for $1 under floor 7 ($2): $state"
}
floor_refused acct:old "SQL edition"
floor_refused acct:new "SQL edition"

say "moving to the C extension"
sql -1 -f "$TOP/sql/hosted/to_extension.sql" >/dev/null || fail "to_extension.sql"
[ "$(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'fence'")" != "" ] ||
	fail "no extension after the move"

"$FENCE_BIN" show "$res" --pg "$PGCONN" >"$WORK/show" || fail "fence show --pg after the move"
grep -qx "FENCE_PG_EDITION=c" "$WORK/show" || fail "fence show after the move: $(cat "$WORK/show")"
grep -qx "FENCE_PG_TOKEN=$b_token" "$WORK/show" || fail "mark after the move: $(cat "$WORK/show")"

none=$(write)
[ "$none" = LF002 ] || fail "a write without a token after the move: $none (the guard is gone?)"
stale=$(PGOPTIONS="-c fence.resource=$res -c fence.token=$a_token -c fence.owner=$a_owner" write)
[ "$stale" = LF001 ] || fail "A's stale write after the move: $stale"
fresh=$(PGOPTIONS="-c fence.resource=$res -c fence.token=$b_token -c fence.owner=$b_owner" write)
[ "$fresh" = 00000 ] || fail "B's write after the move: $fresh"
[ "$(qty acct)" = 98 ] || fail "qty $(qty acct) after two writes"
[ "$(sql -c "SELECT token FROM fence.floors WHERE prefix = 'acct'")" = 7 ] || fail "the floor did not move"
floor_refused acct:old "after the move"
floor_refused acct:other "after the move"
[ "$(sql -c "SELECT fence.advance('acct:old', 8)")" = 0 ] || fail "token 8 above the floor after the move"
"$FENCE_BIN" release "$res" "$b_owner" || fail "B's release"
say "ok: the mark, the floor and the guard moved, A's stale token is still refused"
