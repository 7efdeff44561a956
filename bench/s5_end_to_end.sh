#!/usr/bin/env bash
# bench/s5_end_to_end.sh: scenario 5, N workers (1, 2, 4, 8), each looping
# over a whole critical section through libfence (bench/fence_workers):
# blocking acquire, one fenced UPDATE (which announces the fresh token),
# release.  Once with all workers on one resource (they take turns), once
# with one resource each.  One worker also against the floor of a section
# (a PING, the plain UPDATE, a PING: two Redis round trips and one
# PostgreSQL round trip in the same client stack), once with the UPDATE's
# commit as the server's synchronous_commit (off here) has it and once
# durable (on), as the commit that moves a mark always is; and against
# the path with a separate announce before the UPDATE.  Writes
# bench/out/scaling.dat for the plot.
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
	local n=${1#*_} r out flag=
	case $1 in
	one_*) r=1 ;;
	floor_1) r=1 flag=-F ;;
	durable_1) r=1 flag="-F -D" ;;
	announce_1) r=1 flag=-A ;;
	*) r=$n ;;
	esac
	out=$("$BENCH_DIR/fence_workers" -n "$n" -r "$r" -s "$secs" $flag) || die "fence_workers failed"
	set -- "$1" $out
	record s5 "$1" "${2#cs_per_s=}"
}

variants=(one_1 floor_1 durable_1 announce_1)
for n in "${workers[@]:1}"; do
	variants+=("one_$n" "each_$n")
done
interleave run_variant "${variants[@]}"

base=$(median s5 one_1)
row 5 "critical sections, 1 worker" "$base" cs/s
row 5 "1 worker vs its floor (PING, plain UPDATE, PING)" "$base" cs/s floor "$(median s5 floor_1)" ">=0.60" "$(pratio s5 one_1 floor_1)"
row 5 "1 worker vs the floor with a durable commit (synchronous_commit = on, as a moved mark's)" "$base" cs/s "durable floor" "$(median s5 durable_1)" "" "$(pratio s5 one_1 durable_1)"
row 5 "1 worker vs the same with a separate announce first" "$base" cs/s "announce first" "$(median s5 announce_1)" "" "$(pratio s5 one_1 announce_1)"
: >"$BENCH_OUT/scaling.dat"
echo "1 $base $base" >>"$BENCH_OUT/scaling.dat"
for n in "${workers[@]:1}"; do
	row 5 "$n workers on 1 resource vs 1 worker" "$(median s5 "one_$n")" cs/s "1 worker" "$base" "" "$(pratio s5 "one_$n" one_1)"
	row 5 "$n workers on $n resources vs 1 worker" "$(median s5 "each_$n")" cs/s "1 worker" "$base" "" "$(pratio s5 "each_$n" one_1)"
	echo "$n $(median s5 "one_$n") $(median s5 "each_$n")" >>"$BENCH_OUT/scaling.dat"
done
note "Scenario 5: a critical section is fence_acquire_wait + fence_exec (UPDATE of the worker's row; its fence.advance announces the fresh token) + fence_release: 2 Redis round trips (acquire, release; more when the lease is busy) and $(exec_round_trips) PostgreSQL round trips (fence_exec), 1 more with a separate announce; ${secs}s per run."
