#!/usr/bin/env bash
# bench/s8_subxact_loop.sh: scenario 8, fencing one resource per
# subtransaction: a PL/pgSQL loop over BENCH_S8_ITEMS items (default 20000)
# whose body, in a BEGIN ... EXCEPTION block of its own, announces the
# item's token with fence.advance and inserts the item into a table
# protected in key mode (the item's resource is that row's):
#
#   fenced    PERFORM fence.advance('item:' || i, 5); INSERT ...;
#             EXCEPTION WHEN SQLSTATE 'LF001' THEN ...
#   plain     the same loop and EXCEPTION block, INSERT into an unprotected
#             table, no advance                                     baseline
#
# Every block is a subtransaction; the registry of accepted tokens (one
# entry per item by the end) must not be scanned whenever one ends, or the
# loop is quadratic.  Each run starts from empty tables and no marks.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

items=${BENCH_S8_ITEMS:-20000}

log "s8: $items items, one fence.advance per EXCEPTION block"
sql >/dev/null <<SQL
CREATE SCHEMA IF NOT EXISTS bench;
DROP TABLE IF EXISTS bench.items_fenced, bench.items_plain;
CREATE TABLE bench.items_fenced (id int PRIMARY KEY, note text);
CREATE TABLE bench.items_plain (id int PRIMARY KEY, note text);
SELECT fence.protect('bench.items_fenced', 'item', key_column => 'id');
SQL

loop() {
	local table=$1 advance=$2
	echo "DO \$\$
	DECLARE refused int := 0;
	BEGIN
		FOR i IN 1..$items LOOP
			BEGIN
				$advance
				INSERT INTO $table VALUES (i, 'x');
			EXCEPTION WHEN SQLSTATE 'LF001' THEN
				refused := refused + 1;
			END;
		END LOOP;
	END \$\$;"
}

run_variant() {
	local ms
	# the TRUNCATE guard checks the table's own resource
	sql -c "SET fence.resource = 'item'" -c "SET fence.token = '5'" \
		-c "TRUNCATE bench.items_fenced, bench.items_plain" \
		-c "DELETE FROM fence.fences WHERE resource LIKE 'item:%'" \
		-c "VACUUM fence.fences" -c "CHECKPOINT" >/dev/null
	case $1 in
	fenced) ms=$(backend_cpu_ms "SELECT 1;" "$(loop bench.items_fenced "PERFORM fence.advance('item:' || i, 5);")") ;;
	plain) ms=$(backend_cpu_ms "SELECT 1;" "$(loop bench.items_plain "")") ;;
	esac || die "s8 $1 failed"
	record s8 "$1" "$ms"
}

interleave run_variant plain fenced

[ "$(sql -c "SELECT count(*) FROM bench.items_fenced")" = "$items" ] || die "s8: not every item was written"
plain=$(median s8 plain)
row 8 "PL/pgSQL loop of $items EXCEPTION blocks, unguarded table (backend CPU)" "$plain" ms
row 8 "the same loop, fence.advance + key-mode guarded INSERT per block, vs unguarded" \
	"$(median s8 fenced)" ms plain "$plain" "<=3.00" "$(pratio s8 fenced plain)"
note "Scenario 8: one DO block; each of $items iterations is a BEGIN ... EXCEPTION WHEN SQLSTATE 'LF001' block (a subtransaction) that calls fence.advance('item:' || i, 5) and inserts row i into a table protected with key_column (fenced), or only inserts into an unprotected table (plain); empty tables and no marks before each run; measured as the CPU time of the session's backend (user + system, from /proc), which other processes on the shared cores do not inflate; ratio is CPU time / unguarded CPU time (lower is better)."
