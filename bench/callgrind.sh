#!/usr/bin/env bash
# bench/callgrind.sh: CPU instructions inside the server per statement, for
# the writes of scenarios 1 and 2, and per row, for the bulk UPDATE of
# scenario 3, counted by callgrind: exact and
# repeatable whatever else the machine is doing, so a change to the
# extension can be judged before and after without the noise of the timed
# runs.  Not part of `make bench` (it takes a few minutes).
#
#   bench/callgrind.sh [CASE...]
#
#   per statement:  plain fenced plpgsql handwritten guarded
#   per row:        bulk_none bulk_table bulk_column bulk_noop bulk_plpgsql
#                   bulk_key (one UPDATE of BENCH_CG_ROWS rows, default
#                   100000; bulk_key: protected in key mode, every key's
#                   token announced earlier in the same transaction)
#   per resource:   advance_new advance_moved (fence.advance of
#                   BENCH_CG_ROWS resources in one transaction: without
#                   marks, and with marks that the token moves)
#   first writes:   first_write first_floor (fence.advance of a resource
#                   without a mark, one per transaction: the first write
#                   of a resource, which reads its prefix's floor; with
#                   no floor, and with one below the token)
#
# Each case runs a single-user backend (postgres --single) under callgrind
# twice, with 0 and with N statements (BENCH_CG_N, default 2000), on a
# throwaway cluster; the difference divided by N is the cost of one
# statement, parsing of EXECUTE included, network excluded.  The profiles
# stay in bench/out/callgrind/ for callgrind_annotate.  BENCH_CG_EXTENSION
# names another build of the extension to load instead of "fence" (same
# SQL, its control file pointing to the candidate fence.so).
# BENCH_CG_PRELOAD=1 starts the server with shared_preload_libraries=fence
# (what fence.stats needs), so that its cost is counted.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
. test/lib/servers.sh

n=${BENCH_CG_N:-2000}
cases=("$@")
rows=${BENCH_CG_ROWS:-100000}
[ ${#cases[@]} -gt 0 ] || cases=(plain fenced plpgsql handwritten guarded
	bulk_none bulk_table bulk_column bulk_noop bulk_plpgsql bulk_key
	advance_new advance_moved)
cgdir=$BENCH_OUT/callgrind
mkdir -p "$cgdir"
command -v valgrind >/dev/null || die "valgrind is not installed"

servers_init
preload=()
[ "${BENCH_CG_PRELOAD:-0}" = 1 ] && preload=(-c "shared_preload_libraries=${BENCH_CG_EXTENSION:-fence}")
pg_start -c fsync=on -c synchronous_commit=off -c autovacuum=off -c jit=off "${preload[@]}"
pgbench -i -q -s 1 -I dtgvp >/dev/null 2>&1 || die "pgbench -i failed"
sql >/dev/null <<SQL
CREATE EXTENSION ${BENCH_CG_EXTENSION:-fence};
CREATE EXTENSION bench_noop_trigger;
SELECT fence.advance('bench:0', 7);
SELECT fence.advance('bench:guarded', 7, 'bench-owner');
\i bench/handwritten.sql
INSERT INTO bench.fences VALUES ('bench:0', 7);
CREATE TABLE bench.guarded AS SELECT * FROM pgbench_accounts;
ALTER TABLE bench.guarded ADD PRIMARY KEY (aid);
SELECT fence.protect('bench.guarded', 'bench:guarded');
CREATE TABLE bench.bulk (id int PRIMARY KEY, token bigint NOT NULL DEFAULT 0, val int NOT NULL)
    WITH (autovacuum_enabled = off);
INSERT INTO bench.bulk (id, val) SELECT g, 0 FROM generate_series(1, $rows) g;
UPDATE bench.bulk SET val = val + 1;
INSERT INTO bench.fences VALUES ('bench:guarded', 7);
VACUUM ANALYZE;
CHECKPOINT;
SQL
as_pg "$PG_BINDIR/pg_ctl" -D "$FENCE_PGDATA" -w stop >/dev/null

# statements CASE COUNT: the input of one single-user run (one per line).
# A bulk case installs its trigger in both runs and updates the table in the
# counted one only.
statements() {
	awk -v c="$1" -v n="$2" -v rows="$rows" 'BEGIN {
		if (c == "bulk_key") {
			print "SELECT fence.protect('\''bench.bulk'\'', '\''benchkey'\'', key_column => '\''id'\'')"
			print "BEGIN"
			print "SELECT count(fence.advance(fence.key_resource('\''benchkey'\'', g), 7)) FROM generate_series(1, " rows ") g"
			if (n > 0) print "UPDATE bench.bulk SET val = val + 1"
			print "COMMIT"
			print "SELECT fence.unprotect('\''bench.bulk'\'')"
			exit
		}
		if (c == "first_write" || c == "first_floor") {
			if (c == "first_floor")
				print "INSERT INTO fence.floors VALUES ('\''bench:f'\'', 5)"
			print "PREPARE p(int) AS SELECT fence.advance('\''bench:f:'\'' || $1, 7)"
			for (i = 1; i <= n; i++) printf "EXECUTE p(%d)\n", i
			if (c == "first_floor")
				print "DELETE FROM fence.floors"
			exit
		}
		if (c ~ /^advance_/) {
			# advance_moved: marks at token 5 made (and committed) in both runs
			if (c == "advance_moved")
				print "SELECT count(fence.advance('\''bench:r:'\'' || g, 5)) FROM generate_series(1, " rows ") g"
			print "BEGIN"
			if (n > 0) print "SELECT count(fence.advance('\''bench:r:'\'' || g, 7)) FROM generate_series(1, " n ") g"
			print "COMMIT"
			exit
		}
		if (c ~ /^bulk_/) {
			print "SET fence.resource = '\''bench:guarded'\''"
			print "SET fence.token = '\''7'\''"
			if (c == "bulk_table") print "SELECT fence.protect('\''bench.bulk'\'', '\''bench:guarded'\'')"
			if (c == "bulk_column") print "SELECT fence.protect('\''bench.bulk'\'', '\''bench:guarded'\'', '\''token'\'')"
			if (c == "bulk_noop") print "CREATE TRIGGER bulk_noop BEFORE UPDATE ON bench.bulk FOR EACH ROW EXECUTE FUNCTION bench_noop_trigger()"
			if (c == "bulk_plpgsql") {
				print "CREATE TRIGGER bulk_guard_statement BEFORE UPDATE ON bench.bulk FOR EACH STATEMENT EXECUTE FUNCTION bench.guard_statement('\''bench:guarded'\'')"
				print "CREATE TRIGGER bulk_guard_row BEFORE UPDATE ON bench.bulk FOR EACH ROW EXECUTE FUNCTION bench.guard_row()"
			}
			if (n > 0) print "UPDATE bench.bulk SET val = val + 1"
			if (c == "bulk_table" || c == "bulk_column") print "SELECT fence.unprotect('\''bench.bulk'\'')"
			if (c == "bulk_noop") print "DROP TRIGGER bulk_noop ON bench.bulk"
			if (c == "bulk_plpgsql") {
				print "DROP TRIGGER bulk_guard_statement ON bench.bulk"
				print "DROP TRIGGER bulk_guard_row ON bench.bulk"
			}
			exit
		}
		srand(1)
		print "SET fence.resource = '\''bench:guarded'\''"
		print "SET fence.token = '\''7'\''"
		print "SET fence.owner = '\''bench-owner'\''"
		if (c == "plain")
			print "PREPARE p(int, int) AS UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2"
		else if (c == "fenced")
			print "PREPARE p(int, int) AS SELECT fence.fenced_update('\''bench:0'\'', 7, '\''UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2'\'', $1, $2)"
		else if (c == "plpgsql")
			print "PREPARE p(int, int) AS SELECT bench.fenced_deposit('\''bench:0'\'', 7, $2, $1)"
		else if (c == "handwritten") {
			print "PREPARE f AS INSERT INTO bench.fences AS f (resource, token) VALUES ('\''bench:0'\'', 7) ON CONFLICT (resource) DO UPDATE SET token = excluded.token WHERE f.token <= excluded.token RETURNING token"
			print "PREPARE p(int, int) AS UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2"
		} else if (c == "guarded")
			print "PREPARE p(int, int) AS UPDATE bench.guarded SET abalance = abalance + $1 WHERE aid = $2"
		for (i = 0; i < n; i++) {
			d = int(rand() * 10001) - 5000; a = 1 + int(rand() * 100000)
			if (c == "handwritten")
				printf "BEGIN\nEXECUTE f\nEXECUTE p(%d, %d)\nCOMMIT\n", d, a
			else
				printf "EXECUTE p(%d, %d)\n", d, a
		}
	}'
}

