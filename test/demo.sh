#!/usr/bin/env bash
# test/demo.sh: "make demo".  A stale lock holder fenced off by PostgreSQL,
# with real processes, then the same story without the fence.
#
# Starts a throwaway PostgreSQL and Redis in a temp dir on spare ports and
# stops them on exit, also on failure or Ctrl-C.  The story: an inventory
# row; worker A takes the lease (token n) with "fence run", reads the
# quantity and is frozen with SIGSTOP for longer than its TTL; worker B
# takes the lease (token n+1), announces it, sells one widget and commits;
# A thaws, sells "its" widget from the quantity it read, and PostgreSQL
# refuses the write with LF001.  Then the same on an unguarded copy of the
# table, where A's stale write lands and the count is wrong.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
. test/lib/servers.sh

FENCE=${FENCE_BIN:-$top/client/fence}
[ -x "$FENCE" ] || { echo "demo: no fence command at $FENCE: run \"make demo\" (it builds it)" >&2; exit 1; }
TTL_MS=2000

pids=()
demo_cleanup() {
	local pid
	for pid in "${pids[@]}"; do
		kill -CONT "$pid" 2>/dev/null || true
		pkill -9 -P "$pid" 2>/dev/null || true
		kill -9 "$pid" 2>/dev/null || true
	done
	servers_stop
}
servers_init
trap demo_cleanup EXIT

say() { printf '%s  %-9s %s\n' "$(date +%T.%3N)" "$1" "$2"; }
title() { printf '\n== %s\n\n' "$*"; }
q() { psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }
# wait_until DESCRIPTION CMD...: poll CMD every 50 ms, for at most 20 s
wait_until() {
	local what=$1 t0=$SECONDS
	shift
	until "$@"; do
		((SECONDS - t0 < 20)) || { echo "demo: timed out waiting for $what" >&2; exit 1; }
		sleep 0.05
	done
}

title "Starting a throwaway PostgreSQL and Redis"
pg_start
redis_start demo
export FENCE_REDIS_URL
FENCE_REDIS_URL=$(redis_url demo)
PGCONN="host=$PGHOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE"
q -c "CREATE EXTENSION fence"
guard=0
[ "$(q -c "SELECT count(*) FROM pg_proc WHERE proname = 'protect' AND pronamespace = 'fence'::regnamespace")" -gt 0 ] && guard=1
say setup "PostgreSQL on port $PGPORT, Redis on $FENCE_REDIS_URL"

# The worker: what an application does while it holds the lease.  It gets
# its token from "fence run" (FENCE_TOKEN, and PGOPTIONS for psql).
cat >"$FENCE_TMP/worker.sh" <<'WORKER'
#!/usr/bin/env bash
# worker.sh NAME TABLE [PAUSE_FILE]: sell one widget, read-modify-write
name=$1 tbl=$2 pause=${3:-}
say() { printf '%s  %-9s %s\n' "$(date +%T.%3N)" "worker $name" "$*"; }
echo $$ >"$FENCE_TMP/$name.pid"
trap 'touch "$FENCE_TMP/$name.done"' EXIT
say "has the lease: token $FENCE_TOKEN (fence run announced it to PostgreSQL)"
qty=$(psql -X -qAt -c "SELECT qty FROM $tbl WHERE sku = 'widget'")
say "reads qty = $qty"
if [ -n "$pause" ]; then
	touch "$pause.ready"
	while [ ! -e "$pause" ]; do sleep 0.02; done
