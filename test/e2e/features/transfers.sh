#!/usr/bin/env bash
# Transfers between accounts (a set of leases): each transfer debits one account
# and credits another, each account its own resource and lease, under
# "fence run -R acct:X -R acct:Y", on an accounts table guarded in key
# mode (row N belongs to acct:N), which reads both tokens from the one
# fence.tokens that fence run puts in PGOPTIONS.
#
# Story: transfer A (1 -> 2) reads both balances and is frozen (SIGSTOP,
# fence process and all) past its TTL.  Once both its locks are gone,
# four workers make transfers concurrently between the same three
# accounts, in both directions (1 -> 2, 2 -> 1, 3 -> 1, 3 -> 2), each
# asking for its pair in its own order.  Then A thaws: first its worker,
# which writes from its stale read at once, then its fence process.
#
# Must hold: no transfer deadlocks (every run ends, exit 0, within the
# bound; no 40P01); A's stale write is refused (LF001) and its fence run
# exits 76; the total of the balances never changes; each account's
# balance is its initial one plus the deltas of its logged writes (no
# lost update); the history passes the checker (tokens never go down per
# account, one owner per token).
# Negative control: the same story on the table without the guard; A's
# stale write lands, wipes out what the others moved into accounts 1 and
# 2, and money is lost.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init transfers
need_client
[ "$(sql -c "SELECT to_regprocedure('fence.advance_many(text[],bigint[],text[])') IS NOT NULL")" = t ] ||
	skip "the extension has no fence.tokens (older than 0.3.0)"

ROUNDS=${TRANSFER_ROUNDS:-5}

make_accounts() {
	sql <<-SQL
		SET client_min_messages = warning;
		DROP TABLE IF EXISTS ${1}_accounts, ${1}_log;
		CREATE TABLE ${1}_accounts (id int PRIMARY KEY, balance int NOT NULL);
		INSERT INTO ${1}_accounts VALUES (1, 100), (2, 100), (3, 100);
		CREATE TABLE ${1}_log (
			seq bigserial PRIMARY KEY, worker text, resource text, token bigint,
			owner text, delta int, xid bigint DEFAULT txid_current());
	SQL
}

# transfer NAME FROM TO AMT [FENCE-RUN OPTION...]: one transfer in the
# background; LAST_PID is its fence run.
transfer() {
	local name=$1 from=$2 to=$3 amt=$4
	shift 4
	W=$name FROM=$from TO=$to AMT=$amt TBL=$P STATE=$WORK HIST=$HIST \
		"$FENCE_BIN" run -R "acct:$from" -R "acct:$to" --pg "$PGCONN" "$@" -- \
		bash "$E2E_DIR/transfer.sh" >"$WORK/$name.out" 2>"$WORK/$name.err" &
	LAST_PID=$!
	E2E_PIDS+=("$LAST_PID")
}

# worker NAME FROM TO: ROUNDS transfers of 1, one after the other; each
# run's exit status goes into NAME.rc.
worker() {
	local name=$1 from=$2 to=$3 i rc
	(
		for ((i = 1; i <= ROUNDS; i++)); do
			rc=0
			W=$name-$i FROM=$from TO=$to AMT=1 TBL=$P STATE=$WORK HIST=$HIST \
				"$FENCE_BIN" run -R "acct:$to" -R "acct:$from" --pg "$PGCONN" --ttl 10s --wait 60s -- \
				bash "$E2E_DIR/transfer.sh" >>"$WORK/$name.out" 2>>"$WORK/$name.err" || rc=$?
			echo "$rc" >>"$WORK/$name.rc"
		done
	) &
	E2E_PIDS+=("$!")
	WORKERS+=("$!")
}

total() { sql -c "SELECT sum(balance) FROM ${P}_accounts"; }
# accounts whose balance is not their initial 100 plus their logged deltas
drifted() {
	sql -c "SELECT string_agg(a.id || ':' || a.balance || '<>' || 100 + coalesce(l.d, 0), ' ')
		FROM ${P}_accounts a LEFT JOIN (SELECT resource, sum(delta) d FROM ${P}_log GROUP BY 1) l
		ON l.resource = 'acct:' || a.id WHERE a.balance <> 100 + coalesce(l.d, 0)"
}

# story PREFIX GUARD: play the story; the history in $HIST.
story() {
	P=$1
	local guard=$2 a n rc pid
	new_history "$P"
	make_accounts "$P"
	rcli DEL "$(fence_key acct:1 lock)" "$(fence_key acct:2 lock)" "$(fence_key acct:3 lock)" >/dev/null
	[ "$guard" = 0 ] || sql -c "SELECT fence.protect('${P}_accounts', 'acct', key_column => 'id')" >/dev/null

	PAUSE=1 transfer A 1 2 10 --ttl 2s
	a=$LAST_PID
	wait_for 20 state_is A read
	kill -STOP "$a" "$(worker_pid A)"
	say "A read balances 1 and 2 and is frozen"
	hist test note - - - "$(now_ms)" - "SIGSTOP A"
	wait_for 10 eval 'lock_gone acct:1 && lock_gone acct:2'

	WORKERS=()
	worker B 1 2
	worker C 2 1
	worker D 3 1
	worker E 3 2
	for pid in "${WORKERS[@]}"; do wait_exit "$pid" 120; done
	for n in B C D E; do
		[ "$(sort -u "$WORK/$n.rc")" = 0 ] || fail "worker $n: fence run exits $(tr '\n' ' ' <"$WORK/$n.rc")"
	done
	! grep -q 40P01 "$WORK"/*.sqlerr 2>/dev/null || fail "a transfer deadlocked (40P01)"
	say "4 workers made $((4 * ROUNDS)) transfers; balances $(sql -c "SELECT string_agg(balance::text, ' ' ORDER BY id) FROM ${P}_accounts")"

	go A
	kill -CONT "$(worker_pid A)"
	wait_for 20 test -e "$WORK/A.wrote"
	say "A thawed and wrote: $(outcome A)"
	hist test note - - - "$(now_ms)" - "SIGCONT A"
	kill -CONT "$a"
	wait_exit "$a" 20; rc=$RC
	say "A's fence run exited $rc"
	[ "$guard" = 0 ] || [ "$rc" = 76 ] || fail "A's fence run exited $rc, expected 76 (lease lost)"
	lock_gone acct:1 && lock_gone acct:2 || [ "$guard" = 0 ] || fail "a lock is left behind"
	dump_commits "$P"
}

story trfg 1
[ "$(outcome A)" = LF001 ] || fail "A's stale transfer: $(outcome A), expected LF001"
[ "$(total)" = 300 ] || fail "money changed: total $(total), expected 300"
[ -z "$(drifted)" ] || fail "lost update: $(drifted)"
[ "$(sql -c "SELECT count(*) FROM trfg_log")" = $((8 * ROUNDS)) ] || fail "not every transfer was logged"
check_ok

rm -f "$WORK"/[A-E].* "$WORK"/[A-E]-*.*
story trfc 0
[ "$(outcome A)" = ok ] || fail "control: A's stale transfer was not accepted: $(outcome A)"
say "control: total $(total), drifted: $(drifted)"
[ "$(total)" -lt 300 ] || fail "control: no money was lost (total $(total))"
[ -n "$(drifted)" ] || fail "control: no lost update"
check_fails token-down
say "pass"
