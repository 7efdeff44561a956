#!/usr/bin/env bash
# client/test/cli_ux.sh: the fence command line as people and scripts use
# it, against the real Redis (FENCE_REDIS_URL), servers of its own (a Redis
# with requirepass, a listener that never answers) and PostgreSQL (PG*):
# durations with their unit, --wait inf, --timeout, help, run -c, --quiet
# and --verbose, JSON errors, acquire --hold, and the Redis password kept
# out of argv.  One "ok - NAME" / "not ok - NAME" / "skip - NAME" line per
# test.
#
# The harness (FENCE_BIN, FENCE_CLI_ONLY) is clilib.sh's.
set -u
cd "$(dirname "$0")/.."
: "${FENCE_REDIS_URL:=redis://127.0.0.1:6379}"
export FENCE_REDIS_URL
. test/clilib.sh

# silent_listener: a socket that accepts and never answers, its port in PORT.
silent_listener() {
	PORT=$(spare_port)
	python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(64)
held = []
while True:
    held.append(s.accept()[0])
' "$PORT" &
	own_pid $!
	wait_for 5 python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])))' "$PORT"
}

now_ms() { date +%s%3N; }

# elapsed_between LO HI CMD...: CMD took between LO and HI ms (its exit
# status in RC).
elapsed_between() {
	local lo=$1 hi=$2 t0 t1
	shift 2
	t0=$(now_ms)
	RC=0
	"$@" >"$TMP/out" 2>"$TMP/err" || RC=$?
	t1=$(now_ms)
	echo "took $((t1 - t0)) ms, exit $RC"
	[ $((t1 - t0)) -ge "$lo" ] && [ $((t1 - t0)) -le "$hi" ]
}

# json_error CODE NAME: stdout is one JSON object, the error NAME with exit CODE.
json_error() {
	python3 - "$1" "$2" "$TMP/out" <<'EOF'
import json, sys
code, name, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
lines = [l for l in open(path) if l.strip()]
assert len(lines) == 1, lines
o = json.loads(lines[0])
assert set(o) - {"hint"} == {"ok", "error", "exit", "message"}, o
assert o["ok"] is False and o["error"] == name and o["exit"] == code, o
assert o["message"], o
EOF
}

# --- durations --------------------------------------------------------------

# A bare number was milliseconds: "--ttl 10" a lease lost at once (exit
# 76).  Now it is a usage error that says what to write, before anything
# is contacted; units work as before, and 0 needs none.
test_ux_duration_needs_unit() {
	local res dead=redis://127.0.0.1:1
	res=$(rname unit)
	expect_rc 64 "$F" run "$res" --ttl 10 -- sleep 1
	grep -qx 'fence: --ttl 10: say 10s or 10ms (a duration needs its unit)' "$TMP/err"
	lock_free "$res"
	expect_rc 64 "$F" acquire r --ttl 30000 --redis $dead
	grep -q -- '--ttl 30000: say 30s or 30000ms' "$TMP/err"
	for opt in --wait --grace --timeout --replica-timeout -t -w -g; do
		expect_rc 64 "$F" acquire r "$opt" 5 --redis $dead
		grep -q -- " 5: say 5s or 5ms" "$TMP/err"
	done
	expect_rc 64 "$F" acquire r --ttl=1500 --redis $dead
	grep -q -- '--ttl 1500: say 1500s or 1500ms' "$TMP/err"
	expect_rc 64 "$F" acquire r --ttl 10x --redis $dead
	grep -q 'invalid duration "10x": expected a whole number and its unit' "$TMP/err"
	# units, and 0, get as far as connecting
	expect_rc 69 "$F" acquire r --ttl 250ms --wait 0 --grace 2m --timeout 1s --redis $dead
	expect_rc 0 "$F" run "$res" --ttl 10s --wait 0 -- true
	lock_free "$res"
}

# --wait inf queues for as long as it takes, as flock does.
test_ux_wait_inf() {
	local res owner pid
	res=$(rname inf)
	eval "$("$F" acquire "$res" --ttl 30s)"
	owner=$FENCE_OWNER
	"$F" acquire "$res" --wait inf --ttl 10s >"$TMP/waiter" 2>&1 &
	pid=$!
	wait_for 5 in_queue "$res"
	sleep 1
	kill -0 "$pid"				# still waiting, 1 s past any short wait
	expect_rc 0 "$F" release "$res" "$owner"
	wait "$pid"
	grep -q '^FENCE_TOKEN=' "$TMP/waiter"
	eval "$(cat "$TMP/waiter")"
	expect_rc 0 "$F" release "$res" "$FENCE_OWNER"
	expect_rc 64 "$F" acquire "$res" --ttl inf
}
in_queue() { [ "$(rcli ZCARD "$(fence_key "$1" queue)")" -ge 1 ]; }

