#!/usr/bin/env bash
# wait_failover_cluster: holders and waiters on a Redis Cluster with
# replicas, through a frozen seed, a moved slot and failovers.
#
# Three masters, each with a replica; a frozen node is one stopped with
# SIGSTOP (the kernel still accepts TCP connections, nothing answers).
#
#   1. A replica, frozen, is the first seed of the URL.  "fence acquire"
#      and "fence release" work, each paying the frozen seed at most its
#      share of the command timeout; "fence run", whose heartbeat has a
#      context of its own, pays it once: the heartbeat starts with the node
#      that answered in the same process.
#   2. A "fence run" holder started with that URL before the seed froze;
#      then its resource's slot moves to another master (MOVED).  Its
#      heartbeat follows the redirect and reads the map again, without
#      spending all its time on the frozen seed first.
#   3. CLUSTER FAILOVER on the replica of the master that holds a resource,
#      while a holder renews it and a waiter waits there (blocked in BLPOP),
#      then CLUSTER FAILOVER FORCE back.  A master turned replica answers
#      MOVED, and closes the connection of a client whose BLPOP it ends
#      (-UNBLOCKED).
#
# Must hold: 1 acquire, release and run exit 0, and the run's process
# connected to the frozen seed once; 2 the holder keeps its lease (exit 0,
# its lock on the new master); 3 the waiter goes on waiting through both
# failovers without the lease, while the holder's heartbeat renews it on
# the new master, blocks (BLPOP) there again, and gets the lease with a
# higher token once the holder's command ends.
#
# STORIES="1 3" runs only those.
E2E_TIMEOUT=${E2E_TIMEOUT:-420}
. "$(dirname "$0")/../lib/lib.sh"
e2e_init wait_failover_cluster
need_client
CLUSTER_REPLICAS=1 cluster_start wfc 3
MASTERS=("$REDIS_PORT_wfc1" "$REDIS_PORT_wfc2" "$REDIS_PORT_wfc3")
FROZEN=$REDIS_PORT_wfc4
FROZEN_URL=redis-cluster://127.0.0.1:$FROZEN,127.0.0.1:${MASTERS[0]},127.0.0.1:${MASTERS[1]},127.0.0.1:${MASTERS[2]}
export FENCE_REDIS_URL
FENCE_REDIS_URL=$(cluster_url wfc)
story() { [[ " ${STORIES:-1 2 3} " == *" $1 "* ]]; }

FROZEN_NODE=wfc4
freeze() { kill -STOP "$(redis_pid "$FROZEN_NODE")"; }
thaw() { kill -CONT "$(redis_pid "$FROZEN_NODE")"; }
# node_at PORT: the name of the node on PORT (wfc1..wfc6)
node_at() {
	local n v
	for n in 1 2 3 4 5 6; do
		v=REDIS_PORT_wfc$n
		[ "${!v}" = "$1" ] && { echo "wfc$n"; return; }
	done
	return 1
}
# connections: client connections the redis at PORT has accepted so far
connections() {
	redis-cli -p "$1" info stats | tr -d '\r' | sed -n 's/^total_connections_received://p'
}
# serves PORT SLOT: every master says the node at PORT serves SLOT
serves() {
	local p
	for p in "$REDIS_PORT_wfc1" "$REDIS_PORT_wfc2" "$REDIS_PORT_wfc3" \
		"$REDIS_PORT_wfc4" "$REDIS_PORT_wfc5" "$REDIS_PORT_wfc6"; do
		[ "$(cluster_slot_owner "$p" "$2")" = "$1" ] || return 1
	done
}
# owner_is PORT SLOT OWNER: the node at PORT says OWNER serves SLOT
owner_is() { [ "$(cluster_slot_owner "$1" "$2")" = "$3" ]; }
# replica_port MASTER: the port of the node that replicates MASTER
replica_port() {
	local id
	id=$(redis-cli -p "$1" cluster myid)
	redis-cli -p "$1" cluster nodes | awk -v id="$id" '$4 == id { split($2, h, "[:@]"); print h[2]; exit }'
}
# holds PID NAME PORT RESOURCE SECONDS: for SECONDS, the holder NAME
# (process PID) runs, its lock on the redis at PORT
holds() {
	local t0=$SECONDS
	while :; do
		kill -0 "$1" 2>/dev/null || fail "$2 ended: $(cat "$WORK/$2.err")"
		[ "$(redis-cli -p "$3" GET "$(fence_key "$4" lock)")" = "$(holder_owner "$2")" ] ||
			fail "the lock on $3 is not $2's"
		((SECONDS - t0 < $5)) || break
		sleep 0.1
	done
}

# --- 1. a frozen seed first in the URL
if story 1; then
freeze
t0=$(now_ms)
FENCE_REDIS_URL=$FROZEN_URL "$FENCE_BIN" acquire wfc1 --ttl 10s >"$WORK/A1.out" 2>"$WORK/A1.err" ||
	fail "acquire with a frozen seed first: $(cat "$WORK/A1.err")"