# instructions CASE COUNT: total instructions of one single-user run.
instructions() {
	local out=$cgdir/$1.$2
	statements "$1" "$2" >"$out.sql"
	chmod 644 "$out.sql"
	chmod 777 "$cgdir"
	as_pg valgrind --tool=callgrind --callgrind-out-file="$out.cg" \
		"$PG_BINDIR/postgres" --single -D "$FENCE_PGDATA" postgres <"$out.sql" >"$out.log" 2>&1
	grep -q ERROR "$out.log" && { grep -m3 ERROR "$out.log" >&2; die "$1: a statement failed"; }
	sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$out.log"
	# put the bulk table back to the same state for the next case (uncounted)
	case $1 in
	bulk_key | advance_* | first_*)
		printf '%s\n' "DELETE FROM fence.fences WHERE resource LIKE 'bench:r:%' OR resource LIKE 'benchkey:%' OR resource LIKE 'bench:f:%'" 'VACUUM fence.fences' |
			as_pg "$PG_BINDIR/postgres" --single -D "$FENCE_PGDATA" postgres >/dev/null 2>&1 ;;&
	bulk_*)
		echo 'VACUUM bench.bulk' | as_pg "$PG_BINDIR/postgres" --single -D "$FENCE_PGDATA" postgres >/dev/null 2>&1 ;;
	esac
}

printf '| case | instructions | per | vs |\n|---|---|---|---|\n'
plain=
bulk_none=
for c in "${cases[@]}"; do
	log "callgrind: $c"
	case $c in
	bulk_*) count=$rows unit=row base=$bulk_none ;;
	advance_*) count=$rows unit="resource" base=$bulk_none ;;
	handwritten) count=$n unit="write (4 statements)" base=$plain ;;
	*) count=$n unit=write base=$plain ;;
	esac
	per=$((($(instructions "$c" "$count") - $(instructions "$c" 0)) / count))
	case $c in plain) plain=$per ;; bulk_none) bulk_none=$per ;; esac
	printf '| %s | %d | %s | %s |\n' "$c" "$per" "$unit" \
		"$([ -n "$base" ] && awk -v a="$per" -v b="$base" 'BEGIN { printf "%.2fx", a / b }')"
done
echo
echo "Profiles: $cgdir/<case>.$n.cg (callgrind_annotate --inclusive=yes FILE | grep -E 'fence|SPI')"
