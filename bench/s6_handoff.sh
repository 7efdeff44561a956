#!/usr/bin/env bash
# bench/s6_handoff.sh: scenario 6, threads contending for one lease.
#
# Redis only (bench/fence_contend): each thread loops fence_acquire_wait,
# holds the lease HOLD ms, releases and goes straight back to acquire.
#
#   alone    1 thread: the uncontended acquire latency (the baseline), and
#            the critical sections per second of one worker
#   t2 t4    2 and 4 threads: handoff latency (a holder's call to release
#            to the return of the next holder's acquire), the fraction of
#            the time the lease is held, critical sections per second
#   t8       8 threads for BENCH_S6_FAIR_SECS (10) seconds: each one's share
#            of the critical sections against the fair share
#
# End to end (bench/fence_workers, PostgreSQL too): 8 workers that write
# under the lease (the write announces), then work THINK ms elsewhere before they queue
# again; the handoff there ends with the next holder's first write, against
# a lone worker's acquire to first write.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

hold=${BENCH_S6_HOLD_MS:-2}
think=${BENCH_S6_THINK_MS:-10}
secs=${BENCH_S6_SECS:-3}
fair_secs=${BENCH_S6_FAIR_SECS:-10}

log "s6: handoff between contending threads, fairness"
sql >/dev/null 2>&1 <<SQL
CREATE SCHEMA IF NOT EXISTS bench;
CREATE TABLE IF NOT EXISTS bench.e2e (id int PRIMARY KEY, n bigint NOT NULL DEFAULT 0);
INSERT INTO bench.e2e (id) SELECT g FROM generate_series(0, 63) g ON CONFLICT DO NOTHING;
SQL

# field NAME LINE: the value of NAME=value in a program's output line
field() {
	tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"
}

run_variant() {
	local out n s=$secs
	case $1 in
	alone | t2 | t4 | t8)
		n=${1#t}
		[ "$n" = alone ] && n=1
		[ "$n" = 8 ] && s=$fair_secs
		out=$("$BENCH_DIR/fence_contend" -t "$n" -s "$s" -H "$hold") || die "fence_contend failed"
		record s6 "$1_cs" "$(field cs_per_s "$out")"
		record s6 "$1_acquire_p50" "$(field acquire_p50_us "$out")"
		record s6 "$1_acquire_p99" "$(field acquire_p99_us "$out")"
		record s6 "$1_handoff_p50" "$(field handoff_p50_us "$out")"
		record s6 "$1_handoff_p99" "$(field handoff_p99_us "$out")"
		record s6 "$1_busy" "$(field busy "$out")"
		record s6 "$1_min_share" "$(field min_share "$out")"
		record s6 "$1_timeouts" "$(field timeouts "$out")"
		record s6 "$1_release_p50" "$(field release_p50_us "$out")"
		;;
	e2e)
		out=$("$BENCH_DIR/fence_workers" -n 8 -r 1 -s "$SECS" -H "$hold" -T "$think") ||
			die "fence_workers failed"
		record s6 e2e_cs "$(field cs_per_s "$out")"
		record s6 e2e_handoffs "$(field handoffs "$out")"
		record s6 e2e_p50 "$(field handoff_p50_us "$out")"
		record s6 e2e_p99 "$(field handoff_p99_us "$out")"
		;;
	e2e_alone)
		out=$("$BENCH_DIR/fence_workers" -n 1 -r 1 -s "$SECS" -H "$hold" -T "$think") ||
			die "fence_workers failed"
		record s6 e2e_floor "$(field first_write_p50_us "$out")"
		;;
	esac
}

interleave run_variant alone t2 t4 t8 e2e e2e_alone

base=$(median s6 alone_acquire_p50)
row 6 "uncontended acquire latency p50 / p99, 1 thread (baseline)" \
	"$base" "µs / $(fmt "$(median s6 alone_acquire_p99)") µs"
row 6 "handoff latency p50, 4 threads on 1 resource, ${hold} ms holds, vs uncontended acquire" \
	"$(median s6 t4_handoff_p50)" µs "acquire" "$base" "<=2.00" "$(pratio s6 t4_handoff_p50 alone_acquire_p50)"
row 6 "handoff latency p50, 4 threads, vs a lone release call (1 thread, the same holds: the floor)" \
	"$(median s6 t4_handoff_p50)" µs "release" "$(median s6 alone_release_p50)" "" "$(pratio s6 t4_handoff_p50 alone_release_p50)"
row 6 "handoff latency p50, 4 threads, vs the releaser's own release call" \
	"$(median s6 t4_handoff_p50)" µs "release" "$(median s6 t4_release_p50)" "" "$(pratio s6 t4_handoff_p50 t4_release_p50)"
row 6 "handoff latency p99, 4 threads" \
	"$(median s6 t4_handoff_p99)" µs "3 ms" 3000 "<=1.00"
row 6 "lease held, fraction of the time, 4 threads" \
	"$(median s6 t4_busy)" "" "always" 1 ">=0.90"
row 6 "critical sections (${hold} ms holds), 1 worker" "$(median s6 alone_cs)" cs/s
for n in 2 4 8; do
	row 6 "$n workers on 1 resource vs 1 worker" "$(median s6 "t${n}_cs")" cs/s \
		"1 worker" "$(median s6 alone_cs)" ">=0.90" "$(pratio s6 "t${n}_cs" alone_cs)"
done
row 6 "fairness: 8 threads for ${fair_secs} s, fewest critical sections vs the fair share" \
	"$(median s6 t8_min_share)" "" "fair share" 1 ">=0.50"
row_vs 6 "end to end: handoff to the next holder's first write p50, 8 workers" µs e2e_p50 e2e_floor "floor"
row_vs 6 "end to end: handoff p99" µs e2e_p99 e2e_floor "floor"
row 6 "end to end: critical sections (${hold} ms holds, ${think} ms between)" "$(median s6 e2e_cs)" cs/s \
	"lock never idle" "$(awk -v h="$hold" 'BEGIN { print 1000 / h }')"
note "Scenario 6: fence_contend, threads looping fence_acquire_wait (TTL 5 s) + ${hold} ms hold + fence_release on one resource, Redis only, ${secs}s per run (fairness: ${fair_secs}s); handoff = a holder's call to release to the return of the next holder's acquire; acquire timeouts in the 8-thread runs: $(median s6 t8_timeouts) (median). End to end: fence_workers, 8 workers that make one fenced write (which announces the token), hold ${hold} ms and wait ${think} ms before queueing again; handoff = release call to the end of the next holder's first fence_exec (its acquire and fence_exec); floor = acquire call to the end of the first write for a lone worker (p50); handoffs per run: $(median s6 e2e_handoffs) (median)."