# --- timeouts ---------------------------------------------------------------

# A Redis that accepts and never answers: the command timeout was fixed at
# 5 s, longer than --wait 2s.  The wait's end bounds every command now, and
# --timeout sets the command timeout.
test_ux_timeout_silent_redis() {
	silent_listener
	elapsed_between 1800 3500 "$F" acquire "$(rname silent)" --wait 2s --redis "redis://127.0.0.1:$PORT"
	[ "$RC" = 69 ]
	grep -q 'no answer before the deadline' "$TMP/err"
	elapsed_between 800 2500 "$F" acquire "$(rname silent)" --timeout 1s --redis "redis://127.0.0.1:$PORT"
	[ "$RC" = 69 ]
	grep -q 'timed out' "$TMP/err"
	elapsed_between 800 2500 "$F" run "$(rname silent)" --timeout 1s --wait 10s \
		--redis "redis://127.0.0.1:$PORT" -- true
	[ "$RC" = 69 ]
	elapsed_between 300 2000 "$F" show "$(rname silent)" --timeout 500ms --redis "redis://127.0.0.1:$PORT"
	[ "$RC" = 69 ]
	expect_rc 64 "$F" acquire r --timeout 0
}

# --- help -------------------------------------------------------------------

# -h, `fence help VERB` and each verb's --help print the same usage, options
# and notes; an unknown verb is a usage error; help wins over errors and
# contacts nothing.
test_ux_help() {
	local verb
	expect_rc 0 "$F" -h
	grep -q '^Usage:' "$TMP/out"
	grep -q -- '--timeout=DURATION' "$TMP/out"
	grep -q -- '--password-file=FILE' "$TMP/out"
	grep -q 'nothing renews it' "$TMP/out"
	cp "$TMP/out" "$TMP/all"
	for verb in acquire release extend run exec show list; do
		expect_rc 0 "$F" "$verb" --help
		grep -q "^  fence $verb " "$TMP/out"
		refute grep -q '^Exit status:' "$TMP/out"
		cp "$TMP/out" "$TMP/verb"
		expect_rc 0 "$F" help "$verb"
		cmp "$TMP/out" "$TMP/verb"
	done
	expect_rc 0 "$F" run -h
	grep -q -- '-c STRING' "$TMP/out"
	expect_rc 0 "$F" acquire --help
	grep -q 'Nothing renews the lease' "$TMP/out"
	grep -q -- '--hold' "$TMP/out"
	expect_rc 0 "$F" help
	cmp "$TMP/out" "$TMP/all"
	expect_rc 64 "$F" help frobnicate
	grep -q 'no such command "frobnicate"' "$TMP/err"
	# help wins over errors, and contacts nothing
	expect_rc 0 "$F" run --ttl 10 --help --redis redis://127.0.0.1:1
}

# --- run -c -------------------------------------------------------------------

# run -c STRING runs STRING in a shell with the lease's variables, passes
# its status, and -c with a command, or on another verb, is a usage error.
test_ux_run_shell_string() {
	local res
	res=$(rname shell)
	expect_rc 7 "$F" run "$res" --ttl 10s -c 'echo "token=$FENCE_TOKEN res=$FENCE_RESOURCE"; exit 7'
	grep -qE "^token=[0-9]+ res=$res\$" "$TMP/out"
	lock_free "$res"
	expect_rc 0 "$F" run -c 'test -n "$FENCE_OWNER" && printf "%s|%s\n" a "b c"' "$res"
	grep -qx 'a|b c' "$TMP/out"
	expect_rc 64 "$F" run "$res" -c 'true' -- echo no
	expect_rc 64 "$F" acquire "$res" -c 'true'
	lock_free "$res"
}

# --- --quiet, --verbose -------------------------------------------------------

# --quiet drops warnings, not errors; -v says what run does (connect,
# take, renew); without either, a run that goes well prints nothing.
test_ux_quiet_verbose() {
	local res tls='rediss://127.0.0.1:1?tls-insecure-skip-verify=yes'
	res=$(rname verbose)
	expect_rc 69 "$F" acquire "$res" --redis "$tls"
	grep -q 'warning: tls-insecure-skip-verify' "$TMP/err"
	expect_rc 69 "$F" acquire "$res" --redis "$tls" --quiet
	refute grep -q 'warning' "$TMP/err"
	grep -q 'could not connect to Redis' "$TMP/err"
	[ "$(wc -l <"$TMP/err")" = 1 ]
	expect_rc 0 "$F" run "$res" --ttl 3s -v -- sleep 1.6
	grep -q 'fence: connecting to redis://' "$TMP/err"
	grep -q "fence: took the lease on \"$res\": token [0-9]*" "$TMP/err"
	grep -q 'fence: renewing the lease every 1000 ms' "$TMP/err"
	grep -q "fence: lease on \"$res\" renewed" "$TMP/err"
	expect_rc 0 "$F" run "$res" --ttl 3s -- true
	[ ! -s "$TMP/err" ]
	lock_free "$res"
}

