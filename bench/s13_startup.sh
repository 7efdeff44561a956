#!/usr/bin/env bash
# bench/s13_startup.sh: scenario 13, what a whole fence process costs, from
# exec to exit, against the small commands a script would run instead, in
# the same run and on the same Redis:
#
#   fence run --no-pg R -- true                  vs  flock FILE true
#   fence acquire R, then fence release R OWNER  vs  flock FILE true
#   (for reference)  fence run R -- true announcing the token to the
#   bench's PostgreSQL (run's default where PGHOST is set, as here),
#   sh -c true, redis-cli ping
#
# A lease taken from a shell is a process start more than a round trip:
# the issue's targets are run at most 2x flock and acquire + release at
# most 3x flock.  Each variant runs BENCH_S13_RUNS times (default 30),
# interleaved run by run in rotating order; a run's time is the wall time
# of the process as bash's fork, exec and wait see it (EPOCHREALTIME), the
# same overhead for every variant, and its CPU time (bash's "time", to the
# millisecond), which other processes on shared cores inflate less.  Ratios are medians over runs of the
# variant against flock in the same run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

FENCE=${FENCE_BIN:-$BENCH_DIR/../client/fence}
RUNS=${BENCH_S13_RUNS:-30}
lockfile=$BENCH_OUT/s13.lock
host_port=${FENCE_REDIS_URL#redis://}
res=bench-s13-$$

log "s13: whole processes: fence run, acquire + release, flock, sh -c true, redis-cli ping"

# timed OUT CMD...: run CMD with its output to OUT; add its wall time in
# microseconds to $wall_us (EPOCHREALTIME) and its user and system seconds
# to $cpu (bash's "time", which gives milliseconds).  Neither forks a
# subshell, whose cost would be counted too.
TIMEFORMAT='%3U %3S'
timed() {
	local out=$1 t0 t1
	shift
	t0=${EPOCHREALTIME/./}
	{ time "$@" >"$out" 2>/dev/null; } 2>"$BENCH_OUT/s13.time"
	t1=${EPOCHREALTIME/./}
	wall_us=$((wall_us + 10#$t1 - 10#$t0))
	cpu+=" $(<"$BENCH_OUT/s13.time")"
}

# once VARIANT RUN: time one process (two for acquire + release) and record
# its wall time and its CPU time (user + system, the process and its
# children: fence run's command too), in milliseconds
once() {
	local wall_us=0 cpu= owner
	case $1 in
	flock) timed /dev/null flock "$lockfile" true ;;
	sh) timed /dev/null sh -c true ;;
	ping) timed /dev/null redis-cli -h "${host_port%:*}" -p "${host_port##*:}" ping ;;
	# flock fences nothing: the run to compare announces to no PostgreSQL
	run) timed /dev/null "$FENCE" run --no-pg "$res" -- true ;;
	runpg) timed /dev/null "$FENCE" run "$res" -- true ;;
	acqrel)
		timed "$BENCH_OUT/s13.acq" "$FENCE" acquire "$res"
		owner=$(sed -n 's/^FENCE_OWNER=//p' "$BENCH_OUT/s13.acq")
		timed /dev/null "$FENCE" release "$res" "$owner" ;;
	esac
	record 13 "$1" "$(awk -v us="$wall_us" 'BEGIN { printf "%.3f", us / 1000 }')"
	record 13 "$1-cpu" "$(awk -v t="$cpu" 'BEGIN {
		n = split(t, f, " "); for (i = 1; i <= n; i++) c += f[i]; printf "%.0f", c * 1000 }')"
}

# warm the page cache and Redis's script cache once
"$FENCE" run "$res" -- true
flock "$lockfile" true
ROUNDS=$RUNS interleave once flock run acqrel runpg sh ping

flock_ms=$(median 13 flock)
row 13 "fence run --no-pg R -- true (whole process) vs flock FILE true" "$(median 13 run)" ms \
	"flock" "$flock_ms" "<=2.00" "$(pratio 13 run flock)"
row 13 "fence acquire + fence release (two processes) vs flock FILE true" "$(median 13 acqrel)" ms \
	"flock" "$flock_ms" "<=3.00" "$(pratio 13 acqrel flock)"
row 13 "fence run R -- true announcing to PostgreSQL vs flock FILE true (reference)" "$(median 13 runpg)" ms \
	"flock" "$flock_ms" "" "$(pratio 13 runpg flock)"
row 13 "sh -c true vs flock FILE true (reference)" "$(median 13 sh)" ms \
	"flock" "$flock_ms" "" "$(pratio 13 sh flock)"
row 13 "redis-cli ping vs flock FILE true (reference)" "$(median 13 ping)" ms \
	"flock" "$flock_ms" "" "$(pratio 13 ping flock)"
flock_cpu=$(median 13 flock-cpu)
row 13 "CPU time (user + system): fence run --no-pg R -- true vs flock" "$(median 13 run-cpu)" ms \
	"flock" "$flock_cpu" "" "$(pratio 13 run-cpu flock-cpu)"
row 13 "CPU time: fence acquire + fence release vs flock" "$(median 13 acqrel-cpu)" ms \
	"flock" "$flock_cpu" "" "$(pratio 13 acqrel-cpu flock-cpu)"
note "Scenario 13: wall and CPU time (user + system, with children) of whole processes from bash (fork, exec, wait), $RUNS runs of each, interleaved in rotating order; fence on a single local Redis, its run with --no-pg but in the reference row that announces ($(basename "$FENCE"): $(ldd "$FENCE" | grep -c '=>') shared libraries)."