fi
check=
[ "${DEMO_ADVANCE:-0}" = 1 ] && check="SELECT fence.advance('$FENCE_RESOURCE', $FENCE_TOKEN, '$FENCE_OWNER');"
say "sells one with token $FENCE_TOKEN: UPDATE $tbl SET qty = $((qty - 1))"
if err=$(psql -X -qAt -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -c "BEGIN; $check
	UPDATE $tbl SET qty = $((qty - 1)) WHERE sku = 'widget';
	INSERT INTO ${tbl}_sales (worker, token) VALUES ('$name', $FENCE_TOKEN); COMMIT;" 2>&1 >/dev/null); then
	say "committed"
else
	say "REFUSED by PostgreSQL: $(grep -m1 -o 'ERROR: .*' <<<"$err" | tr -s ' ')"
	grep -m1 -o 'DETAIL: .*' <<<"$err" | tr -s ' ' | sed 's/^/                         /'
	exit 3
fi
WORKER

# story TABLE GUARDED
story() {
	local tbl=$1 guarded=$2 res=$1 a b rc apid
	q -c "CREATE TABLE $tbl (sku text PRIMARY KEY, qty int NOT NULL)" \
		-c "INSERT INTO $tbl VALUES ('widget', 10)" \
		-c "CREATE TABLE ${tbl}_sales (id serial PRIMARY KEY, worker text, token bigint)"
	if [ "$guarded" = 1 ]; then
		if [ $guard = 1 ]; then
			q -c "SELECT fence.protect('$tbl', '$res')" >/dev/null
			say setup "table $tbl: qty 10, guarded: SELECT fence.protect('$tbl', '$res')"
		else
			export DEMO_ADVANCE=1
			say setup "table $tbl: qty 10; writes call fence.advance (this build has no guard trigger)"
		fi
	else
		unset DEMO_ADVANCE
		say setup "table $tbl: qty 10, no guard"
	fi
	rm -f "$FENCE_TMP"/A.* "$FENCE_TMP"/B.*

	FENCE_TMP=$FENCE_TMP "$FENCE" run "$res" --ttl "${TTL_MS}ms" --pg "$PGCONN" -- \
		bash "$FENCE_TMP/worker.sh" A "$tbl" "$FENCE_TMP/A.go" 2>"$FENCE_TMP/A.err" &
	a=$!
	pids+=("$a")
	wait_until "worker A to read" test -e "$FENCE_TMP/A.go.ready"
	apid=$(cat "$FENCE_TMP/A.pid")
	pids+=("$apid")
	kill -STOP "$a" "$apid"
	say "worker A" "is frozen (SIGSTOP), fence process and all: a long GC pause"
	wait_until "A's lease to expire" lease_gone "$res"
	say redis "A's lease has expired (TTL ${TTL_MS} ms); A does not know"

	set +e
	FENCE_TMP=$FENCE_TMP "$FENCE" run "$res" --ttl 10s --pg "$PGCONN" -- \
		bash "$FENCE_TMP/worker.sh" B "$tbl" 2>"$FENCE_TMP/B.err"
	set -e

	say "worker A" "thaws (SIGCONT) and goes on where it stopped"
	touch "$FENCE_TMP/A.go"
	kill -CONT "$apid"
	wait_until "A's write" test -e "$FENCE_TMP/A.done"
	kill -CONT "$a"
	set +e
	wait "$a"
	rc=$?
	set -e
	case $rc in
	76) say "worker A" "fence run: its heartbeat found the lease lost (exit 76)" ;;
	3) say "worker A" "fence run exited 3, the worker's own status (its write was refused)" ;;
	*) say "worker A" "fence run exited $rc" ;;
	esac
	echo
	echo "   $tbl:"
	q -P footer=off -c "SELECT sku, qty FROM $tbl" | sed 's/^/     /'
	echo "   ${tbl}_sales (the sales each worker recorded with its write):"
	q -P footer=off -c "SELECT worker, token FROM ${tbl}_sales ORDER BY id" | sed 's/^/     /'
	SOLD=$(q -c "SELECT count(*) FROM ${tbl}_sales")
	LEFT=$(q -c "SELECT qty FROM $tbl")
}
lease_gone() { [ -z "$(redis-cli -u "$FENCE_REDIS_URL" --raw GET "fence:{$1}:lock")" ]; }

title "1. With the fence: inventory is guarded"
story inventory 1
echo "   fence.fences:"
q -P footer=off -c "SELECT resource, token FROM fence.fences" | sed 's/^/     /'
if [ "$SOLD" = 1 ] && [ "$LEFT" = 9 ]; then
	printf '\n   Consistent: %s sale recorded, 10 - %s = %s left.  A'"'"'s stale write was refused.\n' "$SOLD" "$SOLD" "$LEFT"
else
	echo "demo: unexpected result with the fence: $SOLD sales, $LEFT left" >&2
	exit 1
fi

title "2. Without the fence: the same story on an unguarded copy"
story inventory_unguarded 0
if [ "$SOLD" = 2 ] && [ "$LEFT" = 9 ]; then
	printf '\n   Corrupted: %s sales recorded, but %s left instead of %s.  A wrote from a stale read.\n' \
		"$SOLD" "$LEFT" "$((10 - SOLD))"
else
	echo "demo: unexpected result without the fence: $SOLD sales, $LEFT left" >&2
	exit 1
fi
echo
echo "Done: the servers are stopped and their temp dir removed."
