#!/usr/bin/env bash
# bench/s17_python.sh: scenario 17, acquire + release cycles per second from
# Python through the pgfence package (python/, libfence through ctypes)
# against libfence in C (bench/fence_cycles -t 1) and against redis-py's
# Lock, one connection each, in the same run on the same Redis:
#
#   pgfence (no heartbeat)  vs  fence_cycles -t 1   target >= 0.7x
#   pgfence (no heartbeat)  vs  redis-py Lock       target ahead (>= 1.0x)
#   pgfence with its heartbeat thread (the default ``with``), for reference
#
# A cycle is two round trips for each (an EVALSHA each way for libfence;
# SET NX PX and an EVALSHA for redis-py).  As in scenario 4, every variant
# runs pinned to one CPU together with redis-server, so that idle-vCPU
# wake-ups do not swamp a lone round trip.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

short_runs 17
PY=/usr/bin/python3
export PGFENCE_LIBFENCE=$BENCH_DIR/../client/libfence.so.2

log "s17: Python (pgfence) cycles vs libfence in C vs redis-py Lock"
$PY -c 'import redis' 2>/dev/null || die "s17 needs redis-py (python3-redis)"

pin_beside_redis

run_variant() {
	cycles_variant s17 "$1" py_cycles.py $PY "$BENCH_DIR/py_cycles.py" "$1" "$SECS"
}

interleave run_variant c pgfence redis-py pgfence-heartbeat
unpin_redis

row_vs 17 "Python acquire+release cycles (pgfence, 1 connection) vs libfence in C" cycles/s pgfence c "C" ">=0.70"
row_vs 17 "Python acquire+release cycles (pgfence) vs redis-py Lock" cycles/s pgfence redis-py "redis-py" ">=1.00"
row_vs 17 "Python cycles with the heartbeat thread (the default with) vs without" cycles/s pgfence-heartbeat pgfence "no heartbeat"
note "Scenario 17: a Python cycle is \`with client.lease(r, ttl=10, heartbeat=False): pass\` (bench/py_cycles.py), a C cycle fence_acquire + fence_release (bench/fence_cycles -t 1), a redis-py cycle \`with r.lock(name, timeout=10): pass\` (redis-py $($PY -c 'import redis; print(redis.__version__)')); ${SECS}s per run, each $(pinned_where). With the heartbeat, each lease also starts a thread with a Redis connection of its own and stops it."
