#!/usr/bin/env bash
# The one grant an application role needs: the GRANT that fence prints
# when the role lacks it must be the documented one for the database's
# edition (docs/install.md's for the C extension, docs/hosted.md's for the
# SQL edition),
# and running it must be enough for every verb.  The printed grant named 5
# of the 9 functions (fence exec -R a -R b then failed with "permission
# denied for function advance_many"), and on the SQL edition it failed as
# a whole (42883: no "any" overload there).
#
# For each edition (the C extension; the SQL edition in a database of its
# own): a fresh role with no grant; its first announce fails with the hint;
# the GRANT in the hint runs as the superuser, and is the documented one
# for the edition, word for word; then, as the role, every verb that reaches
# PostgreSQL works: acquire --pg, run --pg, exec, show --pg, and their
# sets (-R a -R b: advance_many, fenced_update_many).
. "$(dirname "$0")/../lib/lib.sh"
e2e_init grants
need_client

role=grants_app_$$
sqldb=grants_sql_$$
tbl=grants_t_$$
cleanup() {
	sql -d "$sqldb" -c "DROP OWNED BY $role" 2>/dev/null
	dropdb --if-exists "$sqldb"
	sql -c "DROP TABLE IF EXISTS $tbl" -c "DROP OWNED BY $role" -c "DROP ROLE IF EXISTS $role"
}
E2E_ON_EXIT=cleanup
sql -c "CREATE ROLE $role LOGIN"
createdb -T template0 "$sqldb"
sql -1 -d "$sqldb" -f "$TOP/sql/hosted/fence_hosted.sql" >/dev/null

# readme_grant EDITION: the documented GRANT of an application role, on one line
readme_grant() {
	local doc
	# the C extension's is the first "GRANT ... TO app;" block of docs/install.md,
	# the SQL edition's the first of docs/hosted.md (after "The grant of an
	# application role is the C extension's")
	if [ "$1" = c ]; then doc=install.md; else doc=hosted.md; fi
	awk -v want=1 '
		/^GRANT EXECUTE ON FUNCTION fence.advance\(text, bigint, text\),/ { seen++; on = (seen == want) }
		on { line = line " " $0 }
		on && /TO app;/ { on = 0 }
		END { print line }' "$TOP/docs/$doc" |
		tr -s ' ' | sed -e 's/^ //' -e 's/ TO app;$//'
}

for edition in c sql; do
	db=$PGDATABASE
	[ $edition = c ] || db=$sqldb
	sql -d "$db" -c "CREATE TABLE $tbl (id int PRIMARY KEY, n int)" \
		-c "INSERT INTO $tbl VALUES (1, 0)" -c "GRANT SELECT, UPDATE ON $tbl TO $role"
	conn="host=$PGHOST port=$PGPORT user=$role dbname=$db"
	r1=grants:$edition:1 r2=grants:$edition:2

	# no grant: the announce fails with the hint
	rc=0
	"$FENCE_BIN" acquire "$r1" --pg "$conn" >/dev/null 2>"$WORK/err" || rc=$?
	[ "$rc" = 1 ] || fail "$edition: acquire --pg without the grant exited $rc"
	hint=$(sed -n 's/^fence: hint: .* grant them: //p' "$WORK/err")
	[ -n "$hint" ] || fail "$edition: no grant in the hint: $(cat "$WORK/err")"
	want="$(readme_grant $edition) TO \"$role\";"
	[ "$hint" = "$want" ] || fail "$edition: the printed grant is not the documented one:
  printed: $hint
  docs:    $want"
	sql -d "$db" -c "$hint" >/dev/null || fail "$edition: the printed grant failed"
	say "$edition: the printed grant is the documented one and runs"

	# every verb, as the role
	out=$("$FENCE_BIN" acquire "$r1" --pg "$conn" 2>&1) || fail "$edition: acquire --pg: $out"
	eval "$out"
	"$FENCE_BIN" release "$r1" "$FENCE_OWNER" || fail "$edition: release"
	out=$("$FENCE_BIN" run "$r1" --pg "$conn" -- true 2>&1) || fail "$edition: run --pg: $out"
	out=$("$FENCE_BIN" exec "$r1" --pg "$conn" "UPDATE $tbl SET n = n + 1 WHERE id = \$1" 1 2>&1) ||
		fail "$edition: exec with a parameter: $out"
	out=$("$FENCE_BIN" exec "$r1" --pg "$conn" "UPDATE $tbl SET n = n + 1 WHERE id = 1" 2>&1) ||
		fail "$edition: exec: $out"
	out=$("$FENCE_BIN" show "$r1" --pg "$conn" 2>&1) || fail "$edition: show --pg: $out"
	out=$("$FENCE_BIN" acquire -R "$r1" -R "$r2" --pg "$conn" 2>&1) || fail "$edition: acquire -R -R --pg: $out"
	eval "$out"
	"$FENCE_BIN" release -R "$r1" -R "$r2" "$FENCE_OWNER_1" || fail "$edition: release -R -R"
	out=$("$FENCE_BIN" run -R "$r1" -R "$r2" --pg "$conn" -- true 2>&1) || fail "$edition: run -R -R --pg: $out"
	out=$("$FENCE_BIN" exec -R "$r1" -R "$r2" --pg "$conn" "UPDATE $tbl SET n = n + 1 WHERE id = \$1" 1 2>&1) ||
		fail "$edition: exec -R -R with a parameter: $out"
	out=$("$FENCE_BIN" exec -R "$r1" -R "$r2" --pg "$conn" "UPDATE $tbl SET n = n + 1 WHERE id = 1" 2>&1) ||
		fail "$edition: exec -R -R: $out"
	[ "$(sql -d "$db" -c "SELECT n FROM $tbl")" = 4 ] || fail "$edition: the 4 writes are not all there"
	say "$edition: every verb works with the grant"
	sql -d "$db" -c "DROP TABLE $tbl" >/dev/null
done
say "pass"
