#!/usr/bin/env bash
# F4: lease validity computed from a wall clock.
#
# The fence client runs under libfaketime with its wall clock jumping two
# hours forward, then two hours back, while it holds a 3 s lease and its
# worker writes every 200 ms for about 7 s.  libfaketime also shifts
# CLOCK_MONOTONIC unless told not to (FAKETIME_DONT_FAKE_MONOTONIC=1): with
# that set, only the wall clock jumps, as NTP or an operator would make it.
#
# Must hold: nothing changes.  The lease stays held the whole time (the lock
# key never disappears, another "fence acquire" always gets 75), no write
# is refused, fence run exits 0, and the history passes the checker:
# renewal and expiry timers use CLOCK_MONOTONIC.
# Negative control: wallclock_holder.sh keeps its deadlines with date(1)
# under the same jump back: its renewals stop, its lock expires in Redis,
# another worker takes the lease and writes, the holder still believes it
# holds and writes too; the checker must see the token go down.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init f04
need_client

FT_LIB=
for f in /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 \
	/usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1; do
	[ -e "$f" ] && { FT_LIB=$f; break; }
done
[ -n "$FT_LIB" ] || skip "libfaketime is not installed (Debian package faketime)"
CLOCK=$WORK/clock
# set_clock OFFSET: the client re-reads the file on every call
# (FAKETIME_NO_CACHE); libfaketime 0.9.10+2024 and 0.9.12 abort on a file
# caught half written, so a new one is written aside and renamed over it.
set_clock() { echo "$1" >"$CLOCK.new" && mv -f "$CLOCK.new" "$CLOCK"; }
set_clock "+0"
# faked CMD...: run CMD with the wall clock read from $CLOCK at every call
faked() {
	LD_PRELOAD=$FT_LIB FAKETIME_TIMESTAMP_FILE=$CLOCK FAKETIME_NO_CACHE=1 \
		FAKETIME_DONT_FAKE_MONOTONIC=1 "$@"
}
[ "$(faked date +%Y)" = "$(date +%Y)" ] || fail "faked clock at +0 is off"
set_clock "+2h"
[ "$(($(faked date +%s) - $(date +%s)))" -ge 7190 ] || fail "libfaketime does not move the clock"
set_clock "+0"

writes() { grep -c "^$1	write	.*	ok	" "$HIST" || true; }
has_writes() { [ "$(writes "$1")" -ge "$2" ]; }

# --- the fence client under a jumping clock
p=f04g res=f04g:stock
new_history "$p"
make_tables "$p" 100
WRITES=30 GAP_MS=200 TBL=$p faked start_worker A "$res" advance --ttl 3s --pg "$PGCONN"
a=$LAST_PID
wait_for 20 has_writes A 1
owner=$(owner_of A)
tries=0 step=0
while kill -0 "$a" 2>/dev/null; do
	n=$(writes A)
	if [ $step = 0 ] && [ "$n" -ge 2 ]; then
		set_clock "+2h"; step=1
		say "clock jumps 2 h forward after write $n"
		hist test note "$res" - - "$(now_ms)" - "clock +2h"
	elif [ $step = 1 ] && [ "$n" -ge 15 ]; then
		set_clock "-2h"; step=2
		say "clock jumps 2 h back after write $n"
		hist test note "$res" - - "$(now_ms)" - "clock -2h"
	fi
	# (once A's worker is done, fence run releases the lock: a probe that
	# raced with that proves nothing either way)
	if ! state_is A done; then
		if [ "$(lock_owner "$res")" != "$owner" ] && ! state_is A done; then
			fail "A's lock disappeared (after write $n)"
		fi
		if [ $((tries % 5)) = 0 ]; then
			set +e
			"$FENCE_BIN" acquire "$res" --ttl 1s >"$WORK/probe.out" 2>&1
			rc=$?
			set -e
			if [ $rc != 75 ] && ! state_is A done; then
				fail "another fence acquire got exit $rc while A held the lease"
			fi
		fi
		tries=$((tries + 1))
	fi
	sleep 0.05
done
wait_exit "$a" 10
[ "$RC" = 0 ] || fail "A's fence run exited $RC: $(cat "$WORK/A.err")"
[ "$(writes A)" = 30 ] || fail "A made $(writes A) writes, expected 30"
say "A held its lease through both jumps: 30 writes, lock checked $tries times"
dump_commits "$p"
record_counter "$p" "$res" 100 -1
check_ok

# --- negative control: deadlines on the wall clock
p=f04c res=f04c:stock
new_history "$p"
make_tables "$p" 100
set_clock "+0"
FENCE_BIN=$FENCE_BIN faked bash "$E2E_DIR/wallclock_holder.sh" "$res" 1500 "$p" "$WORK" "$HIST" &
h=$!
E2E_PIDS+=("$h")
echo "$h" >"$WORK/H.pid"
wait_for 20 has_writes H 1
set_clock "-2h"
say "clock jumps 2 h back"
hist test note "$res" - - "$(now_ms)" - "clock -2h"
wait_for 20 lock_gone "$res"
TBL=$p start_worker B "$res" none --ttl 10s --pg "$PGCONN"
wait_exit "$LAST_PID" 20
[ "$RC" = 0 ] || fail "B: exit $RC"
say "B (token $(token_of B)) took the lease and wrote"
n=$(writes H)
wait_for 20 has_writes H $((n + 1))
touch "$WORK/H.quit"
wait_exit "$h" 20
say "the wall-clock holder (token $(cat "$WORK/H.token")) wrote after B"
dump_commits "$p"
record_counter "$p" "$res" 100 -1
check_fails token-down
say "pass"
