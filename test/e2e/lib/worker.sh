#!/usr/bin/env bash
# test/e2e/lib/worker.sh: the worker of the fault tests, run under
# "fence run RESOURCE --pg ... -- bash worker.sh" (or by hand with the
# FENCE_* variables set).  It does what the seed's story does: read the
# quantity, compute the new one in the application, write it back under
# the lease, and records every step in the history.
#
# Environment (set by lib.sh's start_worker):
#   W          worker name          STATE  directory for state files
#   TBL        table prefix         HIST   history file
#   MODE       how the write carries the token:
#                guard    plain UPDATE, the table's guard trigger checks
#                         fence.resource/fence.token/fence.owner (PGOPTIONS)
#                advance  SELECT fence.advance(...) first, same transaction
#                fenced   fence.fenced_update(...) does the UPDATE
#                none     no check at all (the negative control)
#   PAUSE=1    after the first read, wait for STATE/W.go before writing
#   INTX_PAUSE=1  in the first write, after the check and the UPDATE, create
#              STATE/W.intx and wait for STATE/W.go before logging and COMMIT
#   HOLD=1     after the writes, wait for STATE/W.quit before exiting
#   WRITES=N   read-modify-write N times (default 1), GAP_MS apart
#   STEP=S     change of the quantity per write (default -1)
#   W_PG       libpq connection string (default: the PG* variables)
#
# State files: W.pid, W.env (token, owner), W.read, W.intx, W.wrote
# (outcome of the last write), W.done.  Exit: 0 all writes accepted, 3 one refused.
set -uo pipefail

: "${W:?}" "${STATE:?}" "${TBL:?}" "${HIST:?}" "${MODE:?}"
RES=${FENCE_RESOURCE:-${RES_HINT:-}}
TOKEN=${FENCE_TOKEN:-}
OWNER=${FENCE_OWNER:-}
WRITES=${WRITES:-1}
STEP=${STEP:--1}
GAP_MS=${GAP_MS:-0}

echo $$ >"$STATE/$W.pid"
printf 'token=%s\nowner=%s\n' "$TOKEN" "$OWNER" >"$STATE/$W.env"

now_ms() { date +%s%3N; }
hist() {
	local IFS=$'\t'
	printf '%s\n' "$*" >>"$HIST"
}
q() { local s=${1//\'/\'\'}; printf "'%s'" "$s"; }

# One psql session for the whole run, connected before anything is read:
# a fault that holds bytes in the network then holds a write, not a
# connection attempt.  pg SQL sends SQL (one message: statements joined by
# "\;") and sets OUT to its rows and CODE to its SQLSTATE (00000 on success).
coproc PSQL { exec psql -X -qAt -v VERBOSITY=verbose ${W_PG:+-d "$W_PG"} 2>>"$STATE/$W.psql.err"; }
pg() {
	local line
	OUT= CODE=
	printf '%s\n\\echo __end__ :SQLSTATE\n' "$1" >&"${PSQL[1]}" || { CODE=08006; return 1; }
	while IFS= read -r -t 120 line <&"${PSQL[0]}"; do
		case $line in
		__end__\ *) CODE=${line#__end__ }; break ;;
		*) OUT+=$line$'\n' ;;
		esac
	done
	[ -n "$CODE" ] || CODE=08006
	[ "$CODE" = 00000 ]
}

trap 'hist "$W" term "$RES" "$TOKEN" "${OWNER:--}" "$(now_ms)" - SIGTERM; exit 143' TERM

hist "$W" acquire "$RES" "$TOKEN" "${OWNER:--}" "$(now_ms)" - "pgoptions=${PGOPTIONS:-}"

# wait_file FILE: bounded wait for a file the test creates, as long as a
# whole test may take (lib.sh's E2E_TIMEOUT): a stalled worker waits while
# the test's own bounded steps run, and 60 s of them (a story of
# wait_topologies on a loaded machine) made it give up before its turn.
# The bound only keeps a worker from outliving a test that died.
wait_file() {
	local t0=$SECONDS
	while [ ! -e "$1" ]; do
		((SECONDS - t0 < ${E2E_TIMEOUT:-240})) || { hist "$W" note "$RES" - - - - "gave up waiting for $1"; exit 4; }
		sleep 0.02
	done
}

owner_sql=NULL
[ -n "$OWNER" ] && owner_sql=$(q "$OWNER")
rc=0
for ((i = 1; i <= WRITES; i++)); do
	t=$(now_ms)
	if ! pg "SELECT qty FROM ${TBL}_stock WHERE id = 1;"; then
		hist "$W" read "$RES" "$TOKEN" "${OWNER:--}" "$t" "$(now_ms)" "$CODE"
		rc=3
		break
	fi
	cur=${OUT%$'\n'}
	hist "$W" read "$RES" "$TOKEN" "${OWNER:--}" "$t" "$(now_ms)" "value=$cur"
	new=$((cur + STEP))
	if [ "$i" = 1 ] && [ "${PAUSE:-0}" = 1 ]; then
		touch "$STATE/$W.read"
		wait_file "$STATE/$W.go"
	fi
	update="UPDATE ${TBL}_stock SET qty = $new WHERE id = 1"
	case $MODE in
	guard | none) check= ;;
	advance) check="SELECT 'mark:' || fence.advance($(q "$RES"), $TOKEN, $owner_sql) \\; " ;;
	fenced) check=
		update="SELECT 'rows:' || fence.fenced_update($(q "$RES"), $TOKEN, 'UPDATE ${TBL}_stock SET qty = \$1 WHERE id = 1', $new)" ;;
	*) echo "worker: bad MODE $MODE" >&2; exit 64 ;;
	esac
	log="INSERT INTO ${TBL}_log (worker, resource, token, owner)
		VALUES ($(q "$W"), $(q "$RES"), ${TOKEN:-NULL}, $owner_sql) RETURNING 'seq:' || seq"
	t=$(now_ms)
	# The log's RETURNING is read from psql's output, and psql before 15
	# prints only the last result of a message: it comes last.
	if [ "$i" = 1 ] && [ "${INTX_PAUSE:-0}" = 1 ]; then
		# stop inside the transaction, holding the row locks
		pg "BEGIN \\; $check$update;" && touch "$STATE/$W.intx" &&
			{ wait_file "$STATE/$W.go"; pg "$log;" && logged=$OUT && pg "COMMIT;" && OUT=$logged; }
	else
		# one message, so that a proxy holding it delays the whole
		# transaction: one Query message runs as one transaction
		pg "$check$update \\; $log;"
	fi
	if [ "$CODE" = 00000 ]; then
		seq=$(sed -n 's/^seq://p' <<<"$OUT")
		hist "$W" write "$RES" "$TOKEN" "${OWNER:--}" "$t" "$(now_ms)" ok "seq=$seq" "value=$new"
		echo ok >"$STATE/$W.wrote"
	else
		hist "$W" write "$RES" "$TOKEN" "${OWNER:--}" "$t" "$(now_ms)" "$CODE" "value=$new"
		echo "$CODE" >"$STATE/$W.wrote"
		pg "ROLLBACK;" || true
		rc=3
		break
	fi
	[ "$GAP_MS" -gt 0 ] && [ "$i" -lt "$WRITES" ] && sleep "$(printf '%d.%03d' $((GAP_MS / 1000)) $((GAP_MS % 1000)))"
done
touch "$STATE/$W.done"
if [ "${HOLD:-0}" = 1 ]; then
	wait_file "$STATE/$W.quit"
fi
exit $rc
