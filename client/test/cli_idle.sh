#!/usr/bin/env bash
# client/test/cli_idle.sh: connections that Redis closes under the fence
# command, against real redis-servers: one of the test's own with Redis's
# idle "timeout" at 1 s (a quorum of three of its databases), and the
# shared one of FENCE_REDIS_URL, where CLIENT KILL closes the connections
# of one fence process.  A connection closed while idle is connected anew
# before it is used; a waiter rides a dropped connection to its deadline;
# a waiter paused past its deadline reads the answer that came meanwhile.
# (tls.sh does the same over TLS, where the end comes as a close_notify.)
# One "ok - NAME" / "not ok - NAME" / "skip - NAME" line per test.
#
# The harness (FENCE_BIN, FENCE_CLI_ONLY) is clilib.sh's.
set -u
cd "$(dirname "$0")/.."
. test/clilib.sh

PORT=${FENCE_REDIS_URL##*:}
PORT=${PORT%%/*}

# idle_redis DIR: a redis-server of the test's own (own_redis) that closes
# connections idle for 1 s, answering on IDLE_PORT.
idle_redis() {
	own_redis "$1" --timeout 1
	IDLE_PORT=$OWN_PORT
	wait_for 5 redis-cli -p "$IDLE_PORT" ping >/dev/null 2>&1
}

# A quorum whose nodes close idle connections after 1 s: the command runs
# for 2.5 s, then fence run releases on every node (no "0 of 3 Redis
# nodes ... Server closed the connection"), and the lock is gone at once,
# not left for the rest of its TTL.
test_idle_quorum_release() {
	local res q n
	idle_redis "$TMP/idle"
	res=$(rname qidle)
	q=(--redis "redis://127.0.0.1:$IDLE_PORT/1" --redis "redis://127.0.0.1:$IDLE_PORT/2"
		--redis "redis://127.0.0.1:$IDLE_PORT/3")
	expect_rc 0 "$F" run "$res" --no-pg --ttl 9s "${q[@]}" -- sleep 2.5
	if grep -q . "$TMP/err"; then
		echo "stderr:"
		cat "$TMP/err"
		return 1
	fi
	for n in 1 2 3; do
		[ "$(redis-cli -p "$IDLE_PORT" -n $n EXISTS "$(fence_key "$res" lock)")" = 0 ]
	done
	# and a holder's heartbeat (every 1 s for a 3 s TTL) keeps it for 4 s
	expect_rc 0 "$F" run "$res" --no-pg --ttl 3s "${q[@]}" -- sleep 4
	refute grep -q . "$TMP/err"
}

# The same on one node: the idle connections of the holder closed by the
# server, its release still lands.
test_idle_single_release() {
	local res
	idle_redis "$TMP/idle1"
	res=$(rname sidle)
	expect_rc 0 "$F" run "$res" --no-pg --ttl 9s --redis "redis://127.0.0.1:$IDLE_PORT" -- sleep 2.5
	refute grep -q . "$TMP/err"
	[ "$(redis-cli -p "$IDLE_PORT" EXISTS "$(fence_key "$res" lock)")" = 0 ]
}

# blocked PID: a connection of process PID is blocked in Redis (BLPOP).
blocked() {
	local a
	for a in $(conns_of "$1" "$PORT"); do
		rcli CLIENT LIST | grep "addr=$a " | grep -q 'flags=b' && return 0
	done
	return 1
}

# kill_waiter WANT_RC WAIT: a waiter (--wait WAIT) for a held lock has its
# connection closed by Redis (CLIENT KILL) twice while it blocks: it goes
# on waiting, and takes the lock when the holder's lease runs out, exit
# WANT_RC (0), not 69 at the first close.  The holder's lease runs out
# only after the second close, whatever the machine's load.
kill_waiter() {
	local want=$1 wait=$2 res pid rc=0 kills=0 owner alive=0
	res=$(rname "kwait$RANDOM")
	rcli SET "$(fence_key "$res" lock)" holder PX 60000 >/dev/null
	"$F" acquire "$res" --wait "$wait" >"$TMP/out" 2>"$TMP/err" &
	pid=$!
	for _ in 1 2; do
		wait_for 10 blocked $pid && kill_conns "$pid" "$PORT" && kills=$((kills + 1))
	done
	kill -0 $pid 2>/dev/null && alive=1
	rcli PEXPIRE "$(fence_key "$res" lock)" 300 >/dev/null
	wait $pid || rc=$?
	owner=$(sed -n 's/^FENCE_OWNER=//p' "$TMP/out")
	if [ $rc != "$want" ] || [ $kills != 2 ] || [ $alive != 1 ] ||
		[ "$(rcli GET "$(fence_key "$res" lock)")" != "$owner" ]; then
		echo "exit $rc (expected $want), $kills connections closed, waiting after them: $alive, owner \"$owner\""
		cat "$TMP/out" "$TMP/err"
		return 1
	fi
	rcli DEL "$(fence_key "$res" lock)" >/dev/null
}

# A waiter (--wait 20s) whose connection Redis closes twice goes on
# waiting and takes the lease (kill_waiter).
test_idle_waiter_rides_kill() {
	kill_waiter 0 20s
}

# The same for a waiter without a bound (--wait inf).
test_idle_waiter_inf_rides_kill() {
	kill_waiter 0 inf
}

# A waiter that never had an answer still fails at once: nothing listens.
test_idle_waiter_unreachable() {
	local t0=$SECONDS
	expect_rc 69 "$F" acquire "$(rname nobody)" --wait 20s --redis redis://127.0.0.1:1
	[ $((SECONDS - t0)) -lt 3 ]
}

# kill_new_conns PID: close PID's connections to Redis unless they are
# the ones closed last time (in $closed), which the process may not have
# seen close yet.
kill_new_conns() {
	local a
	a=$(conns_of "$1" "$PORT")
	[ -n "$a" ] && [ "$a" != "$closed" ] || return 1
	kill_conns "$1" "$PORT" && closed=$a
}

# A holder's heartbeat on one node rides the same: its connections closed
# twice while it holds a 3 s lease, it keeps the lease, and the command
# ends with exit 0 and the lock released.  The child runs until both
# closes are done, whatever the machine's load.
test_idle_heartbeat_rides_kill() {
	local res pid rc=0 kills=0 closed
	res=$(rname hbkill)
	rm -f "$TMP/go"
	"$F" run "$res" --no-pg --ttl 3s -- \
		sh -c 'while [ ! -e "$1" ]; do sleep 0.1; done' sh "$TMP/go" >"$TMP/out" 2>"$TMP/err" &
	pid=$!
	wait_for 10 eval '! lock_free "$res"' || echo "# no lock seen"
	# each time the heartbeat's connection is there (the first, then the
	# one it opens again), not at a moment that hopes it is
	closed=
	for _ in 1 2; do
		wait_for 10 kill_new_conns "$pid" && kills=$((kills + 1))
	done
	touch "$TMP/go"
	wait $pid || rc=$?
	if [ $rc != 0 ] || [ $kills != 2 ] || ! lock_free "$res"; then
		echo "exit $rc, $kills times closed, lock $(rcli GET "$(fence_key "$res" lock)")"
		cat "$TMP/err"
		return 1
	fi
}

# paused_waiter PAUSE: a waiter (--wait 2s) for a lock held for a minute
# is stopped (SIGSTOP) while it blocks in Redis, for PAUSE seconds, well
# past its deadline, and continued: Redis's answer ("busy") is there to
# read, and the last attempt gets its answer too, so it exits 75 (not
# acquired in time), not 69 ("no answer before the deadline").
# With QUORUM set, on a quorum of three databases of the shared server.
paused_waiter() {
	local res pid rc=0 q=() n
	res=$(rname "pause$RANDOM")
	for n in ${QUORUM:-0}; do
		rcli -n $n SET "$(fence_key "$res" lock)" holder PX 60000 >/dev/null
		[ -z "${QUORUM:-}" ] || q+=(--redis "$FENCE_REDIS_URL/$n")
	done
	"$F" acquire "$res" --wait 2s "${q[@]}" >"$TMP/out" 2>"$TMP/err" &
	pid=$!
	wait_for 5 blocked $pid || echo "# not seen blocked in Redis"
	kill -STOP $pid
	sleep "$1"
	kill -CONT $pid
	wait $pid || rc=$?
	for n in ${QUORUM:-0}; do
		rcli -n $n DEL "$(fence_key "$res" lock)" >/dev/null
	done
	if [ $rc != 75 ]; then
		echo "paused $1 s: expected exit 75, got $rc"
		cat "$TMP/err"
		return 1
	fi
	grep -q 'not acquired within 2000 ms (held by another owner' "$TMP/err" || { cat "$TMP/err"; return 1; }
}

# A waiter stopped past its deadline while it blocks reads the answer that
# waited for it and exits 75, not 69, on one node and on a quorum
# (paused_waiter).
test_idle_paused_waiter() {
	paused_waiter 3
	paused_waiter 2.5
	paused_waiter 3
	QUORUM="13 14 15" paused_waiter 3
	QUORUM="13 14 15" paused_waiter 2.5
}

run_test idle_quorum_release
run_test idle_single_release
run_test idle_waiter_rides_kill
run_test idle_waiter_inf_rides_kill
run_test idle_waiter_unreachable
run_test idle_heartbeat_rides_kill
run_test idle_paused_waiter

echo "# client idle-connection CLI tests: $passed passed, $failed failed, $skipped skipped"
[ $failed = 0 ]
