#!/usr/bin/env bash
# bench/sql_many.sh: fence.advance_many and fence.fenced_update_many over N
# resources in one call, in the C extension and in the SQL edition, on one
# throwaway server (the SQL edition must be linear in N, and
# within 10x the C extension at 16,000 resources).  Each call runs in a new
# session (the SQL edition's first call of a session pays for its
# settings) on resources without a mark, and is timed whole by psql's
# \timing.  BENCH_MANY_SIZES (default "2000 8000 16000") picks the sizes.
# Not part of "make bench": run it on its own, PGTREE=DIR as for the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
. test/lib/servers.sh
servers_init
pg_start >/dev/null
createdb -T template0 bench_c
psql -X -q -d bench_c -c "CREATE EXTENSION fence"
createdb -T template0 bench_sql
psql -X -q -v ON_ERROR_STOP=1 -1 -d bench_sql -f sql/hosted/fence_hosted.sql
for db in bench_c bench_sql; do
	psql -X -q -d "$db" -c "CREATE TABLE bench_rows (id int)"
done

# timed DB SQL: the milliseconds psql's \timing gives SQL
timed() {
	psql -X -At -v ON_ERROR_STOP=1 -d "$1" -c '\timing on' -c "$2" |
		sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'
}

printf '%-9s %-19s %6s %10s\n' edition function n ms
for n in ${BENCH_MANY_SIZES:-2000 8000 16000}; do
	names="ARRAY(SELECT 'n$n:' || g FROM generate_series(1, $n) g)"
	tokens="ARRAY(SELECT 5::bigint FROM generate_series(1, $n))"
	for db in bench_c bench_sql; do
		ms=$(timed "$db" "SELECT cardinality(fence.advance_many($names, $tokens))")
		printf '%-9s %-19s %6d %10s\n' "${db#bench_}" advance_many "$n" "$ms"
		names_u="ARRAY(SELECT 'u$n:' || g FROM generate_series(1, $n) g)"
		ms=$(timed "$db" "SELECT fence.fenced_update_many($names_u, $tokens, 'INSERT INTO bench_rows VALUES (1)')")
		printf '%-9s %-19s %6d %10s\n' "${db#bench_}" fenced_update_many "$n" "$ms"
	done
done
