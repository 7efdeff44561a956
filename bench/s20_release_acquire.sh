#!/usr/bin/env bash
# bench/s20_release_acquire.sh: scenario 20, a worker loop's step (give
# back the lease held, take the next) through libfence, in one call
# against two, one connection, on the same Redis:
#
#   fence_cycles -L  fence_release_acquire: both scripts in one write
#   fence_cycles -l  fence_release, then fence_acquire: two round trips
#                    target: one call at least 1.5x the steps of two
#
# Each thread alternates between two resources of its own, so every step
# gives one lease back and takes another.  As in scenarios 4 and 17-19,
# both variants run pinned to one CPU together with redis-server: a lone
# round trip on an idle vCPU otherwise pays its wake-up.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

port=${FENCE_REDIS_URL##*:}
ROUNDS=${BENCH_S20_ROUNDS:-$((ROUNDS + 2))}
SECS=$((SECS < 3 ? SECS : 3))

log "s20: release-and-acquire in one call vs two calls"
pin_beside_redis

run_variant() {
	local out flag
	case $1 in
	one) flag=-L ;;
	two) flag=-l ;;
	esac
	out=$($run "$BENCH_DIR/fence_cycles" -t 1 -s "$SECS" "$flag") || die "fence_cycles $flag failed"
	set -- "$1" $out
	record s20 "$1" "${2#cycles_per_s=}"
	record s20 "$1_p50" "${3#acquire_p50_us=}"
}

interleave run_variant one two
unpin_redis

row 20 "worker loop steps (release one lease, take the next), fence_release_acquire vs fence_release + fence_acquire" \
	"$(median s20 one)" steps/s "two calls" "$(median s20 two)" ">=1.50" "$(pratio s20 one two)"
row 20 "worker loop step latency p50, one call vs two calls" \
	"$(median s20 one_p50)" µs "two calls" "$(median s20 two_p50)" "" "$(pratio s20 one_p50 two_p50)"
note "Scenario 20 ($(date -u '+%Y-%m-%d %H:%M UTC')): bench/fence_cycles -L (fence_release_acquire: the release and the acquire script in one write, one round trip) against -l (fence_release, then fence_acquire: two round trips), one connection, each thread alternating between two resources of its own; ${SECS}s per run, $ROUNDS rounds, each $([ -n "$run" ] && echo "pinned to CPU $cpu together with redis-server" || echo "unpinned (no taskset)")."
