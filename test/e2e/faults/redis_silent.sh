#!/usr/bin/env bash
# The network between a holder and Redis goes silent.
#
# A holds a 6 s lease under "fence run", talking to Redis (password and
# database 1, so every reconnect logs in again) through a proxy.  Right
# after one of A's renewals has been answered, the proxy goes silent:
# nothing passes in either direction, yet new connections are still
# accepted, so A's heartbeat hangs in its extend, then in the AUTH of its
# reconnect.  B waits for the lease on a direct connection.
#
# Must hold: A's command gets SIGTERM before B holds the lease.  By Redis's
# clock A's key lives until the last renewal ran plus 6 s; A's fence run
# must act at its local deadline (that renewal sent, plus 6 s, minus the
# drift margin of 62 ms), so every call of its heartbeat is bounded by the
# time left to that deadline.  A's fence run exits 76 and leaves B's lock
# alone.  The figures (from the last renewal to the SIGTERM and to B's
# acquire) are printed.
# Negative control: B's acquire must come within 6.5 s of the last renewal
# (the race is real: a SIGTERM that came only when a blocked call gave up,
# 1 s per call here, would come after it).
. "$(dirname "$0")/../lib/lib.sh"
e2e_init redis_silent
need_client
redis_start rsil
port=$REDIS_PORT_rsil
redis-cli -p "$port" CONFIG SET requirepass rsilpass >/dev/null
direct="redis://:rsilpass@127.0.0.1:$port/1"
proxy_start "$port"
via_proxy="redis://:rsilpass@127.0.0.1:$PROXY_PORT/1"
res=rsil:job
ttl=6000
drift=$((ttl / 100 + 2))

# The command under the lease: records when SIGTERM arrives (wall clock, ms).
child='import os, signal, sys, time
def term(*_):
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write("%d\n" % int(time.time() * 1000))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    sys.exit(143)
signal.signal(signal.SIGTERM, term)
open(sys.argv[2], "w").close()
while True:
    time.sleep(60)'
"$FENCE_BIN" run "$res" --ttl "${ttl}ms" --grace 2s --redis "$via_proxy" -- \
	"$E2E_PY" -c "$child" "$WORK/A.term" "$WORK/A.ready" >"$WORK/A.out" 2>"$WORK/A.err" &
a=$!
E2E_PIDS+=("$a")
wait_for 20 test -e "$WORK/A.ready"

# Silence the network right after a renewal was sent on and answered.
up0=$(proxy_field last_up_ms)
renewed() {
	local up down
	up=$(proxy_field last_up_ms) down=$(proxy_field last_down_ms)
	[ "$up" -gt "$up0" ] && [ "$down" -ge "$up" ]
}
wait_for 20 renewed
proxy_ctl silence >/dev/null
last=$(proxy_field last_up_ms)
hist test note "$res" - - "$(now_ms)" - "silence after the renewal at $last"
say "network silent after A's renewal at $last"

# B waits for the lease on its own connection.
"$FENCE_BIN" acquire "$res" --ttl 60s --wait 20s --redis "$direct" >"$WORK/B.out" 2>"$WORK/B.err" &
b=$!
E2E_PIDS+=("$b")
wait_exit "$a" 20
a_rc=$RC
wait_exit "$b" 30
[ "$RC" = 0 ] || fail "B's acquire exited $RC: $(cat "$WORK/B.err")"
eval "$(cat "$WORK/B.out")"
# When B took the lease, by Redis's clock: now minus the TTL B's lock used up.
b_at=$(redis-cli -p "$port" --no-auth-warning -a rsilpass -n 1 --raw EVAL \
	"local t = redis.call('TIME') local p = redis.call('PTTL', KEYS[1])
	 return tostring(t[1] * 1000 + math.floor(t[2] / 1000) - (60000 - p))" 1 "$(fence_key "$res" lock)")
[ -s "$WORK/A.term" ] || fail "A's command never got SIGTERM (fence run exited $a_rc)"
term_at=$(cat "$WORK/A.term")
hist A term "$res" - - "$term_at" - "sigterm"
hist B acquire "$res" "$FENCE_TOKEN" "$FENCE_OWNER" "$b_at" - ok

say "from the last renewal: SIGTERM to A's command after $((term_at - last)) ms," \
	"B's acquire after $((b_at - last)) ms (TTL $ttl ms, A's deadline at most $((ttl - drift)) ms)"
[ "$a_rc" = 76 ] || fail "A's fence run exited $a_rc, expected 76 (lease lost)"
[ "$term_at" -lt "$b_at" ] || fail "B held the lease $((term_at - b_at)) ms before A's command got SIGTERM"
[ $((b_at - last)) -le $((ttl + 500)) ] || fail "negative control: B acquired only $((b_at - last)) ms after the renewal"
owner=$(redis-cli -p "$port" --no-auth-warning -a rsilpass -n 1 --raw GET "$(fence_key "$res" lock)")
[ "$owner" = "$FENCE_OWNER" ] || fail "B's lock is gone after A exited"
proxy_ctl release >/dev/null
say "pass"
