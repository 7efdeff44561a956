#!/usr/bin/env bash
# bench/s12_transfers.sh: scenario 12, a transfer between two random
# accounts, each account its own resource "acct:<aid>", under
# pgbench:
#
#   plain     UPDATE of both rows in one autocommit statement     baseline
#   many      SELECT fence.fenced_update_many(ARRAY[R1, R2], ARRAY[T, T],
#             'UPDATE ... both rows', ...): one round trip
#   guarded   BEGIN; SET LOCAL fence.tokens (set_config); the same UPDATE
#             on a copy of the accounts protected in key mode; END
#   plain_tx  BEGIN; UPDATE one row; UPDATE the other; END         baseline
#             of two
#   two       BEGIN; fence.fenced_update on each account; END: two
#             single-resource fenced writes
#
# Every account's token is announced before the runs, as workers holding
# the accounts' leases would have done.  The transfers of "two" and
# "plain_tx" write the lower account first, so that none deadlocks.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

log "s12: transfers between two fenced accounts"
pgbench_accounts
sql >/dev/null <<SQL
DROP TABLE IF EXISTS s12_guarded;
CREATE TABLE s12_guarded (LIKE pgbench_accounts INCLUDING ALL) WITH (fillfactor = 100);
INSERT INTO s12_guarded SELECT * FROM pgbench_accounts;
SELECT fence.protect('s12_guarded', 'acct', key_column => 'aid');
DELETE FROM fence.fences WHERE resource LIKE 'acct:%';
SELECT count(fence.advance('acct:' || a, $token)) FROM generate_series(1, $accounts) a;
VACUUM ANALYZE pgbench_accounts, s12_guarded, fence.fences;
CHECKPOINT;
SQL

run_variant() {
	record s12 "$1" "$(pgb "transfer_$1.pgbench" -D accounts=$accounts -D token=$token)"
}

interleave run_variant plain many guarded plain_tx two

# the money is all there: transfers move it, fencing loses none
sum=$(sql -c "SELECT sum(abalance) FROM pgbench_accounts")
gsum=$(sql -c "SELECT sum(abalance) FROM s12_guarded")
[ "$sum" = 0 ] && [ "$gsum" = 0 ] || die "s12: balances sum to $sum and $gsum, not 0"

plain=$(median s12 plain)
plain_tx=$(median s12 plain_tx)
row 12 "plain transfer, one autocommit UPDATE of both rows (pgbench)" "$plain" tx/s
row 12 "fence.fenced_update_many on both accounts vs plain" "$(median s12 many)" tx/s plain "$plain" "" "$(pratio s12 many plain)"
row 12 "guarded key-mode table, SET LOCAL fence.tokens, vs plain" "$(median s12 guarded)" tx/s plain "$plain" "" "$(pratio s12 guarded plain)"
row 12 "plain transfer as two UPDATEs in a transaction" "$plain_tx" tx/s
row 12 "guarded key-mode table, SET LOCAL fence.tokens, vs two UPDATEs (4 round trips each)" "$(median s12 guarded)" tx/s "two UPDATEs" "$plain_tx" "" "$(pratio s12 guarded plain_tx)"
row 12 "two fence.fenced_update calls in a transaction vs two UPDATEs" "$(median s12 two)" tx/s "two UPDATEs" "$plain_tx" "" "$(pratio s12 two plain_tx)"
row_vs 12 "fence.fenced_update_many vs two fence.fenced_update calls" tx/s many two "two calls"
note "Scenario 12: pgbench -M prepared, $CLIENTS clients, $CORES threads, ${SECS}s per run, $ROUNDS runs each; a transfer of a random amount between two random accounts of $accounts, each account its own resource acct:<aid> announced at token $token before the runs (the checks lock the fence rows and move nothing); round trips per transfer: plain 1, fenced_update_many 1, guarded 4 (BEGIN, set_config, UPDATE, END), two UPDATEs 4, two fenced_update 4; the balances still sum to 0 after the runs."
