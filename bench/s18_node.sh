#!/usr/bin/env bash
# bench/s18_node.sh: scenario 18, acquire + release cycles per second from
# Node.js through the pgfence package (node/, libfence through koffi; the
# default client makes each call on the main thread, bounded by its inline
# bound) against libfence in C (bench/fence_cycles -t 1)
# and against node-redlock on a single node (ioredis), one connection
# each, in the same run on the same Redis:
#
#   pgfence (no heartbeat)  vs  fence_cycles -t 1       target >= 0.7x
#   pgfence (no heartbeat)  vs  node-redlock's using    target ahead (>= 1.0x)
#   the same with the client's inline option (unbounded) vs C
#   the same with inline: false (every call on a worker thread) vs C
#   pgfence with its heartbeat thread (the default), for reference
#   bare loops over libfence through koffi, without the package: calls on
#   the main thread, koffi's asynchronous calls, and one worker thread
#   handed each call through a SharedArrayBuffer (Atomics.notify and
#   Atomics.waitAsync): what a hand-off to another thread costs alone
#
# A cycle is two round trips for each.  As in scenarios 4 and 17, every
# variant runs pinned to one CPU together with redis-server (Node's worker
# threads too), so that idle-vCPU wake-ups do not swamp a lone round trip.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

short_runs 18
export PGFENCE_LIBFENCE=$BENCH_DIR/../client/libfence.so.2

log "s18: Node.js (pgfence) cycles vs libfence in C vs node-redlock"
command -v node >/dev/null || die "s18 needs Node.js (nodejs)"
# pgfence's koffi, node-redlock and ioredis as node/'s lock file pins them
if ! [ "$BENCH_DIR/../node/node_modules/.package-lock.json" -nt "$BENCH_DIR/../node/package-lock.json" ]; then
	(cd "$BENCH_DIR/../node" && npm ci --no-audit --no-fund --loglevel=error >&2) ||
		die "npm ci in node/ failed"
fi

pin_beside_redis

# redis_cpu_s: redis-server's CPU seconds so far (user + system)
redis_cpu_s() {
	redis-cli -p "$port" info cpu | tr -d '\r' |
		awk -F: '$1 == "used_cpu_sys" || $1 == "used_cpu_user" { s += $2 } END { printf "%.6f\n", s }'
}

