#!/usr/bin/env bash
# bench/s4_acquire_release.sh: scenario 4, acquire + release cycles per
# second through libfence (bench/fence_cycles) against redis-benchmark SET
# with the same number of connections, on the same Redis server:
#
#   1 connection:  fence_cycles -t 1   vs  redis-benchmark -c 1 -t set
#   8 threads:     fence_cycles -t 8   vs  redis-benchmark -c 8 -t set
#                  (each thread its own connection and its own resource)
#   the floor:     fence_cycles -t 1   vs  fence_cycles -t 1 -p, the same
#                  two round trips as two hiredis PINGs (target: 80% of it)
#
# Also read from Redis itself (INFO commandstats): its time per EVALSHA of
# the lease scripts against its time per SET.
#
# The 1-connection pair runs with the client and redis-server pinned to one
# CPU (taskset).  On a virtual machine an idle vCPU halts between requests,
# and waking it costs about 100 us, which swamps a 20 us round trip and
# splits unpinned runs into a fast and a slow mode at random; on one CPU
# both sides measure their own cost.  The 8-connection pair runs unpinned.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

short_runs 4

log "s4: acquire+release cycles vs redis-benchmark SET"

# redis_set N: SET requests per second over N connections, run under
# "$run" (the caller's pinning, if any).
redis_set() {
	# as many requests as take about SECS seconds at ~20k/s per connection
	$run redis-benchmark -h 127.0.0.1 -p "$port" -c "$1" -n $((20000 * SECS * $1)) \
		-t set -q 2>/dev/null | tr '\r' '\n' |
		awk '/^SET: .* requests per second/ { print $2; exit }'
}

# server_us COMMAND: Redis's own time per call of COMMAND since the last
# CONFIG RESETSTAT (INFO commandstats), in microseconds.
server_us() {
	redis-cli -p "$port" info commandstats | tr -d '\r' |
		awk -F'[=,]' -v c="cmdstat_$1:calls" '$1 == c { print $6 }'
}

redis_pid=$(redis-cli -p "$port" info server | tr -d '\r' | awk -F: '$1 == "process_id" { print $2 }')
cpu=$((CORES - 1))
pin=
command -v taskset >/dev/null && [ -n "$redis_pid" ] && pin="taskset -c $cpu"

# place N: pin redis-server to one CPU for N = 1 connection, else free it.
place() {
	[ -n "$pin" ] || return 0
	if [ "$1" = 1 ]; then
		taskset -pc "$cpu" "$redis_pid" >/dev/null
	else
		taskset -pc "0-$cpu" "$redis_pid" >/dev/null
	fi
}

run_variant() {
	local out n=${1#*_} run=
	[ "$n" = 1 ] && run=$pin
	place "$n"
	redis-cli -p "$port" config resetstat >/dev/null
	case $1 in
	set_1 | set_8)
		record s4 "$1" "$(redis_set "$n")"
		record s4 "$1_server_us" "$(server_us set)"
		;;
	ping_1)
		out=$($run "$BENCH_DIR/fence_cycles" -t 1 -p -s "$SECS") || die "fence_cycles -p failed"
		set -- "$1" $out
		record s4 "$1" "${2#cycles_per_s=}"
		record s4 "$1_server_us" "$(server_us ping)"
		;;
	fence_1 | fence_8)
		out=$($run "$BENCH_DIR/fence_cycles" -t "$n" -s "$SECS") || die "fence_cycles failed"
		set -- "$1" $out
		record s4 "$1" "${2#cycles_per_s=}"
		record s4 "$1_p50" "${3#acquire_p50_us=}"
		record s4 "$1_p99" "${4#acquire_p99_us=}"
		record s4 "$1_server_us" "$(server_us evalsha)"
		;;
	esac
}

interleave run_variant set_1 fence_1 ping_1 set_8 fence_8
place 8

row_vs 4 "acquire+release cycles, 1 connection, vs redis-benchmark -c 1 SET" cycles/s fence_1 set_1 "SET" ">=0.45"
row_vs 4 "acquire+release cycles, 1 connection, vs its floor: two PINGs (hiredis, pinned alike)" cycles/s fence_1 ping_1 "2 PINGs" ">=0.80"
row 4 "acquire latency p50 / p99, 1 connection" \
	"$(median s4 fence_1_p50)" "µs / $(fmt "$(median s4 fence_1_p99)") µs"
row_vs 4 "acquire+release cycles, 8 threads on 8 resources, vs redis-benchmark -c 8 SET" cycles/s fence_8 set_8 "SET"
row 4 "acquire latency p50 / p99, 8 threads" \
	"$(median s4 fence_8_p50)" "µs / $(fmt "$(median s4 fence_8_p99)") µs"
row_vs 4 "Redis server time per EVALSHA (acquire or release script) vs per SET" µs fence_1_server_us set_1_server_us "SET"
row_vs 4 "Redis server time per EVALSHA (acquire or release script) vs per PING" µs fence_1_server_us ping_1_server_us "PING"
note "Scenario 4: a cycle is fence_acquire + fence_release, 2 round trips (each one EVALSHA), against 1 round trip per SET; ${SECS}s per run; the 1-connection pair $([ -n "$pin" ] && echo "runs pinned to CPU $cpu together with redis-server" || echo "runs unpinned (no taskset)") (idle-vCPU wake-ups otherwise dominate a lone round trip)."
