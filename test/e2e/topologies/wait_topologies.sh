#!/usr/bin/env bash
# wait_topologies: waiters queued for one lease on every Redis topology.
#
# On a single node, a Redis Cluster of 3 masters, a master under 3
# sentinels and a quorum of 3 independent nodes, in turn: four workers loop
# "fence run --wait" doing read-modify-write on one counter, so that there
# are always waiters, and each release hands the lease on (one master) or
# wakes the next waiter (quorum).  Around them:
#
#   S   took a 1 s lease with "fence acquire" and read, and never releases
#       (a holder that died): the workers start queued behind it and must
#       get the lease when it expires; S's late write must be refused.
#   Z   a waiter ("fence acquire --wait") that queues behind the workers
#       while the test holds the lease (X), and is frozen (SIGSTOP) there.
#       The lease comes to it in its turn: on one master Redis runs the
#       attempt Z sent behind its BLPOP, so frozen Z holds the lease until
#       its 2 s TTL runs out, like any frozen holder; then Z is killed with
#       -9.  The workers must go on, and Z must have printed nothing.
#
# Must hold, on each topology: S's stale write is refused (LF001); the
# workers keep writing while Z is frozen and after it died; no worker's
# "--wait 30s" ran out (exit 75); the history passes the checker (tokens in
# commit order, no token for two owners, no lost update).
# Negative control (single node): the same workers and S on a counter
# without the token check: S's stale write lands, and the checker must see
# the lost update.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init wait_topologies
need_client

mode=$(guarded_mode)

# more_writes RESOURCE WHAT: the workers wrote 8 more times (30 s)
more_writes() {
	local n
	n=$(accepted "$1")
	wait_for 30 accepted_at_least "$1" $((n + 8))
}

# queued CLI-ARGS RESOURCE N: at least N waiters in RESOURCE's queue, as
# "redis-cli CLI-ARGS" sees it; CLI-ARGS may name several nodes, separated
# by "|", and one of them is enough (a quorum's waiters queue only on the
# nodes where the lock is busy, which need not be a given one)
queued() {
	local args
	while IFS= read -r -d '|' args; do
		# shellcheck disable=SC2086
		[ "$(redis-cli $args ZCARD "fence:{$2}:queue")" -ge "$3" ] && return 0
	done <<<"$1|"
	return 1
}

# story NAME URL CLI-ARGS [CONTROL]: the whole test on the topology at URL;
# "redis-cli CLI-ARGS" reaches a node that holds the resource's queue
story() {
	local name=$1 cli=$3 control=${4:-} p=wq$1 z w x
	FENCE_REDIS_URL=$2
	export FENCE_REDIS_URL
	HG=$WORK/history.$p HC=$WORK/history.${p}c
	: >"$HG"
	: >"$HC"
	make_tables "$p" 1000
	protect_if "$mode" "$p" "$p:stock"
	HIST=$HG
	TBL=$p start_stalled "S$name" "$p:stock" "$mode" 1s --pg "$PGCONN"
	for w in 1 2 3 4; do
		WRITES=2 GAP_MS=5 TBL=$p start_loop_worker "W$name.$w" "$p:stock" "$mode" \
			--ttl 2s --wait 30s --grace 500ms --pg "$PGCONN"
	done
	if [ -n "$control" ]; then
		make_tables "${p}c" 1000
		HIST=$HC
		TBL=${p}c start_stalled "Sc$name" "${p}c:stock" none 1s
		for w in 1 2; do
			WRITES=2 GAP_MS=5 TBL=${p}c start_loop_worker "C$name.$w" "${p}c:stock" none \
				--ttl 2s --wait 30s --grace 500ms
		done
		HIST=$HG
	fi
	wait_for 30 accepted_at_least "$p:stock" 8

	# X: the test queues among the workers and holds the lease, so that Z
	# queues behind all four of them
	x=$(FENCE_OWNER= && eval "$("$FENCE_BIN" acquire "$p:stock" --ttl 10s --wait 30s)" &&
		echo "$FENCE_OWNER") || fail "$name: X got no lease"
	wait_for 20 queued "$cli" "$p:stock" 4
	"$FENCE_BIN" acquire "$p:stock" --ttl 2s --wait 30s >"$WORK/Z$name.out" 2>&1 &
	z=$!
	E2E_PIDS+=("$z")
	wait_for 20 queued "$cli" "$p:stock" 5
	kill -STOP "$z"
	hist test note - - - "$(now_ms)" - "Z frozen in the queue"
	"$FENCE_BIN" release "$p:stock" "$x" >/dev/null || fail "$name: X's release"
	# four turns of two writes each, then Z's, which it cannot use
	more_writes "$p:stock" "with Z frozen"
	more_writes "$p:stock" "with Z frozen, past its turn"
	[ ! -s "$WORK/Z$name.out" ] || fail "$name: the frozen Z printed $(cat "$WORK/Z$name.out")"
	kill9 "$z"
	hist test note - - - "$(now_ms)" - "Z killed"
	more_writes "$p:stock" "after Z died"

	go "S$name"
	wait_for 20 state_is "S$name" done
	[ "$(outcome "S$name")" = LF001 ] || fail "$name: S's stale write: $(outcome "S$name"), expected LF001"
	if [ -n "$control" ]; then
		HIST=$HC
		wait_for 30 accepted_at_least "${p}c:stock" 8
		go "Sc$name"
		wait_for 20 state_is "Sc$name" done
		[ "$(outcome "Sc$name")" = ok ] || fail "control: Sc's stale write did not land"
		HIST=$HG
	fi
	stop_loop_workers
	! grep -q "	run	.*	exit=75$" "$HG" "$HC" ||
		fail "$name: a worker's --wait 30s ran out: $(grep "exit=75" "$HG" "$HC" | head -3)"

	dump_commits "$p"
	record_counter "$p" "$p:stock" 1000 -1
	check_ok
	if [ -n "$control" ]; then
		HIST=$HC
		dump_commits "${p}c"
		record_counter "${p}c" "${p}c:stock" 1000 -1
		check_fails lost-update
	fi
	HIST=$HG
	say "$name: pass ($(accepted "$p:stock") writes)"
}

redis_start wq1
story single "$(redis_url wq1)" "-p $REDIS_PORT_wq1" control

cluster_start wqc 3
story cluster "$(cluster_url wqc)" "-c -p $REDIS_PORT_wqc1"

sentinel_set_start wqm wqr wqs 5000
story sentinel "$(sentinel_url wqs)" "-p $REDIS_PORT_wqm"

redis_start wqq1
redis_start wqq2
redis_start wqq3
story quorum "$(redis_url wqq1) $(redis_url wqq2) $(redis_url wqq3)" \
	"-p $REDIS_PORT_wqq1|-p $REDIS_PORT_wqq2|-p $REDIS_PORT_wqq3"
say "pass"
