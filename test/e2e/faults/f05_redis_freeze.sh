#!/usr/bin/env bash
# F5: heartbeat after loss, release after expiry.
#
# A holds a 2 s lease under "fence run" and writes every 100 ms.  Redis is
# frozen with SIGSTOP: A's heartbeats get no answer.  Redis thaws only
# after A's fence process has given up; by Redis's clock A's lock has
# expired, and B takes the lease (token n+1) and writes.
#
# Must hold: the holder stops writing: fence run kills its worker and exits
# 76 while Redis is still frozen, on its own monotonic deadline; after the
# thaw "fence extend" and "fence release" with A's owner id are refused
# (compare-and-PEXPIRE, compare-and-DEL) and B's lock stays; the history
# passes the checker.
# Negative control: a holder that took its token with "fence acquire" and
# writes on without a heartbeat and without a token check: it goes on
# writing after B, and the checker must see the token go down.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init f05
need_client
redis_start f05
FENCE_REDIS_URL=$(redis_url f05)
export FENCE_REDIS_URL
rpid=$REDIS_PID_f05

writes() { grep -c "^$1	write	.*	ok	" "$HIST" || true; }
has_writes() { [ "$(writes "$1")" -ge "$2" ]; }

# --- fence run, guarded writes
p=f05g res=f05g:stock
new_history "$p"
make_tables "$p" 1000
WRITES=200 GAP_MS=100 TBL=$p start_worker A "$res" advance --ttl 2s --grace 1s --pg "$PGCONN"
a=$LAST_PID
wait_for 20 has_writes A 3
kill -STOP "$rpid"
frozen=$SECONDS
say "Redis frozen after A's write $(writes A)"
hist test note "$res" - - "$(now_ms)" - "SIGSTOP redis"
wait_exit "$a" 15
say "A's fence run exited $RC while Redis is frozen, after $(writes A) writes"
[ "$RC" = 76 ] || fail "A's fence run exited $RC, expected 76 (lease lost)"
kill -0 "$rpid" && [ "$(ps -o stat= -p "$rpid" | cut -c1)" = T ] || fail "Redis is not frozen any more"
hist A exit "$res" "$(token_of A)" "$(owner_of A)" "$(now_ms)" - "exit=$RC"
kill -CONT "$rpid"
hist test note "$res" - - "$(now_ms)" - "SIGCONT redis"
redis_wait "$REDIS_PORT_f05"

wait_for 10 lock_gone "$res"
HOLD=1 TBL=$p start_worker B "$res" advance --ttl 10s --pg "$PGCONN"
b=$LAST_PID
wait_for 20 state_is B done
[ "$(outcome B)" = ok ] || fail "B's write: $(outcome B)"
say "B (token $(token_of B)) wrote"
for op in extend release; do
	set +e
	"$FENCE_BIN" "$op" "$res" "$(owner_of A)" >/dev/null 2>&1
	rc=$?
	set -e
	hist A "$op" "$res" "$(token_of A)" "$(owner_of A)" "$(now_ms)" - "exit=$rc"
	[ $rc = 76 ] || fail "fence $op with A's owner id exited $rc after expiry, expected 76 (not ours)"
	[ "$(lock_owner "$res")" = "$(owner_of B)" ] || fail "fence $op with A's owner id touched B's lock"
done
say "fence extend and fence release with A's owner id refused; B's lock kept"
quit B
wait_exit "$b" 20
[ "$RC" = 0 ] || fail "B's fence run exited $RC"
dump_commits "$p"
record_counter "$p" "$res" 1000 -1
check_ok

# --- negative control: no heartbeat, no token check
p=f05c res=f05c:stock
new_history "$p"
rm -f "$WORK"/[AB].*
make_tables "$p" 1000
eval "$("$FENCE_BIN" acquire "$res" --ttl 2s)"
export FENCE_RESOURCE FENCE_TOKEN FENCE_OWNER
WRITES=200 GAP_MS=100 TBL=$p start_plain_worker A none
a=$LAST_PID
unset FENCE_RESOURCE FENCE_TOKEN FENCE_OWNER
wait_for 20 has_writes A 3
kill -STOP "$rpid"
hist test note "$res" - - "$(now_ms)" - "SIGSTOP redis"
# the lease's 2 s run out by Redis's clock, frozen or not
t0=$(now_ms)
past() { [ $(($(now_ms) - t0)) -ge 2500 ]; }
wait_for 10 past
kill -CONT "$rpid"
hist test note "$res" - - "$(now_ms)" - "SIGCONT redis"
redis_wait "$REDIS_PORT_f05"
wait_for 10 lock_gone "$res"
TBL=$p start_worker B "$res" none --ttl 10s --pg "$PGCONN"
wait_exit "$LAST_PID" 20
[ "$RC" = 0 ] || fail "B: exit $RC"
n=$(writes A)
wait_for 20 has_writes A $((n + 1))
kill "$a"
wait_exit "$a" 10
say "A kept writing after B took over"
dump_commits "$p"
record_counter "$p" "$res" 1000 -1
check_fails token-down
say "pass"
