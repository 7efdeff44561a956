#!/usr/bin/env bash
# wait_failover_sentinel: a waiter and a holder ride Sentinel failovers.
#
# A master and a replica under three sentinels of this test's own, which
# nothing else freezes (before each failover the test still waits until
# none of them is in TILT).  In each story a holder H runs under "fence
# run" (heartbeat every TTL/3) and a waiter W queues behind it with "fence
# acquire --wait 60s"; then the master moves:
#
#   1. SENTINEL FAILOVER while W is blocked in its BLPOP.  Some seconds
#      later Sentinel converts the old master (REPLICAOF, CLIENT KILL): the
#      BLPOP is unblocked (-UNBLOCKED) and the connection closed.
#   2. W cannot block (its ACL user lacks BLPOP, so it sleeps between
#      attempts).  An operator promotes the replica and demotes the master
#      by hand (REPLICAOF, connections kept): W's next attempt gets
#      READONLY, and the sentinels, told of the new master only 6 s later
#      (longer than the command timeout), name none meanwhile.
#   3. The same W, between attempts, and a SENTINEL FAILOVER, with a TTL
#      shorter than the time Sentinel takes to convert the old master:
#      until then the old master takes writes, and once H's copy of the
#      lock expires there, a W left on it would take the lease while H
#      renews on the new master.
#   4. The master is killed (-9) and restarts, loading its data for longer
#      than the command timeout (LOADING, 8 s on an idle machine); no
#      failover.
#
# Must hold in each: W goes on waiting and does not get the lease while H
# holds it; H's heartbeat renews the lock on the new master; W blocks
# (BLPOP) on the new master again (1 and 4); when H's command ends, H exits
# 0, its release reaches the new master, and W gets the lease there with a
# higher token, within its --wait.
#
# STORIES="1 3" runs only those (each leaves the servers as the next needs).
E2E_TIMEOUT=${E2E_TIMEOUT:-480}
. "$(dirname "$0")/../lib/lib.sh"
e2e_init wait_failover_sentinel
need_client
# slow to call the master down: a restart (4) is no failover
sentinel_set_start wfsa wfsb wfss 10000
URL=$(sentinel_url wfss)
SENTINELS=("$REDIS_PORT_wfss1" "$REDIS_PORT_wfss2" "$REDIS_PORT_wfss3")
export FENCE_REDIS_URL=$URL

master() { sentinel_master "${SENTINELS[0]}" wfss; }
other() { if [ "$1" = "$REDIS_PORT_wfsa" ]; then echo "$REDIS_PORT_wfsb"; else echo "$REDIS_PORT_wfsa"; fi; }
name_of() { if [ "$1" = "$REDIS_PORT_wfsa" ]; then echo wfsa; else echo wfsb; fi; }
no_tilt() {
	local p
	for p in "${SENTINELS[@]}"; do
		redis-cli -p "$p" info sentinel | grep -q '^sentinel_tilt:0' || return 1
	done
}
all_name() {
	local p
	for p in "${SENTINELS[@]}"; do
		[ "$(sentinel_master "$p" wfss)" = "$1" ] || return 1
	done
}
failover_accepted() { [ "$(redis-cli -p "${SENTINELS[0]}" sentinel failover wfss)" = OK ]; }
master_is_not() { [ "$(master)" != "$1" ]; }

# sentinel_failover: SENTINEL FAILOVER, and wait until the old master is a
# replica of the new one (Sentinel converted it)
sentinel_failover() {
	local old new
	old=$(master)
	new=$(other "$old")
	wait_for 60 no_tilt
	wait_for 30 replica_of "$new" "$old"
	wait_for 30 failover_accepted
	wait_for 30 master_is_not "$old"
	say "SENTINEL FAILOVER: master $old -> $new"
	wait_for 60 replica_of "$old" "$new"
	say "old master $old converted"
}

# renewed PORT RESOURCE MS: the lock there has more than MS left
renewed() { [ "$(redis-cli -p "$1" PTTL "$(fence_key "$2" lock)")" -gt "$3" ]; }

story() { [[ " ${STORIES:-1 2 3 4} " == *" $1 "* ]]; }

# a user that may do all but block: its waiters sleep between attempts
# (a refusal fails here: Redis 6.0 refused "&*", and without the user its
# waiters ended at once, seen only as a queue that stayed empty)
for p in "$REDIS_PORT_wfsa" "$REDIS_PORT_wfsb"; do
	out=$(redis-cli -p "$p" ACL SETUSER poll on '>pw' '~*' "$(all_channels "$p")" +@all -blpop)
	[ "$out" = OK ] || fail "ACL SETUSER poll on $p: $out"
done
POLL_URL=redis-sentinel://poll:pw@${URL#redis-sentinel://}

# --- 1. SENTINEL FAILOVER, W blocked
if story 1; then
old=$(master)
new=$(other "$old")
start_pair 1 wfs1 "$old" 20s
blpops=$(cmd_calls "$new" blpop)
sentinel_failover
wait_for 30 renewed "$new" wfs1 17000
waits_behind "$WPID" W1 H1 "$new" wfs1 2
[ "$(cmd_calls "$new" blpop)" -gt "$blpops" ] || fail "W1 does not block on the new master"
lease_passed H1 "$HPID" W1 "$WPID"
[ "$(redis-cli -p "$new" GET "$(fence_key wfs1 lock)")" = "$(sed -n 's/^FENCE_OWNER=//p' "$WORK/W1.out")" ] ||
	fail "W1's lock is not on the new master"
