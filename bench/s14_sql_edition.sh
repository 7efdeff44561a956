#!/usr/bin/env bash
# bench/s14_sql_edition.sh: scenario 14, the SQL edition of hosted
# PostgreSQL (sql/hosted/fence_hosted.sql) against plain writes and against
# the C extension, in the same run on the same server:
#
#   plain        UPDATE pgbench_accounts ... (autocommit), in each database
#   fenced       SELECT fence.fenced_update(R, T, 'UPDATE ...', delta, aid)
#   where        the plain UPDATE with the check in its WHERE clause,
#                ... AND (SELECT fence.advance(R, T)) IS NOT NULL, prepared
#                by the client (update_where.pgbench)
#   guarded      the plain UPDATE on a table-mode protected table, the token
#                from PGOPTIONS (scenario 2)
#
# each in the bench database, which runs the C extension, and in a second
# database that runs the SQL edition.  Each pgbench client of "fenced" and
# "where" writes under its own resource, as in scenario 1; all clients of "guarded"
# carry the one lease of the table, as in scenario 2.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

resource=bench:guarded
owner=bench-owner
c_db=${PGDATABASE:-postgres}
sql_db=bench_sql_edition

log "s14: the SQL edition vs plain and vs the C extension"
dropdb --if-exists "$sql_db" >/dev/null
createdb "$sql_db"
sql -d "$sql_db" -1 -f "$BENCH_DIR/../sql/hosted/fence_hosted.sql" >/dev/null
for db in "$c_db" "$sql_db"; do
	PGDATABASE=$db pgbench_accounts
	sql -d "$db" >/dev/null <<SQL
SELECT fence.advance('bench:' || c, $token) FROM generate_series(0, $CLIENTS - 1) c;
SELECT fence.advance('$resource', $token, '$owner');
SQL
done

run_variant() {
	local edition=${1%%_*} variant=${1#*_} db
	db=$c_db
	[ "$edition" = c ] || db=$sql_db
	case $variant in
	plain)
		record s14 "$1" "$(PGDATABASE=$db pgb update_plain.pgbench -D accounts=$accounts)"
		;;
	fenced)
		record s14 "$1" "$(PGDATABASE=$db pgb update_fenced.pgbench -D accounts=$accounts -D token=$token)"
		;;
	where)
		record s14 "$1" "$(PGDATABASE=$db pgb update_where.pgbench -D accounts=$accounts -D token=$token)"
		;;
	guarded)
		sql -d "$db" -c "SELECT fence.protect('pgbench_accounts', '$resource')" >/dev/null
		record s14 "$1" "$(PGDATABASE=$db PGOPTIONS="-c fence.resource=$resource -c fence.token=$token -c fence.owner=$owner" \
			pgb update_plain.pgbench -D accounts=$accounts)"
		sql -d "$db" -c "SELECT fence.unprotect('pgbench_accounts')" >/dev/null
		;;
	esac
}

interleave run_variant c_plain c_fenced c_guarded c_where sql_plain sql_fenced sql_guarded sql_where

row 14 "SQL edition: plain autocommit UPDATE (pgbench)" "$(median s14 sql_plain)" tx/s
row_vs 14 "SQL edition: fence.fenced_update vs plain" tx/s sql_fenced sql_plain plain ">=0.40"
row_vs 14 "SQL edition: fence.fenced_update vs the C extension's" tx/s sql_fenced c_fenced "C ext."
row_vs 14 "SQL edition: the check in the UPDATE's WHERE clause (client-prepared) vs plain" tx/s sql_where sql_plain plain
row_vs 14 "SQL edition: guarded table (PGOPTIONS) vs plain" tx/s sql_guarded sql_plain plain ">=0.50"
row_vs 14 "SQL edition: guarded table vs the C extension's" tx/s sql_guarded c_guarded "C ext."
row_vs 14 "C extension: fence.fenced_update vs plain (same run)" tx/s c_fenced c_plain plain
row_vs 14 "C extension: the check in the UPDATE's WHERE clause vs plain (same run)" tx/s c_where c_plain plain
row_vs 14 "C extension: guarded table vs plain (same run)" tx/s c_guarded c_plain plain
note "Scenario 14: pgbench -M prepared, $CLIENTS clients, $CORES threads, ${SECS}s per run, $ROUNDS runs each, the scripts of scenarios 1 and 2 and update_where.pgbench (the check in the UPDATE's WHERE clause); the SQL edition in a database of its own on the same server. A check that does not move the mark takes the fence row FOR SHARE in both editions, so the clients of \"guarded\", all under one lease, write side by side (docs/hosted.md)."
