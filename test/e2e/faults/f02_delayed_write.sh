#!/usr/bin/env bash
# F2: a write delayed in the network, delivered after its sender died.
#
# Worker A (token n) talks to PostgreSQL through proxy.py.  After it read
# the quantity the proxy starts holding bytes; A sends its write (one
# message: BEGIN, fence.fenced_update, log row, COMMIT), which stays in the
# proxy.  A is killed with SIGKILL, fence process, worker and psql.  Once
# A's lock has expired, B takes the lease (token n+1), announces, writes.
# Then the proxy delivers A's old bytes, and the server runs them.
#
# Must hold: the delayed write is refused with LF001 (the server's reply,
# which nobody reads any more, is kept by the proxy), the quantity shows
# B's write only, and the history passes the checker.
# Negative control: the same with a plain UPDATE: the delayed write lands
# over B's, and the checker must see the token go down and the lost update.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init f02
need_client
proxy_start
via_proxy="host=127.0.0.1 port=$PROXY_PORT user=$PGUSER dbname=$PGDATABASE"

story() {
	local p=$1 mode=$2 res=$1:stock a pid
	new_history "$p"
	make_tables "$p" 100

	W_PG=$via_proxy PAUSE=1 TBL=$p start_worker A "$res" "$mode" --ttl 2s --pg "$PGCONN"
	a=$LAST_PID
	wait_for 20 state_is A read
	proxy_ctl hold >/dev/null
	go A
	wait_for 20 proxy_holds
	say "A (token $(token_of A)) sent its write; the proxy holds $(proxy_field held) bytes"
	pid=$(worker_pid A)
	# stopped first: killing its children first would let it react (and
	# exit) before its own kill, which would then find no such process
	kill -STOP "$pid"
	pkill -9 -P "$pid" || true
	kill -9 "$pid"
	kill9 "$a"
	hist test note "$res" - - "$(now_ms)" - "A killed, its write still held"
	say "A killed"

	wait_for 10 lock_gone "$res"
	TBL=$p start_worker B "$res" "$mode" --ttl 10s --pg "$PGCONN"
	wait_exit "$LAST_PID" 20
	[ "$RC" = 0 ] && [ "$(outcome B)" = ok ] || fail "B: exit $RC, write $(outcome B)"
	say "B (token $(token_of B)) wrote, qty now $(qty "$p")"

	proxy_ctl release >/dev/null
	hist test note "$res" - - "$(now_ms)" - "proxy released A's write"
	wait_for 20 proxy_idle
	if grep -aq LF001 "$WORK"/proxy/orphan-*.bin 2>/dev/null; then
		DELAYED=LF001
	else
		DELAYED=accepted
	fi
	rm -f "$WORK"/proxy/orphan-*.bin
	say "the delayed write of A was delivered: $DELAYED; qty now $(qty "$p")"
	dump_commits "$p"
	record_counter "$p" "$res" 100 -1
}

story f02g fenced
[ "$DELAYED" = LF001 ] || fail "the delayed write was not refused with LF001"
[ "$(qty f02g)" = 99 ] || fail "quantity $(qty f02g), expected 99"
check_ok

rm -f "$WORK"/[AB].*
story f02c none
[ "$DELAYED" = accepted ] || fail "control: the delayed write did not land"
check_fails token-down lost-update
say "pass"
