#!/usr/bin/env bash
# topo_quorum: a quorum of independent Redis nodes (3, then 5) loses nodes while
# workers write.
#
# Every client uses all the nodes' URLs (a quorum).  Three workers loop
# "fence run" doing read-modify-write on one counter; S took a lease with
# "fence acquire", read, and stalls past its TTL.  Node 1 runs with a
# wall clock the test can move (lib/clockshift.c: libfaketime deadlocks in
# redis-server's jemalloc).  Then, a minority at a time, with the workers
# running through each fault:
#
#   3 nodes:  node 2 killed (down); node 2 back, empty; node 3 frozen
#             (SIGSTOP); node 1's clock jumps an hour ahead (every lock on
#             it expires at once);
#   5 nodes:  node 2 killed and node 3 frozen together; node 2 back empty
#             and node 1's clock jumping together.
#
# After each fault a probe takes and gives back a lease on a resource of
# its own, with no PostgreSQL involved (so no healing): its tokens must go
# up each time (tokens survive a minority of nodes restarting empty), and
# the counter of a node that came back empty is repaired by the next claim
# that reaches it.
#
# Must hold: S's stale write is refused (LF001); the history passes the
# checker (tokens in commit order, no token for two owners, no lost update).
# Negative control: the same on a counter without the token check: the
# stale write lands, and the checker must see the lost update.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init topo_quorum
need_client

command -v cc >/dev/null || skip "no C compiler for lib/clockshift.c"
cc -shared -fPIC -O2 -o "$WORK/clockshift.so" "$E2E_DIR/clockshift.c" ||
	fail "could not build lib/clockshift.c"

mode=$(guarded_mode)

# probe WHAT: one more token on the probe resource, above every earlier
# one.  (Usually exactly one above: a claim whose answer was lost to a
# per-node timeout is claimed again one higher, and tokens only have to
# grow.)
probe() {
	local t
	t=$(FENCE_TOKEN= && eval "$("$FENCE_BIN" acquire "$P:probe" --ttl 10s --wait 10s)" &&
		"$FENCE_BIN" release "$P:probe" "$FENCE_OWNER" >/dev/null && echo "$FENCE_TOKEN") ||
		fail "probe after $1: no lease"
	[ "$t" -gt "$PROBE" ] || fail "probe after $1: token $t, not above $PROBE"
	PROBE=$t
	say "$1: probe token $t"
}

# repaired NODE WHAT: NODE came back empty; the next claims that reach it
# raise its counter to the newest token (a probe or a few: one that timed
# out on the node just restarted does not count)
repaired() {
	local i
	for i in 1 2 3 4 5; do
		[ "$(redis-cli -p "$(q "$1")" GET "fence:{$P:probe}:token")" = "$PROBE" ] && return 0
		probe "$2 (again)"
	done
	fail "node $1's probe counter was not repaired"
}

# more_writes WHAT: the workers got on with it during a fault
more_writes() {
	local n
	n=$(accepted "$P:stock")
	wait_for 60 accepted_at_least "$P:stock" $((n + 8))
}

# story N: the whole test on a quorum of N nodes
story() {
	local n=$1 i urls= q
	P=f13q$n
	CLOCK=$WORK/clock$n
	echo 0 >"$CLOCK"
	LD_PRELOAD=$WORK/clockshift.so CLOCKSHIFT_FILE=$CLOCK redis_start "${P}n1"
	for ((i = 2; i <= n; i++)); do
		redis_start "${P}n$i"
	done
	for ((i = 1; i <= n; i++)); do
		urls+="$(redis_url "${P}n$i") "
	done
	FENCE_REDIS_URL=$urls
	export FENCE_REDIS_URL
	q() { redis_port "${P}n$1"; }

	HG=$WORK/history.$P HC=$WORK/history.${P}c
	: >"$HG"
	: >"$HC"
	make_tables "$P" 1000
	protect_if "$mode" "$P" "$P:stock"
	make_tables "${P}c" 1000
	# S and Sc take a short lease and read first; they stall past it
	HIST=$HG
	TBL=$P start_stalled "S$n" "$P:stock" "$mode" 1s --pg "$PGCONN"
	HIST=$HC
	TBL=${P}c start_stalled "Sc$n" "${P}c:stock" none 1s

	for w in 1 2; do
		WRITES=4 GAP_MS=20 TBL=${P}c start_loop_worker "C$n.$w" "${P}c:stock" none \
			--ttl 2s --wait 30s --grace 500ms
	done
	HIST=$HG
	for w in 1 2 3; do
		WRITES=4 GAP_MS=20 TBL=$P start_loop_worker "W$n.$w" "$P:stock" "$mode" \
			--ttl 2s --wait 30s --grace 500ms --pg "$PGCONN"
	done
	wait_for 60 accepted_at_least "$P:stock" 8
	PROBE=0
	probe "start"

	if [ "$n" = 3 ]; then
		kill9 "$(redis_pid "${P}n2")"
		hist test note - - - "$(now_ms)" - "node 2 down"
		more_writes "node 2 down"
		probe "node 2 down"
		redis_restart "${P}n2"
		hist test note - - - "$(now_ms)" - "node 2 back, empty"
		more_writes "node 2 back empty"
		probe "node 2 back empty"
		repaired 2 "node 2 back empty"
		kill -STOP "$(redis_pid "${P}n3")"
		hist test note - - - "$(now_ms)" - "node 3 frozen"
		more_writes "node 3 frozen"
		probe "node 3 frozen"
		kill -CONT "$(redis_pid "${P}n3")"
	else
		kill9 "$(redis_pid "${P}n2")"
		kill -STOP "$(redis_pid "${P}n3")"
		hist test note - - - "$(now_ms)" - "node 2 down, node 3 frozen"
		more_writes "node 2 down and node 3 frozen"
		probe "node 2 down and node 3 frozen"
		kill -CONT "$(redis_pid "${P}n3")"
		redis_restart "${P}n2"
	fi
	echo 3600 >"$CLOCK"
	hist test note - - - "$(now_ms)" - "node 1's clock +1h"
	skew=$(($(redis-cli -p "$(q 1)" TIME | head -1) - $(date +%s)))
	[ "$skew" -ge 3500 ] || fail "node 1's clock did not jump (${skew}s ahead)"
	more_writes "node 1's clock an hour ahead"
	probe "node 1's clock an hour ahead"
	repaired 2 "node 1's clock an hour ahead"

	go "S$n"
	wait_for 20 state_is "S$n" done
	[ "$(outcome "S$n")" = LF001 ] || fail "S's stale write: $(outcome "S$n"), expected LF001"
	go "Sc$n"
	wait_for 20 state_is "Sc$n" done
	[ "$(outcome "Sc$n")" = ok ] || fail "control: Sc's stale write did not land"
	more_writes "the stale writes done"
	stop_loop_workers

	dump_commits "$P"
	record_counter "$P" "$P:stock" 1000 -1
	check_ok
	HIST=$HC
	dump_commits "${P}c"
	record_counter "${P}c" "${P}c:stock" 1000 -1
	check_fails lost-update
	say "quorum of $n: pass"
}

story 3
story 5
say "pass"