# --- JSON errors ----------------------------------------------------------------

# With --json every outcome is one object on stdout, errors too, with the
# same keys whatever the verb.
test_ux_json_errors() {
	local res owner
	res=$(rname json)
	eval "$("$F" acquire "$res" --ttl 2m)"
	owner=$FENCE_OWNER
	expect_rc 75 "$F" acquire "$res" --json
	json_error 75 busy
	grep -q 'held by another owner' "$TMP/err"
	expect_rc 75 "$F" run "$res" --json --wait 100ms -- true
	json_error 75 busy
	expect_rc 75 "$F" exec "$res" --json --pg "$PGC" 'SELECT 1'
	json_error 75 busy
	expect_rc 76 "$F" release "$res" "$owner-not" --json
	json_error 76 lost
	expect_rc 76 "$F" extend "$res" "$owner-not" --json
	json_error 76 lost
	expect_rc 64 "$F" acquire "$res" --ttl 10 --json
	json_error 64 usage
	expect_rc 69 "$F" show "$res" --json --redis redis://127.0.0.1:1
	json_error 69 unavailable
	expect_rc 69 "$F" exec "$res-pg" --json --pg 'host=127.0.0.1 port=1' 'SELECT 1'
	json_error 69 unavailable
	expect_rc 0 "$F" release "$res" "$owner" --json
	grep -qx '{"released":true}' "$TMP/out"
}

# --- acquire --hold -----------------------------------------------------------

# --hold prints the lease, then keeps it past its TTL until SIGTERM or
# SIGINT (given back, exit 0), or exits 76 once it is lost.
test_ux_hold() {
	local res pid sig
	res=$(rname hold)
	for sig in TERM INT; do
		# a background job of a script starts with SIGINT ignored: not this one
		python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$F" acquire "$res" --hold --ttl 1s >"$TMP/lease" 2>"$TMP/hold.err" &
		pid=$!
		wait_for 5 grep -q '^FENCE_OWNER=' "$TMP/lease"
		eval "$(cat "$TMP/lease")"
		sleep 2.5			# 2.5 TTLs: renewed, or gone
		[ "$(rcli GET "$(fence_key "$res" lock)")" = "$FENCE_OWNER" ]
		kill -"$sig" "$pid"
		rc=0
		wait "$pid" || rc=$?
		[ "$rc" = 0 ] || { echo "SIG$sig: exit $rc"; cat "$TMP/hold.err"; return 1; }
		lock_free "$res"
	done
	# the lease taken over: exit 76 at once
	"$F" acquire "$res" --hold --ttl 1s --json >"$TMP/lease" 2>"$TMP/hold.err" &
	pid=$!
	wait_for 5 grep -q '"owner"' "$TMP/lease"
	rcli SET "$(fence_key "$res" lock)" intruder PX 5000 >/dev/null
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" = 76 ]
	grep -q "lease on \"$res\" lost" "$TMP/hold.err"
	grep -q '"error":"lost","exit":76' "$TMP/lease"
	rcli DEL "$(fence_key "$res" lock)" >/dev/null
	expect_rc 64 "$F" run "$res" --hold -- true
}

# --- passwords ------------------------------------------------------------------

