#!/usr/bin/env bash
# Clients in other languages share leases, the queue and tokens with fence.
#
# test/interop/fence_worker.py (redis-py) and fence_worker.js (ioredis) run
# the Lua files fence ships (client/lua/*.lua) as client/lua/PROTOCOL.md
# says.  Against one redis-server:
#
#  1. libfence sends the files' bytes: after a fence acquire, Redis knows
#     each script the workers hash from the files (SCRIPT EXISTS).
#  2. Contention: two "fence run --wait" loops, one "fence acquire --wait"
#     and "fence release" loop, two Python and two Node.js workers all add
#     1 to a counter file inside the lease, and log their token there.
#     Must hold: no update lost (the counter is the number of rounds), the
#     tokens in the log strictly increase across the three languages, and
#     the last is Redis's counter.
#  3. Handoffs (test/interop/handoff.py): a waiter of each language is woken
#     by the release of each other one (and C by C, the reference), N times
#     a pair; median and p99 of the latency are printed.  Must hold: every
#     median below 50 ms (a waiter that only polls waits up to its 500 ms
#     beat, 500 ms).
#     Negative control: a Python holder that releases with a bare
#     compare-and-DEL (ignoring the queue, as before the workers ran
#     release.lua) leaves a C waiter to its next poll: the median must be
#     at or above 50 ms, or the bound proves nothing.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init interop
need_client

ROUNDS=${INTEROP_ROUNDS:-20}
HANDOFFS=${INTEROP_HANDOFFS:-50}
INTEROP=$TOP/test/interop
LUA=$TOP/client/lua

"$E2E_PY" -c 'import redis' 2>/dev/null ||
	fail "$E2E_PY has no redis module: install python3-redis (test/lib/deps.sh)"
command -v node >/dev/null && command -v npm >/dev/null ||
	fail "no node or npm (test/lib/deps.sh installs them)"

# ioredis, pinned in node/package-lock.json, installed once per lock file
NODE_CACHE=${FENCE_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pgfence}/interop-node
if ! cmp -s "$INTEROP/node/package-lock.json" "$NODE_CACHE/package-lock.json" ||
	[ ! -d "$NODE_CACHE/node_modules/ioredis" ]; then
	mkdir -p "$NODE_CACHE"
	cp "$INTEROP/node/package.json" "$INTEROP/node/package-lock.json" "$NODE_CACHE/"
	(cd "$NODE_CACHE" && npm ci --no-audit --no-fund --loglevel=error) ||
		fail "npm ci in $NODE_CACHE failed"
fi
export NODE_PATH=$NODE_CACHE/node_modules FENCE_BIN FENCE_PY=$E2E_PY

# --- 1. one script text, one SHA-1
rcli SCRIPT FLUSH >/dev/null
res=interop:sha
eval "$("$FENCE_BIN" acquire "$res" --ttl 5s)"
"$FENCE_BIN" show "$res" >/dev/null
"$FENCE_BIN" extend "$res" "$FENCE_OWNER" --ttl 5s >/dev/null
"$FENCE_BIN" release "$res" "$FENCE_OWNER" >/dev/null
for s in acquire show extend release; do
	sha=$(sha1sum "$LUA/$s.lua" | cut -d' ' -f1)
	[ "$(redis-cli -u "$FENCE_REDIS_URL" --raw SCRIPT EXISTS "$sha")" = 1 ] ||
		fail "Redis does not know $s.lua by its SHA-1 $sha after fence ran it"
done
say "fence ran the shipped files: Redis knows them by the SHA-1 of the files"

