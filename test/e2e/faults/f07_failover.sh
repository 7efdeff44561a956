#!/usr/bin/env bash
# F7: failover to a replica that missed the last SET and INCR.
#
# A primary and a replica (--replicaof).  The replica is frozen with
# SIGSTOP (and the primary drops its link); on the primary, workers take leases (token 1, owner A) on three
# resources, announce and write, and keep holding.  The primary is killed
# with SIGKILL, the replica thaws and is promoted (REPLICAOF NO ONE): it
# has neither the locks nor the counters, and hands out token 1 again, to
# other owners.
#
# Must hold: PostgreSQL accepts exactly one owner for token 1: the plain
# "fence acquire" holder of the repeated token has its write refused with
# LF001 (same token, other owner); "fence run --pg" sees its announce
# refused, lifts the counter on the new primary above PostgreSQL's mark
# and writes with token 2; the old holders lose their leases (exit 76);
# the history passes the checker.
# Negative control: a third resource without the token check: the repeated
# token lands for a second owner, and the checker must say so.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init f07
need_client
redis_start f07p --repl-diskless-sync-delay 0
redis_start f07r --replicaof 127.0.0.1 "$REDIS_PORT_f07p"
P_URL=$(redis_url f07p) R_URL=$(redis_url f07r)
linked() { rcli "$R_URL" INFO replication | grep -q '^master_link_status:up'; }
wait_for 20 linked

mode=$(guarded_mode)
HG=$WORK/history.f07 HC=$WORK/history.f07c
: >"$HG"
: >"$HC"
for p in f07g f07h f07c; do
	make_tables "$p" 100
done
protect_if "$mode" f07g f07g:stock
protect_if "$mode" f07h f07h:stock

# A frozen replica's kernel still takes the replication stream into its
# socket buffer and would apply it on SIGCONT; the primary drops the link
# as well, so that what follows is really missed.
kill -STOP "$REDIS_PID_f07r"
rcli "$P_URL" CLIENT KILL TYPE replica >/dev/null
say "replica frozen and cut off"
export FENCE_REDIS_URL=$P_URL
apid=()
for p in f07g f07h f07c; do
	m=$mode
	[ $p = f07c ] && m=none
	HIST=$HG
	[ $p = f07c ] && HIST=$HC
	HOLD=1 TBL=$p start_worker "A_$p" "$p:stock" "$m" --ttl 2s --grace 1s --pg "$PGCONN"
	apid+=("$LAST_PID")
	wait_for 20 state_is "A_$p" done
	[ "$(outcome "A_$p")" = ok ] || fail "A_$p: $(outcome "A_$p")"
	[ "$(token_of "A_$p")" = 1 ] || fail "A_$p got token $(token_of "A_$p")"
done
say "on the primary: token 1 taken, announced and written on three resources"

kill9 "$REDIS_PID_f07p"
kill -CONT "$REDIS_PID_f07r"
rcli "$R_URL" REPLICAOF NO ONE >/dev/null
export FENCE_REDIS_URL=$R_URL
hist test note - - - "$(now_ms)" - "primary killed, replica promoted"
say "primary killed, replica promoted"

# 1. plain acquire of the repeated token, guarded write
HIST=$HG
FENCE_TOKEN=
eval "$("$FENCE_BIN" acquire f07g:stock --ttl 5s)"
[ "$FENCE_TOKEN" = 1 ] || fail "the promoted replica gave token $FENCE_TOKEN, expected 1 again"
export_lease
TBL=f07g start_plain_worker B_f07g "$mode"
unexport_lease
wait_exit "$LAST_PID" 20
say "B_f07g holds token 1 again (owner $(owner_of B_f07g)): its write: $(outcome B_f07g)"
[ "$(outcome B_f07g)" = LF001 ] || fail "the repeated token's write: $(outcome B_f07g), expected LF001"

# 2. fence run --pg heals
TBL=f07h start_worker B_f07h f07h:stock "$mode" --ttl 5s --pg "$PGCONN"
wait_exit "$LAST_PID" 20
[ "$RC" = 0 ] || fail "B_f07h: exit $RC: $(cat "$WORK/B_f07h.err")"
say "fence run --pg on the promoted replica: token $(token_of B_f07h), write $(outcome B_f07h)"
[ "$(token_of B_f07h)" -ge 2 ] || fail "fence run --pg kept the repeated token"
[ "$(outcome B_f07h)" = ok ] || fail "B_f07h's write: $(outcome B_f07h)"

# 3. negative control: no check
HIST=$HC
FENCE_TOKEN=
eval "$("$FENCE_BIN" acquire f07c:stock --ttl 5s)"
[ "$FENCE_TOKEN" = 1 ] || fail "control: token $FENCE_TOKEN, expected 1 again"
export_lease
TBL=f07c start_plain_worker B_f07c none
unexport_lease
wait_exit "$LAST_PID" 20
[ "$(outcome B_f07c)" = ok ] || fail "control: the repeated token's write did not land"

# the old holders cannot renew on a dead primary
for i in "${!apid[@]}"; do
	wait_exit "${apid[$i]}" 20
	[ "$RC" = 76 ] || fail "an old holder's fence run exited $RC, expected 76"
done
say "the old holders lost their leases (exit 76)"

HIST=$HG
for p in f07g f07h; do
	dump_commits "$p"
	record_counter "$p" "$p:stock" 100 -1
done
check_ok
HIST=$HC
dump_commits f07c
record_counter f07c f07c:stock 100 -1
check_fails two-owners
say "pass"
