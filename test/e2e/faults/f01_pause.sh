#!/usr/bin/env bash
# F1: the holder pauses longer than its TTL (a GC pause, here SIGSTOP).
#
# Worker A takes the lease (token n), reads the quantity and is frozen,
# fence process and all.  Once its lock has expired in Redis, worker B
# takes the lease (token n+1), announces it, writes and keeps holding.
# Then A thaws: first its worker, which writes at once as a thawed program
# would, then its fence process.
#
# Must hold: A's write is refused with LF001; A's heartbeat sees the loss
# (fence run exits 76 and sends the worker SIGTERM); neither A's own
# release on the way out nor "fence release" with A's owner id deletes B's
# lock; the history passes the checker.
# Negative control: the same story on an unguarded table; A's stale write
# lands, and the checker must see the token go down and the lost update.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init f01
need_client

# story PREFIX MODE: play the story; leaves the history in $HIST.
story() {
	local p=$1 mode=$2 res=$1:stock a b rc
	new_history "$p"
	make_tables "$p" 100
	protect_if "$mode" "$p" "$res"

	PAUSE=1 HOLD=1 TBL=$p start_worker A "$res" "$mode" --ttl 2s --pg "$PGCONN"
	a=$LAST_PID
	wait_for 20 state_is A read
	kill -STOP "$a" "$(worker_pid A)"
	say "A (token $(token_of A)) read $(qty "$p") and is frozen"
	hist test note "$res" - - "$(now_ms)" - "SIGSTOP A"

	wait_for 10 lock_gone "$res"
	HOLD=1 TBL=$p start_worker B "$res" "$mode" --ttl 10s --pg "$PGCONN"
	b=$LAST_PID
	wait_for 20 state_is B done
	[ "$(outcome B)" = ok ] || fail "B's write: $(outcome B)"
	[ "$(token_of B)" -gt "$(token_of A)" ] || fail "B's token $(token_of B) is not above A's $(token_of A)"
	say "B (token $(token_of B)) wrote, qty now $(qty "$p")"

	go A
	kill -CONT "$(worker_pid A)"
	wait_for 20 state_is A wrote
	say "A thawed and wrote: $(outcome A)"
	hist test note "$res" - - "$(now_ms)" - "SIGCONT A"
	kill -CONT "$a"
	wait_exit "$a" 20; rc=$RC
	say "A's fence run exited $rc"
	[ "$rc" = 76 ] || fail "A's fence run exited $rc, expected 76 (lease lost)"
	grep -q "^A	term	" "$HIST" || fail "A's worker did not get SIGTERM"
	[ "$(lock_owner "$res")" = "$(owner_of B)" ] || fail "B's lock is gone after A exited"
	set +e
	"$FENCE_BIN" release "$res" "$(owner_of A)" >/dev/null 2>&1
	rc=$?
	set -e
	[ "$rc" = 76 ] || fail "fence release with A's owner id exited $rc, expected 76 (not ours)"
	[ "$(lock_owner "$res")" = "$(owner_of B)" ] || fail "fence release with A's owner deleted B's lock"
	hist A release "$res" "$(token_of A)" "$(owner_of A)" "$(now_ms)" - "exit=$rc"

	quit B
	wait_exit "$b" 20; rc=$RC
	[ "$rc" = 0 ] || fail "B's fence run exited $rc"
	lock_gone "$res" || fail "B's release left its lock"
	dump_commits "$p"
	record_counter "$p" "$res" 100 -1
}

mode=$(guarded_mode)
say "guarded writes: $mode"
story f01g "$mode"
[ "$(outcome A)" = LF001 ] || fail "A's stale write: $(outcome A), expected LF001"
[ "$(qty f01g)" = 99 ] || fail "quantity $(qty f01g), expected 99"
check_ok

rm -f "$WORK"/[AB].*
story f01c none
[ "$(outcome A)" = ok ] || fail "control: A's stale write was not accepted: $(outcome A)"
check_fails token-down lost-update
say "pass"
