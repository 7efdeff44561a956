#!/usr/bin/env bash
# topo_quorum_backstop: a quorum loses more than it can survive; PostgreSQL is the backstop.
#
# Tokens from a quorum of 3 stay increasing as long as, between two
# holders, some node that stored the earlier token keeps it and answers
# (client/README.md has the proof).  Here that assumption is broken on
# purpose: after tokens 1..3 were written, nodes 1 and 2 restart empty while
# node 3, the only one that still knows 3, is frozen.  The quorum (nodes 1
# and 2, a majority) hands out token 1 again.
#
# Must hold: the plain "fence acquire" holder of the repeated token has its
# write refused (LF001); "fence run --pg" sees its announce refused, claims
# a token above PostgreSQL's mark on a majority, and writes with it; once
# node 3 thaws, the next token is above that; the history passes the
# checker.
# Negative control: the same without the token check: the repeated token
# lands, and the checker must see the token go down.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init topo_backstop
need_client
for i in 1 2 3; do
	redis_start "f14n$i"
done
FENCE_REDIS_URL="$(redis_url f14n1) $(redis_url f14n2) $(redis_url f14n3)"
export FENCE_REDIS_URL

# story PREFIX MODE [--pg CONNINFO]: the options go to B's fence run
story() {
	local p=$1 mode=$2 res=$1:stock i
	shift 2
	new_history "$p"
	rm -f "$WORK"/[ABS]*.*
	for i in 1 2 3; do
		redis_restart "f14n$i"
	done
	make_tables "$p" 100
	protect_if "$mode" "$p" "$res"
	three_holders "$p" "$res" "$mode"
	say "A1..A3 wrote with tokens 1..3; nodes 1 and 2 restart empty, node 3 freezes"
	kill -STOP "$(redis_pid f14n3)"
	redis_restart f14n1
	redis_restart f14n2
	hist test note "$res" - - "$(now_ms)" - "nodes 1, 2 empty, node 3 frozen"

	repeated_token "$p" "$res" "$mode" 30 "$@"
	kill -CONT "$(redis_pid f14n3)"
	dump_commits "$p"
	record_counter "$p" "$res" 100 -1
}

mode=$(guarded_mode)
story f14g "$mode" --pg "$PGCONN"
healed
for i in 1 2; do
	c=$(redis-cli -p "$(redis_port "f14n$i")" GET "$(fence_key f14g:stock token)")
	[ "$c" = "$(token_of B)" ] || fail "node $i holds counter $c, not B's token $(token_of B)"
done
eval "$("$FENCE_BIN" acquire f14g:stock --ttl 5s)"
[ "$FENCE_TOKEN" -gt "$(token_of B)" ] || fail "after node 3 thawed: token $FENCE_TOKEN"
"$FENCE_BIN" release f14g:stock "$FENCE_OWNER" >/dev/null
say "healed on a majority; next token $FENCE_TOKEN"
check_ok

story f14c none
[ "$(outcome S)" = ok ] || fail "control: the repeated token's write did not land"
check_fails token-down
say "pass"
