#!/usr/bin/env bash
# test/e2e/lib/wallclock_holder.sh: the negative control of F4, a lease holder
# that does what pgfence must not do: it keeps its lease deadline and its
# renewal times on the wall clock (date), and writes without a token check.
#
#   wallclock_holder.sh RESOURCE TTL_MS TABLE_PREFIX STATE_DIR HIST
#
# Takes the lease with "fence acquire", then loops: renew with "fence
# extend" when the wall clock says a third of the TTL has passed, write
# (read-modify-write, no check) while the wall clock says the lease is
# valid, until STATE_DIR/H.quit exists.  Run under libfaketime with the
# clock jumping back, its renewals stop while it still believes it holds.
set -uo pipefail
res=$1 ttl=$2 p=$3 state=$4 HIST=$5
now() { date +%s%3N; }
hist() {
	local IFS=$'\t'
	printf '%s\n' "$*" >>"$HIST"
}
eval "$("$FENCE_BIN" acquire "$res" --ttl "${ttl}ms")" || exit 75
echo "$FENCE_TOKEN" >"$state/H.token"
deadline=$(($(now) + ttl)) renew=$(($(now) + ttl / 3))
hist H acquire "$res" "$FENCE_TOKEN" "$FENCE_OWNER" "$(now)" - ok
n=0
while [ ! -e "$state/H.quit" ]; do
	if [ "$(now)" -ge "$renew" ]; then
		"$FENCE_BIN" extend "$res" "$FENCE_OWNER" --ttl "${ttl}ms" >/dev/null 2>&1 && deadline=$(($(now) + ttl))
		renew=$(($(now) + ttl / 3))
	fi
	if [ "$(now)" -lt "$deadline" ]; then
		t=$(now)
		cur=$(psql -X -qAt -c "SELECT qty FROM ${p}_stock WHERE id = 1")
		# one -c is one transaction, its RETURNING last: psql before 15
		# prints only the last result of a -c
		seq=$(psql -X -qAt -v ON_ERROR_STOP=1 -c "UPDATE ${p}_stock SET qty = $((cur - 1)) WHERE id = 1;
			INSERT INTO ${p}_log (worker, resource, token, owner)
			VALUES ('H', '$res', $FENCE_TOKEN, '$FENCE_OWNER') RETURNING seq") &&
			hist H write "$res" "$FENCE_TOKEN" "$FENCE_OWNER" "$t" "$(now)" ok "seq=$seq"
		n=$((n + 1))
		echo "$n" >"$state/H.writes"
	fi
	sleep 0.1
done
