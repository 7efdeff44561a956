#!/usr/bin/env bash
# test/e2e/lib/transfer.sh: one transfer of the transfers test, run under
# "fence run -R acct:FROM -R acct:TO --pg ... -- bash transfer.sh": read
# both balances, compute the new ones in the application, write both back
# and log one row per account, in one transaction.  Rows are updated in
# the order of their ids, as an application moving money should, so that
# two transfers never wait for each other's rows in opposite orders.
#
# Environment: W (name), STATE (state files), HIST (history), TBL (table
# prefix), FROM, TO, AMT; PAUSE=1: after the read, wait for STATE/W.go.
# The tokens come from fence run: FENCE_COUNT, FENCE_RESOURCE_i,
# FENCE_TOKEN_i, FENCE_OWNER_i (and fence.tokens in PGOPTIONS, which the
# guard reads).  State files: W.pid, W.read, W.wrote (outcome).  Exit: 0
# written, 3 refused.
set -uo pipefail
: "${W:?}" "${STATE:?}" "${HIST:?}" "${TBL:?}" "${FROM:?}" "${TO:?}" "${AMT:?}"
echo $$ >"$STATE/$W.pid"
now_ms() { date +%s%3N; }
hist() {
	local IFS=$'\t'
	printf '%s\n' "$*" >>"$HIST"
}
trap 'hist "$W" term - - - "$(now_ms)" - SIGTERM; exit 143' TERM

# the token and owner of each account, from the numbered variables
declare -A TOKEN OWNER
for ((i = 1; i <= ${FENCE_COUNT:-0}; i++)); do
	r=FENCE_RESOURCE_$i t=FENCE_TOKEN_$i o=FENCE_OWNER_$i
	TOKEN[${!r}]=${!t}
	OWNER[${!r}]=${!o}
done
lo=$((FROM < TO ? FROM : TO))
hi=$((FROM < TO ? TO : FROM))
for a in "$lo" "$hi"; do
	hist "$W" acquire "acct:$a" "${TOKEN[acct:$a]:-}" "${OWNER[acct:$a]:--}" "$(now_ms)" - "from=$FROM" "to=$TO"
done

psql_() { psql -X -qAt -v ON_ERROR_STOP=1 -v VERBOSITY=verbose "$@"; }
t=$(now_ms)
if ! bal=$(psql_ -c "SELECT string_agg(balance::text, ' ' ORDER BY id) FROM ${TBL}_accounts WHERE id IN ($lo, $hi)"); then
	hist "$W" read - - - "$t" "$(now_ms)" failed
	exit 3
fi
read -r blo bhi <<<"$bal"
hist "$W" read "acct:$lo" - - "$t" "$(now_ms)" "value=$blo"
hist "$W" read "acct:$hi" - - "$t" "$(now_ms)" "value=$bhi"
if [ "$FROM" = "$lo" ]; then dlo=$((-AMT)) dhi=$AMT; else dlo=$AMT dhi=$((-AMT)); fi
if [ "${PAUSE:-0}" = 1 ]; then
	touch "$STATE/$W.read"
	t0=$SECONDS
	while [ ! -e "$STATE/$W.go" ]; do
		((SECONDS - t0 < 120)) || exit 4
		sleep 0.02
	done
fi

row() { printf "('%s', 'acct:%s', %s, '%s', %s)" "$W" "$1" "${TOKEN[acct:$1]:-NULL}" "${OWNER[acct:$1]:-}" "$2"; }
t=$(now_ms)
if out=$(psql_ 2>"$STATE/$W.sqlerr" <<-SQL
	BEGIN;
	UPDATE ${TBL}_accounts SET balance = $((blo + dlo)) WHERE id = $lo;
	UPDATE ${TBL}_accounts SET balance = $((bhi + dhi)) WHERE id = $hi;
	INSERT INTO ${TBL}_log (worker, resource, token, owner, delta)
		VALUES $(row "$lo" "$dlo"), $(row "$hi" "$dhi") RETURNING resource || ' ' || seq;
	COMMIT;
SQL
); then
	while read -r res seq; do
		hist "$W" write "$res" "${TOKEN[$res]:-}" "${OWNER[$res]:--}" "$t" "$(now_ms)" ok "seq=$seq"
	done <<<"$out"
	echo ok >"$STATE/$W.wrote"
	exit 0
fi
code=$(grep -o -m1 -E 'ERROR:  [0-9A-Z]{5}' "$STATE/$W.sqlerr" | awk '{print $2}' || true)
hist "$W" write "acct:$lo" "${TOKEN[acct:$lo]:-}" "${OWNER[acct:$lo]:--}" "$t" "$(now_ms)" "${code:-unknown}"
echo "${code:-unknown}" >"$STATE/$W.wrote"
exit 3