# run_variant VARIANT: one run; records its cycles per second, and as
# VARIANT-cpu the CPU microseconds a cycle cost the client process (every
# thread) and redis-server together, which waiting for a CPU that other
# work holds does not inflate.  fence_cycles' CPU is /usr/bin/time's over
# the process (its connect included: well under a microsecond per cycle);
# node_cycles.js measures its loop itself (process.cpuUsage).
run_variant() {
	local v=$1 out rate n cpu r0 r1
	r0=$(redis_cpu_s)
	case $v in
	c)
		out=$(/usr/bin/time -f 'cpu_s=%U+%S' -o "$BENCH_OUT/s18.time" \
			$run "$BENCH_DIR/fence_cycles" -t 1 -s "$SECS") || die "fence_cycles failed"
		rate=${out%% *}
		rate=${rate#cycles_per_s=}
		n=$(awk -v r="$rate" -v s="$SECS" 'BEGIN { printf "%d\n", r * s }')
		cpu=$(awk -F'[=+]' -v n="$n" '/^cpu_s=/ { printf "%.1f\n", ($2 + $3) * 1e6 / n }' "$BENCH_OUT/s18.time")
		;;
	*)
		out=$($run node "$BENCH_DIR/node_cycles.js" "$v" "$SECS") || die "node_cycles.js $v failed"
		read -r rate n cpu <<<"$out"
		rate=${rate#cycles_per_s=}
		n=${n#cycles=}
		cpu=${cpu#cpu_us_per_cycle=}
		;;
	esac
	r1=$(redis_cpu_s)
	record s18 "$v" "$rate"
	record s18 "$v-cpu" "$(awk -v c="$cpu" -v a="$r0" -v b="$r1" -v n="$n" 'BEGIN { printf "%.1f\n", c + (b - a) * 1e6 / n }')"
}

interleave run_variant c pgfence redlock pgfence-inline pgfence-worker pgfence-heartbeat koffi-sync koffi-async koffi-worker
unpin_redis

row 18 "Node.js acquire+release cycles (pgfence, default client: inline, bounded, 1 connection) vs libfence in C" \
	"$(median s18 pgfence)" cycles/s "C" "$(median s18 c)" ">=0.70" "$(pratio s18 pgfence c)"
row 18 "Node.js acquire+release cycles (pgfence) vs node-redlock, single node" \
	"$(median s18 pgfence)" cycles/s "node-redlock" "$(median s18 redlock)" ">=1.00" "$(pratio s18 pgfence redlock)"
row 18 "Node.js cycles, inline client (calls on the main thread) vs libfence in C" \
	"$(median s18 pgfence-inline)" cycles/s "C" "$(median s18 c)" ">=0.70" "$(pratio s18 pgfence-inline c)"
row 18 "Node.js cycles, inline client vs node-redlock, single node" \
	"$(median s18 pgfence-inline)" cycles/s "node-redlock" "$(median s18 redlock)" ">=1.00" "$(pratio s18 pgfence-inline redlock)"
row 18 "Node.js cycles, worker-thread client (inline: false) vs libfence in C" \
	"$(median s18 pgfence-worker)" cycles/s "C" "$(median s18 c)" "" "$(pratio s18 pgfence-worker c)"
row 18 "Node.js cycles, default client (bounded inline) vs worker-thread client" \
	"$(median s18 pgfence)" cycles/s "worker" "$(median s18 pgfence-worker)" "" "$(pratio s18 pgfence pgfence-worker)"
row 18 "Node.js cycles with the heartbeat thread (the default) vs without" \
	"$(median s18 pgfence-heartbeat)" cycles/s "no heartbeat" "$(median s18 pgfence)" "" "$(pratio s18 pgfence-heartbeat pgfence)"
row 18 "Node.js bare loop, libfence's calls through koffi on the main thread (no package) vs libfence in C" \
	"$(median s18 koffi-sync)" cycles/s "C" "$(median s18 c)" "" "$(pratio s18 koffi-sync c)"
row 18 "Node.js bare loop, each call through koffi's asynchronous call vs libfence in C" \
	"$(median s18 koffi-async)" cycles/s "C" "$(median s18 c)" "" "$(pratio s18 koffi-async c)"
row 18 "Node.js bare loop, each call on one worker thread (SharedArrayBuffer, Atomics.waitAsync) vs libfence in C" \
	"$(median s18 koffi-worker)" cycles/s "C" "$(median s18 c)" "" "$(pratio s18 koffi-worker c)"
row 18 "Node.js bare loop, one worker thread vs koffi's asynchronous calls" \
	"$(median s18 koffi-worker)" cycles/s "koffi async" "$(median s18 koffi-async)" "" "$(pratio s18 koffi-worker koffi-async)"
row 18 "Node.js CPU per cycle (client + redis-server), pgfence vs libfence in C" \
	"$(median s18 pgfence-cpu)" "us/cycle" "C" "$(median s18 c-cpu)" "" "$(pratio s18 c-cpu pgfence-cpu)"
row 18 "Node.js CPU per cycle, worker-thread client vs libfence in C" \
	"$(median s18 pgfence-worker-cpu)" "us/cycle" "C" "$(median s18 c-cpu)" "" "$(pratio s18 c-cpu pgfence-worker-cpu)"
row 18 "Node.js CPU per cycle, inline client vs libfence in C" \
	"$(median s18 pgfence-inline-cpu)" "us/cycle" "C" "$(median s18 c-cpu)" "" "$(pratio s18 c-cpu pgfence-inline-cpu)"
row 18 "Node.js CPU per cycle, bare loop on the main thread vs libfence in C" \
	"$(median s18 koffi-sync-cpu)" "us/cycle" "C" "$(median s18 c-cpu)" "" "$(pratio s18 c-cpu koffi-sync-cpu)"
row 18 "Node.js CPU per cycle, bare loop through koffi's asynchronous calls vs on the main thread" \
	"$(median s18 koffi-async-cpu)" "us/cycle" "main thread" "$(median s18 koffi-sync-cpu)" "" "$(pratio s18 koffi-sync-cpu koffi-async-cpu)"
row 18 "Node.js CPU per cycle, bare loop on one worker thread vs through koffi's asynchronous calls" \
	"$(median s18 koffi-worker-cpu)" "us/cycle" "koffi async" "$(median s18 koffi-async-cpu)" "" "$(pratio s18 koffi-async-cpu koffi-worker-cpu)"
note "Scenario 18: a Node.js cycle is \`await client.using(r, { ttl: 10000, heartbeat: false }, () => {})\` (bench/node_cycles.js; koffi $(node -p "require('$BENCH_DIR/../node/node_modules/koffi/package.json').version"), the default client: each libfence call on the main thread, for at most its inline bound of 5 ms, past which it would finish on a worker thread; inline: \`pgfence.connect(url, { inline: true })\`, each on the main thread, unbounded; worker-thread: \`{ inline: false }\`, each on one of koffi's worker threads), a C cycle fence_acquire + fence_release (bench/fence_cycles -t 1), a node-redlock cycle \`await redlock.using([name], 10000, async () => {})\` on one ioredis connection (node-redlock $(node -p "require('$BENCH_DIR/../node/node_modules/redlock/package.json').version"), ioredis $(node -p "require('$BENCH_DIR/../node/node_modules/ioredis/package.json').version"), Node.js $(node -p process.versions.node)); ${SECS}s per run, each $(pinned_where). With the heartbeat, each lease also starts a thread with a Redis connection of its own and stops it. The bare loops (bench/node_cycles.js koffi-*) call fence_acquire_wait (no wait), fence_release and fence_lease_free without the package: on the main thread; each of the two round trips through koffi's asynchronous call; or each handed to one long-lived worker thread that makes it synchronously (a request through a SharedArrayBuffer and Atomics.notify, the answer back through Atomics.waitAsync). CPU per cycle: the client process's user + system time (every thread; fence_cycles under /usr/bin/time, node_cycles.js over its loop) and redis-server's (INFO cpu) over the run, per cycle; its ratio is C's CPU per cycle over the variant's, the rate ratio on a CPU that does nothing else, which the load of other work on the machine does not move as it moves rates."
