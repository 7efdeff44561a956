#!/usr/bin/env bash
# bench/s13_startup.sh: scenario 13, what a whole fence process costs, from
# exec to exit, against the small commands a script would run instead, in
# the same run and on the same Redis:
#
#   fence run R -- true                          vs  flock FILE true
#   fence acquire R, then fence release R OWNER  vs  flock FILE true
#   (for reference)  sh -c true, redis-cli ping
#
# A lease taken from a shell is a process start more than a round trip:
# the issue's targets are run at most 2x flock and acquire + release at
# most 3x flock.  Each variant runs BENCH_S13_RUNS times (default 30),
# interleaved run by run in rotating order; a run's time is the wall time
# of the process as bash's fork, exec and wait see it (EPOCHREALTIME), the
# same overhead for every variant.  Ratios are medians over runs of the
# variant against flock in the same run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

FENCE=${FENCE_BIN:-$BENCH_DIR/../client/fence}
RUNS=${BENCH_S13_RUNS:-30}
lockfile=$BENCH_OUT/s13.lock
host_port=${FENCE_REDIS_URL#redis://}
res=bench-s13-$$

log "s13: whole processes: fence run, acquire + release, flock, sh -c true, redis-cli ping"

# once VARIANT RUN: time one process (two for acquire + release); the clock
# is read without a subshell, whose fork would count too
once() {
	local t0 t1 t2 owner
	case $1 in
	flock)
		t0=${EPOCHREALTIME/./}; flock "$lockfile" true; t1=${EPOCHREALTIME/./} ;;
	sh)
		t0=${EPOCHREALTIME/./}; sh -c true; t1=${EPOCHREALTIME/./} ;;
	ping)
		t0=${EPOCHREALTIME/./}; redis-cli -h "${host_port%:*}" -p "${host_port##*:}" ping >/dev/null; t1=${EPOCHREALTIME/./} ;;
	run)
		t0=${EPOCHREALTIME/./}; "$FENCE" run "$res" -- true; t1=${EPOCHREALTIME/./} ;;
	acqrel)
		t0=${EPOCHREALTIME/./}; "$FENCE" acquire "$res" >"$BENCH_OUT/s13.acq"; t1=${EPOCHREALTIME/./}
		owner=$(sed -n 's/^FENCE_OWNER=//p' "$BENCH_OUT/s13.acq")
		t2=${EPOCHREALTIME/./}; "$FENCE" release "$res" "$owner"; t1=$((t1 + ${EPOCHREALTIME/./} - t2)) ;;
	esac
	record 13 "$1" "$(awk -v us=$((t1 - t0)) 'BEGIN { printf "%.3f", us / 1000 }')"
}

# warm the page cache and Redis's script cache once
"$FENCE" run "$res" -- true
flock "$lockfile" true
ROUNDS=$RUNS interleave once flock run acqrel sh ping

flock_ms=$(median 13 flock)
row 13 "fence run R -- true (whole process) vs flock FILE true" "$(median 13 run)" ms \
	"flock" "$flock_ms" "<=2.00" "$(pratio 13 run flock)"
row 13 "fence acquire + fence release (two processes) vs flock FILE true" "$(median 13 acqrel)" ms \
	"flock" "$flock_ms" "<=3.00" "$(pratio 13 acqrel flock)"
row 13 "sh -c true vs flock FILE true (reference)" "$(median 13 sh)" ms \
	"flock" "$flock_ms" "" "$(pratio 13 sh flock)"
row 13 "redis-cli ping vs flock FILE true (reference)" "$(median 13 ping)" ms \
	"flock" "$flock_ms" "" "$(pratio 13 ping flock)"
note "Scenario 13: wall time of whole processes from bash (fork, exec, wait), $RUNS runs of each, interleaved in rotating order; fence without --pg on a single local Redis ($(basename "$FENCE"): $(ldd "$FENCE" | grep -c '=>') shared libraries)."
