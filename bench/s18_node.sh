#!/usr/bin/env bash
# bench/s18_node.sh: scenario 18, acquire + release cycles per second from
# Node.js through the pgfence package (node/, libfence through koffi, each
# call on a worker thread) against libfence in C (bench/fence_cycles -t 1)
# and against node-redlock on a single node (ioredis), one connection
# each, in the same run on the same Redis:
#
#   pgfence (no heartbeat)  vs  fence_cycles -t 1       target >= 0.7x
#   pgfence (no heartbeat)  vs  node-redlock's using    target ahead (>= 1.0x)
#   the same with the client's inline option (no worker thread) vs C
#   pgfence with its heartbeat thread (the default), for reference
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

run_variant() {
	cycles_variant s18 "$1" node_cycles.js node "$BENCH_DIR/node_cycles.js" "$1" "$SECS"
}

interleave run_variant c pgfence redlock pgfence-inline pgfence-heartbeat
unpin_redis

row_vs 18 "Node.js acquire+release cycles (pgfence, 1 connection) vs libfence in C" cycles/s pgfence c "C" ">=0.70"
row_vs 18 "Node.js acquire+release cycles (pgfence) vs node-redlock, single node" cycles/s pgfence redlock "node-redlock" ">=1.00"
row_vs 18 "Node.js cycles, inline client (calls on the main thread) vs libfence in C" cycles/s pgfence-inline c "C" ">=0.70"
row_vs 18 "Node.js cycles, inline client vs node-redlock, single node" cycles/s pgfence-inline redlock "node-redlock" ">=1.00"
row_vs 18 "Node.js cycles with the heartbeat thread (the default) vs without" cycles/s pgfence-heartbeat pgfence "no heartbeat"
note "Scenario 18: a Node.js cycle is \`await client.using(r, { ttl: 10000, heartbeat: false }, () => {})\` (bench/node_cycles.js; koffi $(node -p "require('$BENCH_DIR/../node/node_modules/koffi/package.json').version"), each libfence call on a worker thread; inline: \`pgfence.connect(url, { inline: true })\`, each on the main thread), a C cycle fence_acquire + fence_release (bench/fence_cycles -t 1), a node-redlock cycle \`await redlock.using([name], 10000, async () => {})\` on one ioredis connection (node-redlock $(node -p "require('$BENCH_DIR/../node/node_modules/redlock/package.json').version"), ioredis $(node -p "require('$BENCH_DIR/../node/node_modules/ioredis/package.json').version"), Node.js $(node -p process.versions.node)); ${SECS}s per run, each $(pinned_where). With the heartbeat, each lease also starts a thread with a Redis connection of its own and stops it."
