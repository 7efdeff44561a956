#!/usr/bin/env bash
# bench/s5_end_to_end.sh: scenario 5, N workers (1, 2, 4, 8), each looping
# over a whole critical section through libfence (bench/fence_workers):
# blocking acquire, announce, one fenced UPDATE, release.  Once with all
# workers on one resource (they take turns), once with one resource each.
# Writes bench/out/scaling.dat for the plot.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

secs=${BENCH_S5_SECS:-3}
workers=(1 2 4 8)

log "s5: end-to-end critical sections, 1..8 workers"
sql >/dev/null 2>&1 <<SQL
DROP TABLE IF EXISTS bench.e2e;
CREATE SCHEMA IF NOT EXISTS bench;
CREATE TABLE bench.e2e (id int PRIMARY KEY, n bigint NOT NULL DEFAULT 0);
INSERT INTO bench.e2e (id) SELECT g FROM generate_series(0, 63) g;
SQL

run_variant() {
	local n=${1#*_} r out
	case $1 in one_*) r=1 ;; *) r=$n ;; esac
	out=$("$BENCH_DIR/fence_workers" -n "$n" -r "$r" -s "$secs") || die "fence_workers failed"
	set -- "$1" $out
	record s5 "$1" "${2#cs_per_s=}"
}

variants=(one_1)
for n in "${workers[@]:1}"; do
	variants+=("one_$n" "each_$n")
done
interleave run_variant "${variants[@]}"

base=$(median s5 one_1)
row 5 "critical sections, 1 worker" "$base" cs/s
: >"$BENCH_OUT/scaling.dat"
echo "1 $base $base" >>"$BENCH_OUT/scaling.dat"
for n in "${workers[@]:1}"; do
	row 5 "$n workers on 1 resource vs 1 worker" "$(median s5 "one_$n")" cs/s "1 worker" "$base" "" "$(pratio s5 "one_$n" one_1)"
	row 5 "$n workers on $n resources vs 1 worker" "$(median s5 "each_$n")" cs/s "1 worker" "$base" "" "$(pratio s5 "each_$n" one_1)"
	echo "$n $(median s5 "one_$n") $(median s5 "each_$n")" >>"$BENCH_OUT/scaling.dat"
done
note "Scenario 5: a critical section is fence_acquire_wait + fence_announce + fence_exec (UPDATE of the worker's row) + fence_release: 2 Redis round trips (acquire, release; more when the lease is busy) and $((1 + $(exec_round_trips))) PostgreSQL round trips (announce 1, fence_exec $(exec_round_trips)); ${secs}s per run."
