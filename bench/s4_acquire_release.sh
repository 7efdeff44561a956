#!/usr/bin/env bash
# bench/s4_acquire_release.sh: scenario 4, acquire + release cycles per
# second through libfence (bench/fence_cycles) against redis-benchmark SET
# with the same number of connections, on the same Redis server:
#
#   1 connection:  fence_cycles -t 1   vs  redis-benchmark -c 1 -t set
#   8 threads:     fence_cycles -t 8   vs  redis-benchmark -c 8 -t set
#                  (each thread its own connection and its own resource)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

port=${FENCE_REDIS_URL##*:}

log "s4: acquire+release cycles vs redis-benchmark SET"

redis_set() {
	# as many requests as take about SECS seconds at ~20k/s per connection
	redis-benchmark -h 127.0.0.1 -p "$port" -c "$1" -n $((20000 * SECS * $1)) \
		-t set -q 2>/dev/null | tr '\r' '\n' |
		awk '/^SET: .* requests per second/ { print $2; exit }'
}

run_variant() {
	local out
	case $1 in
	set_1) record s4 set_1 "$(redis_set 1)" ;;
	set_8) record s4 set_8 "$(redis_set 8)" ;;
	fence_1 | fence_8)
		out=$("$BENCH_DIR/fence_cycles" -t "${1#fence_}" -s "$SECS") || die "fence_cycles failed"
		set -- "$1" $out
		record s4 "$1" "${2#cycles_per_s=}"
		record s4 "$1_p50" "${3#acquire_p50_us=}"
		record s4 "$1_p99" "${4#acquire_p99_us=}"
		;;
	esac
}

interleave run_variant set_1 fence_1 set_8 fence_8

row 4 "acquire+release cycles, 1 connection, vs redis-benchmark -c 1 SET" \
	"$(median s4 fence_1)" cycles/s "SET" "$(median s4 set_1)" ">=0.45"
row 4 "acquire latency p50 / p99, 1 connection" \
	"$(median s4 fence_1_p50)" "µs / $(fmt "$(median s4 fence_1_p99)") µs"
row 4 "acquire+release cycles, 8 threads on 8 resources, vs redis-benchmark -c 8 SET" \
	"$(median s4 fence_8)" cycles/s "SET" "$(median s4 set_8)"
row 4 "acquire latency p50 / p99, 8 threads" \
	"$(median s4 fence_8_p50)" "µs / $(fmt "$(median s4 fence_8_p99)") µs"
note "Scenario 4: a cycle is fence_acquire + fence_release, 2 round trips (each one EVALSHA), against 1 round trip per SET; ${SECS}s per run."
