#!/usr/bin/env bash
# bench/s15_transfer_cs.sh: scenario 15, a transfer's whole critical section
# through libfence: scenario 12 measures the SQL alone, this
# adds the leases.  BENCH_S15_WORKERS threads of bench/fence_transfer, each
# with its own Redis and PostgreSQL connection, draw random accounts among
# BENCH_S15_ACCOUNTS, each account the resource "acct:<aid>":
#
#   single    fence_acquire acct:a, SELECT fence.fenced_update (one row),
#             fence_release                                       baseline
#   transfer  fence_acquire_many {acct:a, acct:b}, SELECT
#             fence.fenced_update_many (both rows in one UPDATE),
#             fence_leases_release
#   two       the transfer as two single critical sections in a row
#             (debit, then credit; not atomic)
#
# The issue's target: a transfer at least 0.7x the single critical
# sections per second.  Before the runs every account is acquired and
# released once (Redis only) and announced at token 1, so every write of
# the runs moves its account's mark, as a worker's first write after an
# acquire does.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

accounts=${BENCH_S15_ACCOUNTS:-100000}
workers=${BENCH_S15_WORKERS:-4}

log "s15: transfer critical sections through libfence, $workers workers"
sql >/dev/null <<SQL
CREATE SCHEMA IF NOT EXISTS bench;
DROP TABLE IF EXISTS bench.s15_accounts;
CREATE TABLE bench.s15_accounts (aid int PRIMARY KEY, abalance bigint NOT NULL DEFAULT 0);
INSERT INTO bench.s15_accounts (aid) SELECT g FROM generate_series(1, $accounts) g;
DELETE FROM fence.fences WHERE resource LIKE 'acct:%';
SQL
"$BENCH_DIR/fence_transfer" -m warm -n "$workers" -a "$accounts" >/dev/null ||
	die "s15: fence_transfer -m warm failed"
sql >/dev/null <<SQL
SELECT count(fence.advance('acct:' || a, 1)) FROM generate_series(1, $accounts) a;
VACUUM ANALYZE bench.s15_accounts, fence.fences;
CHECKPOINT;
SQL

# redis_cpu_s: the CPU time redis-server has used so far, in seconds
redis_cpu_s() {
	redis-cli -u "$FENCE_REDIS_URL" INFO cpu | tr -d '\r' |
		awk -F: '/^used_cpu_(sys|user):/ { t += $2 } END { print t }'
}

net=0
run_variant() {
	local out r0 r1
	r0=$(redis_cpu_s)
	out=$("$BENCH_DIR/fence_transfer" -m "$1" -n "$workers" -a "$accounts" -s "$SECS") ||
		die "fence_transfer -m $1 failed"
	r1=$(redis_cpu_s)
	set -- "$1" $out
	record s15 "$1" "${2#cs_per_s=}"
	record s15 "$1_redis_us" "${3#redis_us=}"
	record s15 "$1_pg_us" "${4#pg_us=}"
	record s15 "$1_busy" "${5#busy=}"
	net=$((net + ${6#net=}))
	local cpu_redis cpu_client=${8#cpu_client_us=} cpu_pg=${9#cpu_pg_us=}
	cpu_redis=$(awk -v a="$r0" -v b="$r1" -v n="${7#sections=}" 'BEGIN { printf "%.1f\n", (b - a) * 1e6 / n }')
	record s15 "$1_cpu_redis" "$cpu_redis"
	record s15 "$1_cpu_client" "$cpu_client"
	record s15 "$1_cpu_pg" "$cpu_pg"
	# sections per CPU second: the rate of a machine whose cores do nothing else
	record s15 "$1_per_cpu_s" "$(awk -v a="$cpu_redis" -v b="$cpu_client" -v c="$cpu_pg" 'BEGIN { printf "%.1f\n", 1e6 / (a + b + c) }')"
}

interleave run_variant single transfer two

# every write landed once: the transfers moved money and lost none, the
# singles added what they say; and the writes moved their accounts' marks
sum=$(sql -c "SELECT sum(abalance) FROM bench.s15_accounts")
[ "$sum" = "$net" ] || die "s15: the balances sum to $sum, the runs added $net"
moved=$(sql -c "SELECT count(*) FROM fence.fences WHERE resource LIKE 'acct:%' AND token > 1")
[ "$moved" -gt 0 ] || die "s15: no account's mark moved"

single=$(median s15 single)
row 15 "single-account critical section: fence_acquire, fence.fenced_update, fence_release ($workers workers)" "$single" cs/s
row 15 "transfer: fence_acquire_many of 2, fence.fenced_update_many, fence_leases_release, vs single" \
	"$(median s15 transfer)" cs/s single "$single" ">=0.70" "$(pratio s15 transfer single)"
row_vs 15 "transfer vs the same as two single critical sections in a row" cs/s transfer two "two singles"
for v in single transfer two; do
	row 15 "$v: wall time per section in Redis (acquire, release) / in PostgreSQL" \
		"$(median s15 "${v}_redis_us")" "µs / $(fmt "$(median s15 "${v}_pg_us")") µs"
	row 15 "$v: CPU time per section, redis-server / PostgreSQL backends / the client" \
		"$(median s15 "${v}_cpu_redis")" "µs / $(fmt "$(median s15 "${v}_cpu_pg")") / $(fmt "$(median s15 "${v}_cpu_client")") µs"
done
row 15 "transfer vs single, sections per CPU second (client and both servers)" \
	"$(median s15 transfer_per_cpu_s)" cs/s single "$(median s15 single_per_cpu_s)" "" \
	"$(pratio s15 transfer_per_cpu_s single_per_cpu_s)"
row 15 "transfer vs two singles, sections per CPU second" \
	"$(median s15 transfer_per_cpu_s)" cs/s "two singles" "$(median s15 two_per_cpu_s)" "" \
	"$(pratio s15 transfer_per_cpu_s two_per_cpu_s)"
note "Scenario 15: bench/fence_transfer, $workers threads, each with its own Redis and PostgreSQL connection, ${SECS}s per run, $ROUNDS runs each; random accounts of $accounts (bench.s15_accounts), each account the resource acct:<aid>, every account acquired once and announced at token 1 before the runs, so that every write moves its mark; leases of 5 s, no heartbeat, fence_acquire and fence_acquire_many (an account another worker holds: a new draw, counted as busy; $(median s15 transfer_busy) per transfer run, median). Round trips per section: single 3 (acquire, the fenced_update statement with prepared statements, release); transfer 3 on one Redis (both acquire scripts in one pipeline, 1 statement, both release scripts in one pipeline); two singles 6. Wall time in Redis and PostgreSQL: the mean per section over all threads, waiting for a CPU included. CPU time: redis-server's used_cpu_sys + used_cpu_user (INFO cpu) over the run, the workers' backends' and the client process's user + system time (/proc, getrusage), per section; sections per CPU second = 1 / their sum, what the rate would be on cores that do nothing else."