# --- 2. contention
res=interop:counter
echo 0 >"$WORK/counter"
: >"$WORK/log"
c_run_loop() {
	local i
	for ((i = 0; i < ROUNDS; i++)); do
		"$FENCE_BIN" run "$res" --ttl 10s --wait 60s -- sh -c \
			'n=$(cat "$1"); echo $((n + 1)) >"$1"; echo "c $FENCE_TOKEN" >>"$2"' \
			sh "$WORK/counter" "$WORK/log" || return 1
	done
	echo "done $ROUNDS"
}
c_acquire_loop() {
	local i n out
	for ((i = 0; i < ROUNDS; i++)); do
		out=$("$FENCE_BIN" acquire "$res" --ttl 10s --wait 60s) || return 1
		eval "$out"
		n=$(cat "$WORK/counter")
		echo $((n + 1)) >"$WORK/counter"
		echo "c $FENCE_TOKEN" >>"$WORK/log"
		"$FENCE_BIN" release "$res" "$FENCE_OWNER" || return 1
	done
	echo "done $ROUNDS"
}
worker() {
	printf 'loop %s %d %s %s\nquit\n' "$res" "$ROUNDS" "$WORK/counter" "$WORK/log" | "$@"
}
pids=()
c_run_loop >"$WORK/out.c1" 2>&1 & pids+=($!)
c_run_loop >"$WORK/out.c2" 2>&1 & pids+=($!)
c_acquire_loop >"$WORK/out.c3" 2>&1 & pids+=($!)
worker "$E2E_PY" "$INTEROP/fence_worker.py" >"$WORK/out.py1" 2>&1 & pids+=($!)
worker "$E2E_PY" "$INTEROP/fence_worker.py" >"$WORK/out.py2" 2>&1 & pids+=($!)
worker node "$INTEROP/fence_worker.js" >"$WORK/out.js1" 2>&1 & pids+=($!)
worker node "$INTEROP/fence_worker.js" >"$WORK/out.js2" 2>&1 & pids+=($!)
E2E_PIDS+=("${pids[@]}")
for p in "${pids[@]}"; do wait "$p" || true; done
for f in "$WORK"/out.*; do
	[ "$(tail -n 1 "$f")" = "done $ROUNDS" ] || fail "$(basename "$f"): $(tail -n 3 "$f")"
done
total=$((7 * ROUNDS))
[ "$(cat "$WORK/counter")" = "$total" ] ||
	fail "counter $(cat "$WORK/counter") after $total rounds: an update was lost"
[ "$(wc -l <"$WORK/log")" = "$total" ] || fail "$(wc -l <"$WORK/log") log lines, expected $total"
for lang in c python node; do
	n=$(grep -c "^$lang " "$WORK/log" || true)
	[ "$n" -gt 0 ] || fail "no round of $lang in the log"
done
awk '$2 <= last { print "token " $2 " (" $1 ") after " last " at line " NR; bad = 1 }
	{ last = $2 } END { exit bad }' "$WORK/log" || fail "tokens did not strictly increase"
last=$(tail -n 1 "$WORK/log" | cut -d' ' -f2)
[ "$(rcli GET "$(fence_key "$res" token)")" = "$last" ] ||
	fail "Redis's counter $(rcli GET "$(fence_key "$res" token)") is not the last token $last"
say "contention: $total rounds of c, python and node, counter $total, tokens 1..$last strictly increasing"

# --- 3. handoffs
pairs="c-c python-c node-c c-python c-node python-node node-python"
# shellcheck disable=SC2086 # one word per pair
"$E2E_PY" "$INTEROP/handoff.py" interop:handoff "$HANDOFFS" $pairs >"$WORK/handoff" ||
	{ cat "$WORK/handoff"; fail "handoffs failed"; }
sed 's/^/    /' "$WORK/handoff"
awk '{ split($3, m, "="); if (m[2] + 0 >= 50) { print $1 " median " m[2] " ms"; bad = 1 } }
	END { exit bad }' "$WORK/handoff" || fail "a waiter woke 50 ms or more after the release, median"
[ "$(wc -l <"$WORK/handoff")" = 7 ] || fail "handoff.py measured $(wc -l <"$WORK/handoff") pairs, expected 7"

FENCE_WORKER_RELEASE=del "$E2E_PY" "$INTEROP/handoff.py" interop:control 10 python-c >"$WORK/control" ||
	{ cat "$WORK/control"; fail "control handoffs failed"; }
sed 's/^/    control (compare-and-DEL, no handover): /' "$WORK/control"
awk '{ split($3, m, "="); exit !(m[2] + 0 >= 50) }' "$WORK/control" ||
	fail "negative control: a release that ignores the queue woke the C waiter within 50 ms"
say "pass"
