#!/usr/bin/env bash
# topo_sentinel: Redis behind Sentinel fails over while workers write.
#
# A master and a replica, watched by three sentinels; every client uses the
# redis-sentinel:// URL.  Three workers loop "fence run" doing
# read-modify-write on one counter the whole time.
#
#   1. SENTINEL FAILOVER: the replica becomes master.  The old master stays
#      a master, taking writes from whoever is still connected, until
#      Sentinel converts it some seconds later.  A holder (D) keeps its
#      lease across it: its heartbeat asks Sentinel at every beat, moves to
#      the new master, where the lock is, and fence run exits 0.
#   2. kill -9 of that master, after its replica was frozen and cut off:
#      the replica, promoted, misses the last locks and INCRs.  A took token
#      n and read before the kill; on the promoted replica B gets token n
#      again: PostgreSQL's owner check refuses it, the client heals above the
#      mark (n+1), and A's stale write is refused (LF001).  C, holding a
#      lease under fence run, loses it (exit 76): the new master lacks its
#      key.  The killed node comes back as a replica; B, who acquired with
#      --min-replicas 1, waited until it had the lock and the token.  The
#      workers go on.
#
# Must hold: the history of every fenced resource passes the checker (no
# token accepted out of order or for two owners, no lost update).
# Negative control: the same story without the token check (A and B on
# their own counter, no --pg): the repeated token lets A's stale write
# land over B's, and the checker must see the lost update.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init topo_sentinel
need_client
sentinel_set_start f11a f11b f11s 1000
FENCE_REDIS_URL=$(sentinel_url f11s)
export FENCE_REDIS_URL
S=$REDIS_PORT_f11s1
master() { sentinel_master "$S" f11s; }
name_of() { if [ "$1" = "$REDIS_PORT_f11a" ]; then echo f11a; else echo f11b; fi; }

mode=$(guarded_mode)
HG=$WORK/history.f11 HC=$WORK/history.f11c
: >"$HG"
: >"$HC"
HIST=$HG
for p in f11w f11d f11g f11l; do
	make_tables "$p" 1000
	protect_if "$mode" "$p" "$p:stock"
done
make_tables f11c 1000

# --- 1. a forced failover under load
for w in 1 2 3; do
	WRITES=4 GAP_MS=20 TBL=f11w start_loop_worker "W$w" f11w:stock "$mode" \
		--ttl 2s --wait 30s --grace 500ms --pg "$PGCONN"
done
HOLD=1 TBL=f11d start_worker D f11d:stock "$mode" --ttl 6s --pg "$PGCONN"
d=$LAST_PID
wait_for 20 state_is D done
wait_for 60 accepted_at_least f11w:stock 10
old=$(master)
redis-cli -p "$S" sentinel failover f11s >/dev/null
hist test note - - - "$(now_ms)" - "SENTINEL FAILOVER"
moved() { [ "$(master)" != "$old" ]; }
wait_for 30 moved
new=$(master)
say "SENTINEL FAILOVER: master $old -> $new"
redis_wait_replica "$old"
n=$(accepted f11w:stock)
wait_for 60 accepted_at_least f11w:stock $((n + 10))
[ "$(redis-cli -p "$new" GET "$(fence_key f11d:stock lock)")" = "$(owner_of D)" ] ||
	fail "D's lock is not on the new master"
quit D
wait_exit "$d" 20
[ "$RC" = 0 ] || fail "D's fence run exited $RC across the failover, expected 0"
say "D kept its lease across the failover; the workers went on ($(accepted f11w:stock) writes)"

# --- 2. kill -9 of a master whose last writes its replica missed
rname=$(name_of "$old")
rpid=$(redis_pid "$rname")
kill -STOP "$rpid"
redis-cli -p "$new" client kill type replica >/dev/null
hist test note - - - "$(now_ms)" - "replica $old frozen and cut off"
TBL=f11g start_stalled A f11g:stock "$mode" 60s --pg "$PGCONN"
HIST=$HC
TBL=f11c start_stalled Ac f11c:stock none 60s
HIST=$HG
HOLD=1 TBL=f11l start_worker C f11l:stock "$mode" --ttl 3s --pg "$PGCONN"
c=$LAST_PID
wait_for 20 state_is C done
kill9 "$(redis_pid "$(name_of "$new")")"
kill -CONT "$rpid"
hist test note - - - "$(now_ms)" - "master $new killed, $old thawed"
promoted() { [ "$(master)" = "$old" ]; }
wait_for 60 promoted
say "kill -9 of $new; Sentinel promoted $old"
counter=$(redis-cli -p "$old" GET "$(fence_key f11g:stock token)")
[ "${counter:-0}" -lt "$(token_of A)" ] ||
	fail "the promoted replica has counter $counter, it should have missed A's token $(token_of A)"
# the killed node comes back empty, as a replica of the new master
redis_restart "$(name_of "$new")" --replicaof 127.0.0.1 "$old" --repl-diskless-sync-delay 0
redis_wait_replica "$new"

# B: A's resource, fenced: the repeated token is refused and healed
TBL=f11g start_worker B f11g:stock "$mode" --ttl 10s --wait 30s --pg "$PGCONN" \
	--min-replicas 1 --replica-timeout 2s
wait_exit "$LAST_PID" 60
[ "$RC" = 0 ] || fail "B's fence run exited $RC: $(cat "$WORK/B.err")"
[ "$(outcome B)" = ok ] || fail "B's write: $(outcome B)"
[ "$(token_of B)" -gt "$(token_of A)" ] || fail "B got token $(token_of B), not above A's $(token_of A)"
[ "$(redis-cli -p "$new" GET "$(fence_key f11g:stock token)")" -ge "$(token_of B)" ] ||
	fail "the replica does not have B's token: WAIT did not wait"
say "B: the promoted master's counter was ${counter:-0}, B announced, healed and wrote with $(token_of B)"
go A
wait_for 20 state_is A done
[ "$(outcome A)" = LF001 ] || fail "A's stale write: $(outcome A), expected LF001"

# Bc: the control's repeated token, no check
HIST=$HC
eval "$("$FENCE_BIN" acquire f11c:stock --ttl 10s --wait 30s)"
[ "$FENCE_TOKEN" = "$(token_of Ac)" ] || fail "control: token $FENCE_TOKEN, expected Ac's $(token_of Ac) again"
export_lease
TBL=f11c start_plain_worker Bc none
unexport_lease
wait_exit "$LAST_PID" 20
go Ac
wait_for 20 state_is Ac done
[ "$(outcome Ac)" = ok ] || fail "control: Ac's stale write did not land"
HIST=$HG

wait_exit "$c" 30
[ "$RC" = 76 ] || fail "C's fence run exited $RC, expected 76: the new master lacks its lock"
say "C lost its lease (exit 76); A's stale write refused (LF001)"

n=$(accepted f11w:stock)
wait_for 90 accepted_at_least f11w:stock $((n + 10))
stop_loop_workers
say "workers: $(accepted f11w:stock) writes accepted, $(grep -c '	run	.*exit=0' "$HG" || true) clean runs"
for p in f11w f11d f11g f11l; do
	dump_commits "$p"
	record_counter "$p" "$p:stock" 1000 -1
done
check_ok
HIST=$HC
dump_commits f11c
record_counter f11c f11c:stock 1000 -1
check_fails lost-update
say "pass"