say "1: W1 waited across the failover and got token $(waiter_token W1) after H1 ($(holder_token H1))"
fi

# --- 2. master demoted by hand (READONLY), no master named for 6 s
if story 2; then
cur=$(master)
oth=$(other "$cur")
start_pair 2 wfs2 "$cur" 20s --redis "$POLL_URL"
wait_for 30 replica_of "$oth" "$cur"
for p in "${SENTINELS[@]}"; do
	redis-cli -p "$p" sentinel remove wfss >/dev/null
done
redis-cli -p "$oth" replicaof no one >/dev/null
redis-cli -p "$cur" replicaof 127.0.0.1 "$oth" >/dev/null
hist test note - - - "$(now_ms)" - "$cur demoted, $oth promoted by hand"
say "2: $cur demoted, $oth promoted by hand; the sentinels name no master"
waits_behind "$WPID" W2 H2 "$oth" wfs2 6
for p in "${SENTINELS[@]}"; do
	redis-cli -p "$p" sentinel monitor wfss 127.0.0.1 "$oth" 2 >/dev/null
	redis-cli -p "$p" sentinel set wfss down-after-milliseconds 10000 failover-timeout 2000 >/dev/null
done
wait_for 20 all_name "$oth"
for p in "${SENTINELS[@]}"; do
	sentinel_wait_peers "$p" wfss 2 || fail "the sentinels do not see each other again"
done
# H2 could not renew while no master was named: it does now, on $oth
wait_for 30 renewed "$oth" wfs2 17000
waits_behind "$WPID" W2 H2 "$oth" wfs2 1
lease_passed H2 "$HPID" W2 "$WPID"
say "2: W2 rode READONLY and no master named, got token $(waiter_token W2) after H2 ($(holder_token H2))"
fi

# --- 3. SENTINEL FAILOVER, W between attempts
if story 3; then
old=$(master)
new=$(other "$old")
start_pair 3 wfs3 "$old" 6s --redis "$POLL_URL"
sentinel_failover
# past H3's TTL: the old master's copy of its lock has expired
waits_behind "$WPID" W3 H3 "$new" wfs3 7
lease_passed H3 "$HPID" W3 "$WPID"
say "3: W3 rode the failover between attempts, got token $(waiter_token W3) after H3 ($(holder_token H3))"
fi

# --- 4. the master restarts and loads its data (LOADING)
if story 4; then
cur=$(master)
name=$(name_of "$cur")
redis-cli -p "$cur" EVAL "for i = 1, 80000 do redis.call('SET', 'pad:' .. i, 'x') end" 0 >/dev/null
# a TTL far longer than the restart, however slow the machine
start_pair 4 wfs4 "$cur" 90s --wait 150s
# the lock and the queue are in the dump the restart loads
redis-cli -p "$cur" SAVE >/dev/null
# no failover, however long the load takes: Redis 6.0 answers nothing
# while it loads (not even the sentinels' PING, which a loading 7.0
# answers with LOADING), and under load its restart took 20 s, past the
# 10 s the sentinels wait before they call a master down
for p in "${SENTINELS[@]}"; do
	redis-cli -p "$p" sentinel set wfss down-after-milliseconds 120000 >/dev/null
done
# Redis 6.0 has no loading-process-events-interval-bytes (its own is 2 MB
# of the dump: it answers, LOADING, only that often, and the clients' time
# out in between)
events=()
[ -n "$(redis-cli -p "$cur" CONFIG GET loading-process-events-interval-bytes)" ] &&
	events=(--loading-process-events-interval-bytes 1024)
kill9 "$(redis_pid "$name")"
t0=$(now_ms)
redis-server --port "$cur" --bind 127.0.0.1 --dir "$FENCE_TMP/redis-$name" \
	--save '' --appendonly no --daemonize no --logfile "$FENCE_TMP/redis-$name/redis.log" \
	--repl-diskless-sync-delay 0 --key-load-delay 20 "${events[@]}" &
restarted=$!
FENCE_REDIS_PIDS+=("$restarted")
printf -v "REDIS_PID_$name" %s "$restarted"
hist test note - - - "$t0" - "master $cur killed, restarting"
# (a server that does not start is no server still loading)
loaded() {
	! dead "$restarted" || fail "the restarted master exited: $(tail -n 5 "$FENCE_TMP/redis-$name/redis.log" 2>/dev/null)"
	redis-cli -p "$cur" PING 2>/dev/null | grep -q PONG
}
wait_for 120 loaded
say "4: master $cur restarted and loaded its data in $(($(now_ms) - t0)) ms"
waits_behind "$WPID" W4 H4 "$cur" wfs4 0
# H4 beats every 30 s, and tries again 7.5 s after a failed beat
wait_for 60 renewed "$cur" wfs4 85000
blocks_there() { [ "$(cmd_calls "$cur" blpop)" -gt 0 ]; }
wait_for 20 blocks_there
waits_behind "$WPID" W4 H4 "$cur" wfs4 1
lease_passed H4 "$HPID" W4 "$WPID"
say "4: W4 rode the restart, got token $(waiter_token W4) after H4 ($(holder_token H4))"
fi
say "pass"
