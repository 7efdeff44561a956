#!/usr/bin/env bash
# bench/s1_fenced_update.sh: scenario 1, a single-row write under pgbench,
# one statement per transaction.
#
#   plain        UPDATE pgbench_accounts ... (autocommit)         baseline
#   fenced       SELECT fence.fenced_update(R, T, 'UPDATE ...', delta, aid)
#   handwritten  BEGIN; INSERT ... ON CONFLICT ... WHERE token <= T; UPDATE; COMMIT
#   plpgsql      SELECT bench.fenced_deposit(R, T, aid, delta)
#
# Each pgbench client writes under its own resource "bench:<client>" with a
# token announced before the runs, as a worker holding a lease would.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

log "s1: fenced_update vs plain UPDATE and the hand-written baselines"
pgbench_accounts
sql -f "$BENCH_DIR/handwritten.sql"
sql >/dev/null <<SQL
TRUNCATE bench.fences;
SELECT fence.advance('bench:' || c, $token) FROM generate_series(0, $CLIENTS - 1) c;
INSERT INTO bench.fences SELECT 'bench:' || c, $token FROM generate_series(0, $CLIENTS - 1) c;
SQL

declare -A script=(
	[plain]=update_plain.pgbench
	[fenced]=update_fenced.pgbench
	[handwritten]=update_handwritten.pgbench
	[plpgsql]=update_plpgsql.pgbench
)

run_variant() {
	record s1 "$1" "$(pgb "${script[$1]}" -D accounts=$accounts -D token=$token)"
}

interleave run_variant plain fenced handwritten plpgsql

plain=$(median s1 plain)
row 1 "plain autocommit UPDATE (pgbench)" "$plain" tx/s
row 1 "fence.fenced_update vs plain" "$(median s1 fenced)" tx/s plain "$plain" ">=0.80" "$(pratio s1 fenced plain)"
row 1 "hand-written SQL transaction vs plain" "$(median s1 handwritten)" tx/s plain "$plain" "" "$(pratio s1 handwritten plain)"
row 1 "hand-written PL/pgSQL function vs plain" "$(median s1 plpgsql)" tx/s plain "$plain" "" "$(pratio s1 plpgsql plain)"
row_vs 1 "fence.fenced_update vs hand-written SQL" tx/s fenced handwritten "hand SQL" ">=2.50"
row_vs 1 "fence.fenced_update vs hand-written PL/pgSQL" tx/s fenced plpgsql "PL/pgSQL" ">=2.50"
note "Scenario 1: pgbench -M prepared, $CLIENTS clients, $CORES threads, ${SECS}s per run, $ROUNDS runs each; one resource per client; round trips per write: plain 1, fenced_update 1, hand-written SQL 4, PL/pgSQL 1."