# The password from the environment or a file logs in to every node that
# has none in its URL; one in the URL wins.
test_ux_password_sources() {
	local pw='p@ss:w/rd %x' res url
	res=$(rname pw)
	auth_redis "$pw"
	url=redis://127.0.0.1:$PORT
	expect_rc 78 "$F" acquire "$res" --redis "$url"
	grep -q 'NOAUTH\|Authentication required' "$TMP/err"
	FENCE_REDIS_PASSWORD=$pw expect_rc 0 "$F" run "$res" --redis "$url" -- true
	REDISCLI_AUTH=$pw expect_rc 0 "$F" run "$res" --redis "$url" -- true
	printf '%s\n' "$pw" >"$TMP/pwfile"
	chmod 600 "$TMP/pwfile"
	expect_rc 0 "$F" run "$res" --redis "$url" --password-file "$TMP/pwfile" -- true
	[ ! -s "$TMP/err" ]
	# the file before the environment, the environment before REDISCLI_AUTH
	FENCE_REDIS_PASSWORD=wrong expect_rc 0 "$F" run "$res" --redis "$url" --password-file "$TMP/pwfile" -- true
	FENCE_REDIS_PASSWORD=wrong REDISCLI_AUTH=$pw expect_rc 78 "$F" run "$res" --redis "$url" -- true
	FENCE_REDIS_PASSWORD=$pw REDISCLI_AUTH=wrong expect_rc 0 "$F" run "$res" --redis "$url" -- true
	# a URL's own password wins
	FENCE_REDIS_PASSWORD=wrong expect_rc 0 "$F" run "$res" \
		--redis "redis://:p%40ss%3Aw%2Frd%20%25x@127.0.0.1:$PORT" -- true
	# an ACL user named in the URL, its password from the environment
	redis-cli -p "$PORT" -a "$pw" --no-auth-warning ACL SETUSER fenceux on '>ux-secret' '~*' '+@all' >/dev/null
	FENCE_REDIS_PASSWORD=ux-secret expect_rc 0 "$F" run "$res" --redis "redis://fenceux@127.0.0.1:$PORT" -- true
	FENCE_REDIS_PASSWORD=$pw expect_rc 78 "$F" run "$res" --redis "redis://fenceux@127.0.0.1:$PORT" -- true
	# files that will not do
	expect_rc 64 "$F" acquire "$res" --redis "$url" --password-file "$TMP/none"
	grep -q -- "--password-file $TMP/none: No such file" "$TMP/err"
	: >"$TMP/empty"
	expect_rc 64 "$F" acquire "$res" --redis "$url" --password-file "$TMP/empty"
	chmod 644 "$TMP/pwfile"
	expect_rc 0 "$F" run "$res" --redis "$url" --password-file "$TMP/pwfile" -- true
	grep -q 'can be read by others' "$TMP/err"
	FENCE_REDIS_PASSWORD=$pw expect_rc 64 "$F" acquire "$res" --redis unix:///tmp/none.sock
}

# Every node of a quorum logs in with it.
test_ux_password_quorum() {
	local pw=quorum-secret res urls=() i
	res=$(rname pwq)
	for i in 1 2 3; do
		auth_redis "$pw"
		urls+=(--redis "redis://127.0.0.1:$PORT")
	done
	# a quorum that cannot log in is one that cannot be reached: 69
	expect_rc 69 "$F" run "$res" "${urls[@]}" -- true
	[ "$(grep -o NOAUTH "$TMP/err" | wc -l)" -ge 2 ]
	FENCE_REDIS_PASSWORD=$pw expect_rc 0 "$F" run "$res" --ttl 5s "${urls[@]}" -c 'echo "$FENCE_TOKEN"'
	grep -qx '[0-9]*' "$TMP/out"
}

# A password written in a URL on the command line is masked in fence's
# process title: ps and /proc/PID/cmdline show ***.
test_ux_password_hidden_from_ps() {
	local pw=Very-Secret-42 res pid cmdline
	res=$(rname ps)
	auth_redis "$pw"
	"$F" run "$res" --ttl 10s --redis "redis://:$pw@127.0.0.1:$PORT" -- sleep 30 >"$TMP/ps.out" 2>&1 &
	pid=$!
	wait_for 5 pgrep -P "$pid" sleep >/dev/null
	cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline")
	echo "cmdline: $cmdline"
	[[ $cmdline == *"--redis redis://:***@127.0.0.1:$PORT -- sleep 30"* ]]
	[[ $cmdline != *"$pw"* ]]
	ps -o args= -p "$pid" | refute grep -q "$pw"
	ps -o args= -p "$pid" | grep -q 'redis://:\*\*\*@'
	kill -TERM "$pid"
	wait "$pid" || true
	# --redis=URL with an ACL user, among other arguments
	redis-cli -p "$PORT" -a "$pw" --no-auth-warning ACL SETUSER psux on '>ps-Secret' '~*' '+@all' >/dev/null
	"$F" run "$res" --ttl 10s "--redis=redis://psux:ps-Secret@127.0.0.1:$PORT" --name ux -- sleep 30 >"$TMP/ps.out" 2>&1 &
	pid=$!
	wait_for 5 pgrep -P "$pid" sleep >/dev/null
	cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline")
	echo "cmdline: $cmdline"
	[[ $cmdline == *"--redis=redis://psux:***@127.0.0.1:$PORT --name ux -- sleep 30"* ]]
	[[ $cmdline != *ps-Secret* ]]
	kill -TERM "$pid"
	wait "$pid" || true
}

run_test ux_duration_needs_unit
run_test ux_wait_inf
run_test ux_timeout_silent_redis
run_test ux_help
run_test ux_run_shell_string
run_test ux_quiet_verbose
run_test ux_json_errors pg
run_test ux_hold
run_test ux_password_sources
run_test ux_password_quorum
run_test ux_password_hidden_from_ps

echo "# client command-line UX tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
