#!/usr/bin/env bash
# The move from the SQL edition to the C extension (sql/hosted/to_extension.sql)
# loses no mark that an advance commits while it runs, and drops no object
# of the user's.
#
# A race: session A advances "race" from 5 to 6 and holds its transaction
# open; the move starts and must wait (its first statement locks fence's
# tables); A commits; the move ends.  The mark is 6, and token 5 is refused.
# (The move once copied the marks before taking any lock, waited only at
# DROP SCHEMA, and put mark 5 back.)
#
# Dependent objects: a generated column computed with fence.key_resource
# and a view over fence.mark().  The move refuses with 2BP01 and names both;
# nothing is changed (the column and its data, the view, the SQL edition
# are all there).  Once they are dropped, the move succeeds.
. "$(dirname "$0")/../lib/lib.sh"
FENCE_EDITION=sql e2e_init sql_move

sql -c "SELECT fence.advance('race', 5)" >/dev/null

# the dependent objects first: the move must refuse, and change nothing
sql <<-'SQL'
	CREATE TABLE move_accounts (id int PRIMARY KEY, balance int,
	    resource text GENERATED ALWAYS AS (fence.key_resource('acct', id)) STORED);
	INSERT INTO move_accounts (id, balance) VALUES (1, 100), (2, 200);
	CREATE VIEW move_marks AS SELECT fence.mark('race') AS mark;
SQL
state=$(sqlstate -1 -f "$TOP/sql/hosted/to_extension.sql")
[ "$state" = 2BP01 ] || fail "the move with dependent objects: $state (expected 2BP01)"
psql -X -q -1 -f "$TOP/sql/hosted/to_extension.sql" >"$WORK/refused.out" 2>&1 || true
# the column's expression (PostgreSQL 14 and later), or the column itself
# (before 14 a generated column depends on the functions it calls)
grep -qE '(default value for )?column resource of table move_accounts' "$WORK/refused.out" ||
	fail "the refusal does not name the generated column: $(cat "$WORK/refused.out")"
grep -q 'view move_marks' "$WORK/refused.out" ||
	fail "the refusal does not name the view: $(cat "$WORK/refused.out")"
[ "$(sql -c "SELECT string_agg(resource, ',' ORDER BY id) FROM move_accounts")" = 'acct:1,acct:2' ] ||
	fail "the generated column lost its data"
[ "$(sql -c "SELECT mark FROM move_marks")" = 5 ] || fail "the view is gone"
[ "$(sql -c "SELECT fence.edition()")" = sql ] || fail "the refused move changed the edition"
sql -c "DROP VIEW move_marks; ALTER TABLE move_accounts DROP COLUMN resource" >/dev/null
say "refused with 2BP01, naming the generated column and the view"

# the race
mkfifo "$WORK/a.in"
psql -X -qAt -v ON_ERROR_STOP=1 <"$WORK/a.in" >"$WORK/a.out" 2>&1 &
a_pid=$!
E2E_PIDS+=("$a_pid")
exec 3>"$WORK/a.in"
echo "BEGIN; SELECT fence.advance('race', 6); SELECT 'advanced';" >&3
wait_for 30 grep -qx advanced "$WORK/a.out"

psql -X -q -v ON_ERROR_STOP=1 -1 -f "$TOP/sql/hosted/to_extension.sql" >"$WORK/move.out" 2>&1 &
move_pid=$!
E2E_PIDS+=("$move_pid")
move_waits() {
	[ "$(sql -c "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
	             WHERE NOT l.granted AND a.datname = current_database()")" -ge 1 ]
}
wait_for 30 move_waits
say "the move waits; A commits token 6"
echo "COMMIT;" >&3
exec 3>&-
wait "$a_pid" || fail "A's session: $(cat "$WORK/a.out")"
wait "$move_pid" || fail "to_extension.sql: $(cat "$WORK/move.out")"

[ "$(sql -c "SELECT extversion IS NOT NULL FROM pg_extension WHERE extname = 'fence'")" = t ] ||
	fail "no extension after the move"
mark=$(sql -c "SELECT fence.mark('race')")
[ "$mark" = 6 ] || fail "the mark after the move is $mark, not A's committed 6"
state=$(sqlstate -c "SELECT fence.advance('race', 5)")
[ "$state" = LF001 ] || fail "token 5 after the move: $state (expected LF001)"
[ "$(sql -c "SELECT sum(balance) FROM move_accounts")" = 300 ] || fail "the table lost its rows"
say "ok: the advance that committed during the move kept its mark"
