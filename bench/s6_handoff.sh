#!/usr/bin/env bash
# bench/s6_handoff.sh: scenario 6, 8 workers on one resource with blocking
# acquire (fence_acquire_wait).  Each holder makes its first fenced write,
# keeps the lease HOLD ms, releases, then works THINK ms elsewhere before it
# queues again; there are always waiters.  Measured: the handoff latency,
# from a holder's release to the end of the next holder's first write,
# against its floor: acquire to first write by a lone worker (same loop,
# 1 worker), i.e. what an immediate wake-up of the next waiter would cost.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

hold=${BENCH_S6_HOLD_MS:-2}
think=${BENCH_S6_THINK_MS:-10}

log "s6: handoff latency, 8 workers on one resource"
sql >/dev/null 2>&1 <<SQL
CREATE SCHEMA IF NOT EXISTS bench;
CREATE TABLE IF NOT EXISTS bench.e2e (id int PRIMARY KEY, n bigint NOT NULL DEFAULT 0);
INSERT INTO bench.e2e (id) SELECT g FROM generate_series(0, 63) g ON CONFLICT DO NOTHING;
SQL

run_variant() {
	local out
	if [ "$1" = alone ]; then
		out=$("$BENCH_DIR/fence_workers" -n 1 -r 1 -s "$SECS" -H "$hold" -T "$think") ||
			die "fence_workers failed"
		set -- $out
		record s6 floor "${6#first_write_p50_us=}"
		return
	fi
	out=$("$BENCH_DIR/fence_workers" -n 8 -r 1 -s "$SECS" -H "$hold" -T "$think") ||
		die "fence_workers failed"
	set -- $out
	record s6 cs "${1#cs_per_s=}"
	record s6 handoffs "${2#handoffs=}"
	record s6 p50 "${3#handoff_p50_us=}"
	record s6 p99 "${4#handoff_p99_us=}"
}

interleave run_variant handoff alone

floor=$(median s6 floor)
row 6 "handoff latency p50, 8 workers on 1 resource" "$(median s6 p50)" µs "floor" "$floor" "" "$(pratio s6 p50 floor)"
row 6 "handoff latency p99" "$(median s6 p99)" µs "floor" "$floor" "" "$(pratio s6 p99 floor)"
row 6 "critical sections (hold ${hold} ms each)" "$(median s6 cs)" cs/s \
	"lock never idle" "$(awk -v h="$hold" 'BEGIN { print 1000 / h }')"
note "Scenario 6: holders keep the lease ${hold} ms after their first write and wait ${think} ms before queueing again; handoffs per run: $(median s6 handoffs) (median); handoff = release call to the end of the next holder's first fence_exec, which includes its acquire retry, announce (1 round trip) and fence_exec ($(exec_round_trips)); floor = acquire call to the end of the first write for a lone worker (p50)."
