#!/usr/bin/env bash
# bench/s7_topologies.sh: scenario 7, acquire + release cycles per second
# on each Redis topology, one connection each (bench/fence_cycles -t 1),
# against a single node in the same rounds:
#
#   single     redis://            a plain redis-server
#   cluster    redis-cluster://    3 masters, no replicas
#   master     redis://            the master Sentinel watches, addressed
#                                  directly: it has a replica to feed
#   sentinel   redis-sentinel://   the same master, found through 3 sentinels
#   quorum3    3 x redis://        a quorum of 3 independent nodes
#   redlock3   the same 3 nodes through node-redlock (bench/redlock,
#              versions pinned in its package-lock.json, installed here
#              with npm ci): Redlock without fencing tokens, the peer
#   tls        rediss://           the single node's TLS port (the same
#                                  server: only the transport differs)
#   single_c, tls_c                the same two with a new connection per
#                                  cycle (fence_cycles -c), as each run of
#                                  the fence command makes: TLS adds its
#                                  handshake and loading the CA
#
# Sentinel is compared with its own master addressed directly: both pay
# for the replication stream (the replica runs on the same cores), which is
# the server's cost, not the client's.  All servers are this scenario's
# own (test/lib/servers.sh), unpinned: scenario 4 measures the pinned
# single-node figure.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$BENCH_DIR/../test/lib/servers.sh"
. "$BENCH_DIR/../test/lib/tls.sh"

short_runs 7

log "s7: acquire+release cycles on each topology vs a single node"
servers_init
tls_certs "$FENCE_TMP/tls"
tls_port=$(spare_port)
redis_start s7single --tls-port "$tls_port" --tls-cert-file "$FENCE_TMP/tls/server.pem" \
	--tls-key-file "$FENCE_TMP/tls/server.key" --tls-auth-clients no
cluster_start s7c 3 >/dev/null
redis_start s7m --repl-diskless-sync-delay 0
redis_start s7r --replicaof 127.0.0.1 "$REDIS_PORT_s7m"
redis_wait_replica "$REDIS_PORT_s7r"
sentinel_start s7s s7m 3 5000
for i in 1 2 3; do
	redis_start "s7q$i"
done

declare -A url=(
	[single]=$(redis_url s7single)
	[cluster]=$(cluster_url s7c)
	[master]=$(redis_url s7m)
	[sentinel]=$(sentinel_url s7s)
	[quorum3]="$(redis_url s7q1) $(redis_url s7q2) $(redis_url s7q3)"
	[tls]="rediss://127.0.0.1:$tls_port?tls-ca-cert-file=$FENCE_TMP/tls/ca.pem"
)
# node-redlock and ioredis as the lock file pins them
(cd "$BENCH_DIR/redlock" && npm ci --no-audit --no-fund --loglevel=error >&2) ||
	die "npm ci in bench/redlock failed"
url[single_c]=${url[single]}
url[tls_c]=${url[tls]}

run_variant() {
	local out each=
	[[ $1 != *_c ]] || each=-c
	if [ "$1" = redlock3 ]; then
		# shellcheck disable=SC2086 # the quorum's URLs, one word each
		out=$(node "$BENCH_DIR/redlock/cycles.js" "$SECS" ${url[quorum3]}) ||
			die "node-redlock failed"
	else
		out=$(FENCE_REDIS_URL=${url[$1]} "$BENCH_DIR/fence_cycles" -t 1 -s "$SECS" $each) ||
			die "fence_cycles failed on $1"
	fi
	set -- "$1" $out
	record s7 "$1" "${2#cycles_per_s=}"
	record s7 "$1_p50" "${3#acquire_p50_us=}"
}

interleave run_variant single cluster master sentinel quorum3 redlock3 tls single_c tls_c

row 7 "acquire+release cycles, single node, 1 connection (unpinned)" "$(median s7 single)" cycles/s
row_vs 7 "Redis Cluster (3 masters) vs single node" cycles/s cluster single "single" ">=0.90"
row_vs 7 "Sentinel vs its master addressed directly" cycles/s sentinel master "master" ">=0.90"
row_vs 7 "Sentinel vs single node (the master feeds a replica)" cycles/s sentinel single "single"
row_vs 7 "quorum of 3 vs single node" cycles/s quorum3 single "single" ">=0.35"
row_vs 7 "quorum of 3 vs node-redlock on the same 3 nodes (no tokens)" cycles/s quorum3 redlock3 "redlock" ">=1.20"
row_vs 7 "quorum of 3: acquire latency p50 vs single node" µs quorum3_p50 single_p50 "single" "<=2.50"
row_vs 7 "node-redlock: acquire latency p50 vs single node (fence)" µs redlock3_p50 single_p50 "single"
row_vs 7 "single node over TLS vs plain (the same server), 1 connection" cycles/s tls single "plain"
row_vs 7 "connect + acquire + release per cycle (as one fence command): TLS vs plain" cycles/s tls_c single_c "plain"
row 7 "acquire latency p50: TLS / plain (single node)" \
	"$(median s7 tls_p50)" "µs / $(fmt "$(median s7 single_p50)") µs"
row 7 "acquire latency p50: single / cluster / sentinel / quorum of 3" \
	"$(median s7 single_p50)" "µs / $(fmt "$(median s7 cluster_p50)") / $(fmt "$(median s7 sentinel_p50)") / $(fmt "$(median s7 quorum3_p50)") µs"
note "Scenario 7: a cycle is fence_acquire + fence_release, one connection, ${SECS}s per run, unpinned. Round trips per cycle: single node, Cluster and Sentinel 2 (acquire and release, one EVALSHA each, to the one master that holds the key; Cluster reads its slot map and Sentinel asks a sentinel and checks ROLE once per connection); quorum of 3: 2 rounds (the lock round, which also claims the token the worker guesses from the counter it saw last, and the release), each one request to every node in parallel, so 6 requests and the time of the slowest node each round; the first acquire of a resource in a process, or one whose guess was taken, adds a claim round. node-redlock (bench/redlock, pinned): 2 rounds, no token. TLS: TLS 1.3 to the single node's TLS port, a P-256 certificate; with a connection per cycle, each cycle also loads the one-certificate CA file and makes a full handshake (no session resumption)."