say "1: acquire with the frozen seed first took $(($(now_ms) - t0)) ms"
owner=$(sed -n 's/^FENCE_OWNER=//p' "$WORK/A1.out")
FENCE_REDIS_URL=$FROZEN_URL "$FENCE_BIN" release wfc1 "$owner" 2>"$WORK/A1.err" ||
	fail "release with a frozen seed first: $(cat "$WORK/A1.err")"
thaw
before=$(connections "$FROZEN")
freeze
FENCE_REDIS_URL=$FROZEN_URL "$FENCE_BIN" run wfc1 --ttl 1500ms -- sleep 3 2>"$WORK/R1.err" ||
	fail "fence run with a frozen seed first: $(cat "$WORK/R1.err")"
thaw
# the run's, and this one of ours
[ "$(($(connections "$FROZEN") - before))" = 2 ] ||
	fail "the frozen seed was asked $(($(connections "$FROZEN") - before - 2)) times more than once by one fence run"
say "1: fence run asked the frozen seed once, its heartbeat not at all"
fi

# --- 2. a holder whose slot moves while the first seed is frozen
if story 2; then
slot=$(cluster_slot_of "${MASTERS[0]}" wfc2)
src=$(cluster_slot_owner "${MASTERS[0]}" "$slot")
for p in "${MASTERS[@]}"; do [ "$p" != "$src" ] && { dst=$p; break; }; done
# The frozen seed is the replica of the third master, neither the slot's
# source nor its target: Valkey 8 and later make CLUSTER SETSLOT on a
# master wait for its replicas, and refuse it (NOREPLICAS) while one is
# frozen, so with a frozen replica of either the slot could not move at
# all.  The client does not know whose replica the seed is.
for p in "${MASTERS[@]}"; do [ "$p" != "$src" ] && [ "$p" != "$dst" ] && { third=$p; break; }; done
FROZEN=$(replica_port "$third")
FROZEN_NODE=$(node_at "$FROZEN") || fail "no node on port $FROZEN"
FROZEN_URL=redis-cluster://127.0.0.1:$FROZEN,127.0.0.1:${MASTERS[0]},127.0.0.1:${MASTERS[1]},127.0.0.1:${MASTERS[2]}
start_holder H2 wfc2 --ttl 3s --redis "$FROZEN_URL"
h=$LAST_PID
freeze
cluster_migrating "$slot" "$src" "$dst"
# the source and the target only: the third master (whose replica is
# frozen) would refuse it on Valkey, and learns the move from them
cluster_moved "$slot" "$dst" "$src" "$dst"
wait_for 30 owner_is "$third" "$slot" "$dst"
hist test note - - - "$(now_ms)" - "slot $slot moved from $src to $dst, seed $FROZEN frozen"
say "2: slot $slot moved from $src to $dst, seed $FROZEN frozen"
# three TTLs: a heartbeat stuck on the frozen seed would have lost it
holds "$h" H2 "$dst" wfc2 9
go H2
wait_exit "$h" 30
[ "$RC" = 0 ] || fail "H2's fence run exited $RC: $(cat "$WORK/H2.err")"
thaw
say "2: H2 kept its lease across the move"
fi

# --- 3. CLUSTER FAILOVER, and FORCE back, under a holder and a waiter
if story 3; then
for p in "$REDIS_PORT_wfc4" "$REDIS_PORT_wfc5" "$REDIS_PORT_wfc6"; do
	cluster_wait_ok "$p"
done
slot=$(cluster_slot_of "${MASTERS[0]}" wfc3)
m=$(cluster_slot_owner "${MASTERS[0]}" "$slot")
r=$(replica_port "$m")
wait_for 30 replica_of "$r" "$m"
# fail_over [FORCE] NEW OLD: CLUSTER FAILOVER on NEW, OLD's replica, until
# NEW serves the slot and OLD follows it; for longer than H3's TTL, W3
# waits behind H3 there, blocking (BLPOP) on NEW
fail_over() {
	local blpops
	# shellcheck disable=SC2086
	redis-cli -p "$2" cluster failover $1 >/dev/null
	wait_for 30 serves "$2" "$slot"
	wait_for 30 replica_of "$3" "$2"
	say "3: CLUSTER FAILOVER $1: slot $slot from $3 to $2"
	blpops=$(cmd_calls "$2" blpop)
	waits_behind "$WPID" W3 H3 "$2" wfc3 4
	[ "$(cmd_calls "$2" blpop)" -gt "$blpops" ] || fail "W3 does not block on $2"
}
start_pair 3 wfc3 "$m" 3s
fail_over "" "$r" "$m"
fail_over FORCE "$m" "$r"
lease_passed H3 "$HPID" W3 "$WPID"
say "3: W3 waited through both failovers, got token $(waiter_token W3) after H3 ($(holder_token H3))"
fi
say "pass"
