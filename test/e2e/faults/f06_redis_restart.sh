#!/usr/bin/env bash
# F6: Redis restarts without its data (--save "" --appendonly no).
#
# Three workers in turn take the lease on a Redis without persistence and
# write (tokens 1, 2, 3; PostgreSQL's mark is 3).  Redis is killed with
# SIGKILL and started again, empty: its counter starts over.
#
# Must hold: a worker that takes a token from the empty Redis with plain
# "fence acquire" (token 1) has its write refused with LF001; "fence run
# --pg" sees its announce refused, lifts the Redis counter above
# PostgreSQL's mark and goes on with a fresh token (4), whose write lands;
# the history passes the checker.
# Negative control: the same without the token check and without the
# announce: the repeated tokens land and the checker must see the token go
# down.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init f06
need_client
redis_start f06
FENCE_REDIS_URL=$(redis_url f06)
export FENCE_REDIS_URL

# story PREFIX MODE [--pg CONNINFO]: the options go to the last fence run
story() {
	local p=$1 mode=$2 res=$1:stock i
	shift 2
	new_history "$p"
	rm -f "$WORK"/[ABS]*.*
	make_tables "$p" 100
	protect_if "$mode" "$p" "$res"
	three_holders "$p" "$res" "$mode"
	say "A1..A3 wrote with tokens 1..3; Redis restarts empty"
	redis_restart f06
	hist test note "$res" - - "$(now_ms)" - "redis restarted without data"

	repeated_token "$p" "$res" "$mode" 20 "$@"
	dump_commits "$p"
	record_counter "$p" "$res" 100 -1
}

mode=$(guarded_mode)
story f06g "$mode" --pg "$PGCONN"
healed
counter=$(rcli GET "$(fence_key f06g:stock token)")
[ "$counter" -ge "$(token_of B)" ] || fail "Redis counter $counter is below B's token"
say "healed: Redis counter now $counter"
check_ok

story f06c none
[ "$(outcome S)" = ok ] || fail "control: the repeated token's write did not land"
check_fails token-down
say "pass"
