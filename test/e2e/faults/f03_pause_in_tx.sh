#!/usr/bin/env bash
# F3: the holder pauses inside its transaction, holding the fence row lock.
#
# Worker A (token n) begins, passes the fence check and updates the row,
# then its psql (the libpq client) and its fence process are frozen with
# SIGSTOP before COMMIT.  A's lease runs out; worker B takes it (token n+1)
# and announces: fence.advance waits for A's row lock.  Then A either
# thaws and commits, or is killed (its backend aborts the transaction).
#
# Must hold: B waits, and re-checks against what committed: after A's
# COMMIT B reads A's quantity and writes on top of it; after A's abort B
# writes alone; no update is lost and the history passes the checker.
# The extension's isolation spec (advance.spec) covers the same interleaving
# statement by statement; this test does it with real processes.
# Negative control: B does not announce (fence run --no-pg; without it,
# fence run announces to the PostgreSQL that PGHOST and PGDATABASE name)
# and checks its token only at write time: it reads while A's write is
# uncommitted, and the checker must see the lost update.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init f03
need_client

# b_waits: some backend waits for a lock on a fence statement
b_waits() {
	[ "$(sql -c "SELECT count(*) FROM pg_stat_activity
		WHERE wait_event_type = 'Lock' AND query LIKE '%fence.%'")" -gt 0 ]
}

# story PREFIX END [ANNOUNCE]: END is commit or kill
story() {
	local p=$1 end=$2 announce=${3:-yes} res=$1:stock a b bpg=()
	new_history "$p"
	rm -f "$WORK"/[AB].*
	make_tables "$p" 100

	INTX_PAUSE=1 TBL=$p start_worker A "$res" advance --ttl 2s --pg "$PGCONN"
	a=$LAST_PID
	wait_for 20 state_is A intx
	kill -STOP "$a" "$(psql_pid A)" "$(worker_pid A)"
	say "A (token $(token_of A)) updated the row and is frozen before COMMIT"
	hist test note "$res" - - "$(now_ms)" - "SIGSTOP A in transaction"

	wait_for 10 lock_gone "$res"
	bpg=(--no-pg)
	[ "$announce" = yes ] && bpg=(--pg "$PGCONN")
	TBL=$p start_worker B "$res" advance --ttl 10s "${bpg[@]}"
	b=$LAST_PID
	wait_for 20 b_waits
	say "B (announce: $announce) waits for A's row lock"

	if [ "$end" = commit ]; then
		go A
		kill -CONT "$(psql_pid A)" "$(worker_pid A)"
		wait_for 20 state_is A wrote
		say "A thawed and committed: $(outcome A)"
	else
		kill -9 "$(psql_pid A)"
		say "A's psql killed: its transaction aborts"
	fi
	hist test note "$res" - - "$(now_ms)" - "A $end"
	wait_exit "$b" 20
	[ "$RC" = 0 ] && [ "$(outcome B)" = ok ] || fail "B: exit $RC, write $(outcome B)"
	say "B (token $(token_of B)) wrote, qty now $(qty "$p")"
	kill -CONT "$a" "$(worker_pid A)" 2>/dev/null || true
	wait_exit "$a" 20
	say "A's fence run exited $RC"
	dump_commits "$p"
	record_counter "$p" "$res" 100 -1
}

story f03a commit
[ "$(outcome A)" = ok ] || fail "A's write did not commit: $(outcome A)"
[ "$(qty f03a)" = 98 ] || fail "quantity $(qty f03a), expected 98"
check_ok

story f03b kill
[ "$(qty f03b)" = 99 ] || fail "quantity $(qty f03b), expected 99"
check_ok

story f03c commit no
check_fails lost-update
say "pass"
