#!/usr/bin/env bash
# topo_cluster: a Redis Cluster moves a slot while workers write.
#
# Three masters; every client uses the redis-cluster:// URL.  Three workers
# loop "fence run" doing read-modify-write on one counter, D holds a lease
# under fence run the whole time, and S took a lease with "fence acquire",
# read, and stalls past its TTL.  Mid-run the slots of their resources
# migrate to another master the way redis-cli --cluster reshard moves them:
# IMPORTING and MIGRATING, MIGRATE of the keys, a pause in that state (ASK
# redirects, and TRYAGAIN for acquires, whose script needs both keys, when
# only one of them is there), then SETSLOT NODE everywhere (MOVED for every
# client with the old map).
#
# Must hold: the servers saw ASK and MOVED redirects; D keeps its lease
# across the move (exit 0, its lock on the new master); S's stale write is
# refused (LF001); the history passes the checker (tokens in order, no
# token for two owners, no lost update).
# Negative control: the same on a second counter without the token check:
# S's stale write lands and the checker must see the lost update.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init topo_cluster
need_client
cluster_start f12n 3
FENCE_REDIS_URL=$(cluster_url f12n)
export FENCE_REDIS_URL
ports=("$REDIS_PORT_f12n1" "$REDIS_PORT_f12n2" "$REDIS_PORT_f12n3")

slot_of() { cluster_slot_of "${ports[0]}" "$1"; }
owner_of_slot() { cluster_slot_owner "${ports[0]}" "$1"; }
errorstat() {
	redis-cli -p "$1" info errorstats | tr -d '\r' | sed -n "s/^errorstat_$2:count=//p" | grep . || echo 0
}
migrating() { cluster_migrating "$@"; }
moved() { cluster_moved "$1" "$2" "${ports[@]}"; }

mode=$(guarded_mode)
HG=$WORK/history.f12 HC=$WORK/history.f12c
: >"$HG"
: >"$HC"
for p in f12w f12d f12c; do
	make_tables "$p" 1000
	[ $p = f12c ] || protect_if "$mode" "$p" "$p:stock"
done

# S and Sc take a short lease and read first; they stall past it
HIST=$HG
TBL=f12w start_stalled S f12w:stock "$mode" 1s --pg "$PGCONN"
HIST=$HC
TBL=f12c start_stalled Sc f12c:stock none 1s

for w in 1 2; do
	WRITES=4 GAP_MS=20 TBL=f12c start_loop_worker "C$w" f12c:stock none --ttl 2s --wait 30s --grace 500ms
done
HIST=$HG
for w in 1 2 3; do
	WRITES=4 GAP_MS=20 TBL=f12w start_loop_worker "W$w" f12w:stock "$mode" \
		--ttl 2s --wait 30s --grace 500ms --pg "$PGCONN"
done
HOLD=1 TBL=f12d start_worker D f12d:stock "$mode" --ttl 3s --pg "$PGCONN"
d=$LAST_PID
wait_for 20 state_is D done
wait_for 60 accepted_at_least f12w:stock 10

# reshard the three resources' slots, each to another master
declare -A src dst
for r in f12w f12d f12c; do
	s=$(slot_of "$r:stock")
	src[$r]=$(owner_of_slot "$s")
	[ -n "${src[$r]}" ] || fail "no owner found for slot $s"
	for p in "${ports[@]}"; do [ "$p" != "${src[$r]}" ] && { dst[$r]=$p; break; }; done
done
ask0=0
for p in "${ports[@]}"; do ask0=$((ask0 + $(errorstat "$p" ASK))); done
for r in f12w f12d f12c; do
	migrating "$(slot_of "$r:stock")" "${src[$r]}" "${dst[$r]}"
done
hist test note - - - "$(now_ms)" - "slots migrating"
say "slots migrating: f12w ${src[f12w]} -> ${dst[f12w]}, f12d ${src[f12d]} -> ${dst[f12d]}, f12c ${src[f12c]} -> ${dst[f12c]}"
# A migration takes this long: D's heartbeat (every second) follows ASK;
# an acquire, whose script needs both keys, gets TRYAGAIN once the token
# moved without the lock, and waits.
sleep 1.5
ask=0
for p in "${ports[@]}"; do ask=$((ask + $(errorstat "$p" ASK))); done
# INFO errorstats is from Redis 6.2: before it no count of redirects
# (not grep -c: its exit 1 on a count of 0 ended the test under set -e)
info=$(redis-cli -p "${ports[0]}" info errorstats) || fail "INFO errorstats: $info"
case $info in
*'# Errorstats'*) errorstats=1 ;;
*) errorstats=0 ;;
esac
[ "$errorstats" = 0 ] &&
	say "this $(redis-server --version | cut -d' ' -f1-3) has no INFO errorstats (Redis 6.2): the ASK and MOVED redirects are not counted"
[ "$errorstats" = 0 ] || [ "$ask" -gt "$ask0" ] || fail "no ASK redirect while the slots migrated"
moved0=0
for p in "${ports[@]}"; do moved0=$((moved0 + $(errorstat "$p" MOVED))); done
for r in f12w f12d f12c; do
	moved "$(slot_of "$r:stock")" "${dst[$r]}"
done
hist test note - - - "$(now_ms)" - "slots moved"
n=$(accepted f12w:stock)
wait_for 60 accepted_at_least f12w:stock $((n + 8))
sleep 1.2
moved1=0
for p in "${ports[@]}"; do moved1=$((moved1 + $(errorstat "$p" MOVED))); done
[ "$errorstats" = 0 ] || [ "$moved1" -gt "$moved0" ] || fail "no MOVED redirect after the slots moved"
say "ASK redirects: $((ask - ask0)), MOVED: $((moved1 - moved0))"

[ "$(redis-cli -p "${dst[f12d]}" GET "$(fence_key f12d:stock lock)")" = "$(owner_of D)" ] ||
	fail "D's lock is not on the slot's new master"
quit D
wait_exit "$d" 20
[ "$RC" = 0 ] || fail "D's fence run exited $RC across the move, expected 0"

# the stalled holders write now, long after their lease passed on
go S
wait_for 20 state_is S done
[ "$(outcome S)" = LF001 ] || fail "S's stale write: $(outcome S), expected LF001"
go Sc
wait_for 20 state_is Sc done
[ "$(outcome Sc)" = ok ] || fail "control: Sc's stale write did not land"
say "D kept its lease; S's stale write refused, the control's landed"
n=$(accepted f12w:stock)
wait_for 60 accepted_at_least f12w:stock $((n + 2))

stop_loop_workers
for p in f12w f12d; do
	dump_commits "$p"
	record_counter "$p" "$p:stock" 1000 -1
done
check_ok
HIST=$HC
dump_commits f12c
record_counter f12c f12c:stock 1000 -1
check_fails lost-update
say "pass"
