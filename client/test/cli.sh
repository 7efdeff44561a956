#!/usr/bin/env bash
# client/test/cli.sh: tests of the fence command against the real Redis
# (FENCE_REDIS_URL) and PostgreSQL (PG* variables), one "ok - NAME" /
# "not ok - NAME" / "skip - NAME" line per test.
#
# The harness (FENCE_BIN, FENCE_CLI_ONLY) is clilib.sh's.
set -u
cd "$(dirname "$0")/.."
. test/clilib.sh


# --- usage ----------------------------------------------------------------

# --help prints the usage with every verb's options, their defaults and the
# exit statuses; a verb's -? does too.
test_cli_help() {
	expect_rc 0 "$F" --help
	grep -q '^Usage:' "$TMP/out"
	grep -q -- '--ttl=DURATION' "$TMP/out"
	grep -q '(default: 30s)' "$TMP/out"
	grep -q '^Exit status:' "$TMP/out"
	grep -q '^  65 ' "$TMP/out"
	grep -q '^  78 ' "$TMP/out"
	grep -q -- '\[--\] SQL \[PARAM\]' "$TMP/out"
	grep -q 'every process it started' "$TMP/out"
	grep -q 'stays ignored' "$TMP/out"
	expect_rc 0 "$F" acquire -?
	grep -q '^Usage:' "$TMP/out"
}

# --version names the command and its version.
test_cli_version() {
	expect_rc 0 "$F" --version
	grep -q '^fence (pgfence) [0-9]' "$TMP/out"
}

# A wrong option, verb, missing or extra argument or bad value exits 64
# (usage) with the way to --help.
test_cli_usage_errors() {
	expect_rc 64 "$F" --bogus
	grep -qx 'Try "fence --help" for more information.' "$TMP/err"
	expect_rc 64 "$F" -x acquire r
	grep -qx 'Try "fence --help" for more information.' "$TMP/err"
	expect_rc 64 "$F"
	expect_rc 64 "$F" frobnicate r
	expect_rc 64 "$F" acquire
	expect_rc 64 "$F" acquire a b
	expect_rc 64 "$F" release r
	expect_rc 64 "$F" run r
	expect_rc 64 "$F" exec r 'select 1'
	expect_rc 64 "$F" acquire r --ttl
	expect_rc 64 "$F" acquire r --ttl 10x
	grep -q 'invalid duration' "$TMP/err"
	expect_rc 64 "$F" acquire r --ttl 0
	expect_rc 64 "$F" acquire r --wait -1s
	expect_rc 64 "$F" acquire r --redis 'http://localhost'
	grep -q 'unsupported Redis URL scheme' "$TMP/err"
	expect_rc 64 "$F" acquire r --redis 'redis://host:99999'
	# topologies: refused before anything is contacted
	expect_rc 64 "$F" acquire r --redis 'redis-sentinel://127.0.0.1:1'
	grep -q "master's name is missing" "$TMP/err"
	expect_rc 64 "$F" acquire r --redis 'redis-cluster://127.0.0.1:1/3'
	expect_rc 64 "$F" acquire r --redis redis://127.0.0.1:1 --redis 'redis-cluster://127.0.0.1:2'
	grep -q 'must be a redis://, rediss:// or unix:// URL' "$TMP/err"
	FENCE_REDIS_URL="redis://127.0.0.1:1 http://x" expect_rc 64 "$F" acquire r
	expect_rc 64 "$F" acquire r --min-replicas x
	expect_rc 64 "$F" acquire r --min-replicas -1
	expect_rc 64 "$F" acquire r --replica-timeout 1y
}

# Bad arguments are usage errors (64) found before anything is contacted:
# the Redis named here does not exist, and they must not say "unreachable".
test_cli_usage_before_connect() {
	local dead=redis://127.0.0.1:1 long
	long=$(head -c 1025 /dev/zero | tr '\0' x)
	expect_rc 64 "$F" acquire '' --redis $dead
	grep -q 'resource name must not be empty' "$TMP/err"
	expect_rc 64 "$F" acquire "$long" --redis $dead
	grep -q 'too long' "$TMP/err"
	expect_rc 64 "$F" show '' --redis $dead
	expect_rc 64 "$F" release '' owner --redis $dead
	expect_rc 64 "$F" release r '' --redis $dead
	expect_rc 64 "$F" extend "$long" owner --redis $dead
	expect_rc 64 "$F" run '' --redis $dead -- true
	expect_rc 64 "$F" exec '' --redis $dead --pg "$PGC" 'SELECT 1'
	# a TTL not above the drift margin (1% + 2 ms) could never be held
	expect_rc 64 "$F" acquire r --ttl 2ms --redis $dead
	grep -q 'TTL' "$TMP/err"
	expect_rc 64 "$F" acquire r --ttl 1ms --redis $dead
	expect_rc 64 "$F" extend r owner --ttl 2ms --redis $dead
	expect_rc 64 "$F" run r --ttl 2ms --redis $dead -- true
	expect_rc 64 "$F" acquire r --ttl 200000000000ms --redis $dead
	expect_rc 64 "$F" acquire r --wait 200000000000ms --redis $dead
	# the smallest TTL that is allowed gets as far as connecting
	expect_rc 69 "$F" acquire r --ttl 3ms --redis $dead
}

# A Redis nobody listens on: acquire and show exit 69 (unavailable) and say
# so.
test_cli_redis_down() {
	expect_rc 69 "$F" acquire "$(rname down)" --redis redis://127.0.0.1:1
	grep -q 'could not connect to Redis' "$TMP/err"
	expect_rc 69 "$F" show "$(rname down)" --redis redis://127.0.0.1:1
}

# A Redis of our own: password AUTH over TCP, then a Unix socket with a
# database number (the shared server has neither).
test_cli_redis_auth_unix() {
	local port dir=$TMP/ownredis res
	own_redis "$dir" --requirepass 'p@ss:w' --unixsocket "$dir/r.sock" --unixsocketperm 700
	port=$OWN_PORT
	wait_for 5 redis-cli -p "$port" --no-auth-warning -a 'p@ss:w' ping >/dev/null 2>&1
	res=$(rname auth)
	eval "$("$F" acquire "$res" --redis "redis://:p%40ss%3Aw@127.0.0.1:$port/2")"
	[ "$(redis-cli -p "$port" --no-auth-warning -a 'p@ss:w' -n 2 GET "$(fence_key "$res" lock)")" = "$FENCE_OWNER" ]
	# refused logins are configuration errors (78), not an outage
	expect_rc 78 "$F" acquire "$res" --redis "redis://:wrong@127.0.0.1:$port"
	grep -q 'AUTH' "$TMP/err"
	expect_rc 78 "$F" acquire "$res" --redis "redis://127.0.0.1:$port"
	grep -q 'NOAUTH' "$TMP/err"
	expect_rc 78 "$F" show "$res" --redis "redis://127.0.0.1:$port"
	expect_rc 78 "$F" release "$res" x --redis "redis://127.0.0.1:$port"
	expect_rc 78 "$F" acquire "$res" --redis "redis://nobody:p%40ss%3Aw@127.0.0.1:$port"
	expect_rc 78 "$F" acquire "$res" --redis "redis://:p%40ss%3Aw@127.0.0.1:$port/99"
	grep -q 'SELECT' "$TMP/err"
	# a user the ACL does not allow to run scripts
	redis-cli -p "$port" --no-auth-warning -a 'p@ss:w' ACL SETUSER ro on '>ro' '~*' \
		"$(all_channels "$port" --no-auth-warning -a 'p@ss:w')" -@all +get >/dev/null
	expect_rc 78 "$F" acquire "$res" --redis "redis://ro:ro@127.0.0.1:$port"
	grep -q 'NOPERM' "$TMP/err"
	redis-cli -p "$port" --no-auth-warning -a 'p@ss:w' CONFIG SET requirepass '' >/dev/null
	eval "$("$F" acquire "$res" --redis "unix://$dir/r.sock?db=3")"
	[ "$(redis-cli -s "$dir/r.sock" -n 3 GET "$(fence_key "$res" lock)")" = "$FENCE_OWNER" ]
	expect_rc 0 "$F" release "$res" "$FENCE_OWNER" --redis "unix://$dir/r.sock?db=3"
	expect_rc 69 "$F" show "$res" --redis "unix://$dir/nonexistent.sock"
}

# --- acquire, release, extend, show -----------------------------------------

# Acquire, extend, show and release keep their exit statuses (75 busy, 76
# not the owner) and leave the lock as they say; a new lease has a higher
# token.
test_cli_acquire_release() {
	local res owner
	res=$(rname acq)
	eval "$("$F" acquire "$res" --ttl 10s)"
	[ "$FENCE_RESOURCE" = "$res" ]
	[ "$FENCE_TOKEN" -ge 1 ]
	# named for the process that ran fence (this shell), then 128 random bits
	[[ $FENCE_OWNER =~ ^[A-Za-z0-9_:@+-]+:$BASHPID:bash/[0-9a-f]{32}$ ]]
	owner=$FENCE_OWNER
	[ "$(rcli GET "$(fence_key "$res" lock)")" = "$owner" ]
	# busy: 75, and no token taken
	expect_rc 75 "$F" acquire "$res"
	grep -q 'held by another owner' "$TMP/err"
	# wrong owner: 76, key untouched
	expect_rc 76 "$F" release "$res" deadbeef
	expect_rc 76 "$F" extend "$res" deadbeef --ttl 60s
	[ "$(rcli GET "$(fence_key "$res" lock)")" = "$owner" ]
	[ "$(rcli PTTL "$(fence_key "$res" lock)")" -le 10000 ]
	expect_rc 0 "$F" extend "$res" "$owner" --ttl 20s
	# past the 10 s it was taken with: extended (not "> 19 s", which a
	# loaded machine misses by the time PTTL is asked)
	[ "$(rcli PTTL "$(fence_key "$res" lock)")" -gt 10000 ]
	expect_rc 0 "$F" show "$res"
	grep -qx "FENCE_OWNER=$owner" "$TMP/out"
	grep -qx "FENCE_TOKEN=$FENCE_TOKEN" "$TMP/out"
	expect_rc 0 "$F" release "$res" "$owner"
	[ "$(rcli EXISTS "$(fence_key "$res" lock)")" = 0 ]
	expect_rc 76 "$F" release "$res" "$owner"
	expect_rc 0 "$F" show "$res"
	grep -qx "FENCE_OWNER=''" "$TMP/out"
	eval "$("$F" acquire "$res")"
	[ "$FENCE_TOKEN" -gt 1 ]
	"$F" release "$res" "$FENCE_OWNER"
}

# Acquire's lines are shell-quoted: a name with quotes, $( and a backslash
# comes back whole through eval.
test_cli_acquire_quoting() {
	local res
	res=$(rname "it's a \$(test) \\ name")
	eval "$("$F" acquire "$res" --ttl 5s)"
	[ "$FENCE_RESOURCE" = "$res" ]
	"$F" release "$res" "$FENCE_OWNER"
}

# Every key of a resource shares one Redis Cluster slot, whatever the name
# holds: a one-node cluster that owns every slot refuses a script whose keys
# hash to two slots (CROSSSLOT), so acquire, extend and release must work
# there for names that would break a naive hash tag.
test_cli_cluster_slot() {
	local port name keys lslot tslot
	own_redis "$TMP/cluster" --cluster-enabled yes --cluster-config-file nodes.conf
	port=$OWN_PORT
	wait_for 5 redis-cli -p "$port" ping >/dev/null 2>&1
	# ADDSLOTS, not ADDSLOTSRANGE: Redis 6 has only the former
	# shellcheck disable=SC2046
	redis-cli -p "$port" CLUSTER ADDSLOTS $(seq 0 16383) >/dev/null
	wait_for 5 sh -c "redis-cli -p $port CLUSTER INFO | grep -q '^cluster_state:ok'"
	for name in plain '}x' '{' '}' '{}' 'a{b}c' '}{' '%' '%7D' 'x}' '{x}y'; do
		redis-cli -p "$port" FLUSHALL >/dev/null
		expect_rc 0 "$F" acquire "$name" --ttl 10s --redis "redis://127.0.0.1:$port"
		eval "$(cat "$TMP/out")"
		expect_rc 0 "$F" extend "$name" "$FENCE_OWNER" --ttl 20s --redis "redis://127.0.0.1:$port"
		keys=$(redis-cli -p "$port" --raw KEYS '*' | sort)
		[ "$(echo "$keys" | wc -l)" = 2 ]
		lslot=$(redis-cli -p "$port" CLUSTER KEYSLOT "$(echo "$keys" | grep ':lock$')")
		tslot=$(redis-cli -p "$port" CLUSTER KEYSLOT "$(echo "$keys" | grep ':token$')")
		[ "$lslot" = "$tslot" ]
		expect_rc 0 "$F" release "$name" "$FENCE_OWNER" --redis "redis://127.0.0.1:$port"
	done
	# ordinary names keep their keys exactly
	redis-cli -p "$port" --raw KEYS '*' | grep -qx 'fence:{{x}y}:token' && return 1
	[ "$(redis-cli -p "$port" --raw EXISTS 'fence:{%7Bx%7Dy}:token')" = 1 ]
	"$F" acquire plain --redis "redis://127.0.0.1:$port" >/dev/null
	[ "$(redis-cli -p "$port" --raw EXISTS 'fence:{plain}:lock')" = 1 ]
}

# fence's keys in a state fence never writes: 65, at once, nothing left
test_cli_corrupt_keys() {
	local res start
	res=$(rname corrupt)
	rcli SET "$(fence_key "$res" token)" -5 >/dev/null
	expect_rc 65 "$F" acquire "$res"
	grep -q 'not a positive integer' "$TMP/err"
	[ "$(rcli EXISTS "$(fence_key "$res" lock)")" = 0 ]
	[ "$(rcli GET "$(fence_key "$res" token)")" = -5 ]
	expect_rc 65 "$F" show "$res"
	rcli DEL "$(fence_key "$res" token)" >/dev/null
	rcli SET "$(fence_key "$res" lock)" forever >/dev/null
	start=$(date +%s%N)
	expect_rc 65 "$F" acquire "$res" --wait 5s
	grep -q 'no expiry' "$TMP/err"
	[ $(($(date +%s%N) - start)) -lt 2000000000 ]
	rcli DEL "$(fence_key "$res" lock)" >/dev/null
	rcli HSET "$(fence_key "$res" lock)" a b >/dev/null
	expect_rc 65 "$F" acquire "$res" --wait 5s
	expect_rc 65 "$F" release "$res" someone
	rcli DEL "$(fence_key "$res" lock)" >/dev/null
	[ "$(rcli EXISTS "$(fence_key "$res" token)")" = 0 ]
}

# --json prints one object a verb (acquire, show, release), and a free
# resource shows null owner and TTL, never PTTL's -2.
test_cli_json() {
	local res owner
	res=$(rname json)
	expect_rc 0 "$F" acquire "$res" --json
	grep -q '^{"resource":"'"$res"'","token":[0-9]*,"owner":"[^"]*/[0-9a-f]\{32\}","ttl_ms":30000}$' "$TMP/out"
	owner=$(sed 's/.*"owner":"\([^"]*\)".*/\1/' "$TMP/out")
	expect_rc 0 "$F" show "$res" --json
	grep -q '"owner":"'"$owner"'","ttl_ms":[1-9][0-9]*,' "$TMP/out"
	expect_rc 0 "$F" release "$res" "$owner" --json
	grep -qx '{"released":true}' "$TMP/out"
	# free: no owner and no TTL, in both forms (never PTTL's -2)
	expect_rc 0 "$F" show "$res" --json
	grep -q '"owner":null,"ttl_ms":null,' "$TMP/out"
	expect_rc 0 "$F" show "$res"
	grep -qx "FENCE_OWNER=''" "$TMP/out"
	grep -qx 'FENCE_TTL_MS=0' "$TMP/out"
}

# --json is valid JSON whatever the bytes: names, owners and values that
# are not UTF-8 come out with U+FFFD for each bad byte, control characters
# escaped; every verb that prints JSON is read back with a JSON parser.
# (strict UTF-8: Python's stdin would let bad bytes through as surrogates)
json_ok() { python3 -c 'import json, sys; json.loads(sys.stdin.buffer.read().decode())' <"$TMP/out"; }
json_is() {
	python3 -c 'import json, os, sys; v = json.loads(sys.stdin.buffer.read().decode())
for k in sys.argv[1].split("."): v = v[int(k)] if isinstance(v, list) else v[k]
want = os.fsencode(sys.argv[2]).decode()
assert v == want, repr(v)' "$1" "$2" <"$TMP/out"
}
# --json is valid UTF-8 whatever the bytes (the name, an owner Redis holds,
# values PostgreSQL sends in LATIN1): a bad byte becomes U+FFFD.
test_cli_json_bytes() {
	local res res2 res3 owner
	res="$(rname json)-$(printf '\377\376\001"\\\303\251\177\340\200')"
	expect_rc 0 "$F" acquire "$res" --json --ttl 10s
	json_ok
	json_is resource "$(rname json)-$(printf '\357\277\275\357\277\275\001"\\\303\251\177\357\277\275\357\277\275')"
	owner=$(python3 -c 'import json, sys; print(json.loads(sys.stdin.buffer.read().decode())["owner"])' <"$TMP/out")
	expect_rc 0 "$F" extend "$res" "$owner" --json
	json_ok
	expect_rc 0 "$F" show "$res" --json
	json_ok
	json_is owner "$owner"
	expect_rc 0 "$F" release "$res" "$owner" --json
	json_ok
	# an owner Redis holds, of any bytes
	res2=$(rname json2)
	rcli SET "$(fence_key "$res2" lock)" "$(printf 'x\303(\037y')" PX 10000 >/dev/null
	expect_rc 0 "$F" show "$res2" --json
	json_ok
	json_is owner "$(printf 'x\357\277\275(\037y')"
	rcli DEL "$(fence_key "$res2" lock)" >/dev/null
	if [ $pg_ready = 1 ]; then
		# values from PostgreSQL in a client encoding that is not UTF-8
		res3=$(rname json3)
		PGCLIENTENCODING=LATIN1 expect_rc 0 "$F" exec "$res3" --pg "$PGC" --json \
			"SELECT \$1::text, E'a\\001b', NULL" "$(printf '\351')"
		json_ok
		json_is result.0.0 "$(printf '\357\277\275')"
		json_is result.0.1 "$(printf 'a\001b')"
	fi
}

# Acquire --wait gets a lease freed within the wait, and gives up after it
# (75) no sooner than asked.
test_cli_wait() {
	local res start end
	res=$(rname wait)
	rcli SET "$(fence_key "$res" lock)" holder PX 400 >/dev/null
	expect_rc 0 "$F" acquire "$res" --wait 3s
	rcli DEL "$(fence_key "$res" lock)" >/dev/null
	rcli SET "$(fence_key "$res" lock)" holder PX 10000 >/dev/null
	start=$(date +%s%N)
	expect_rc 75 "$F" acquire "$res" --wait 300ms
	end=$(date +%s%N)
	[ $(((end - start) / 1000000)) -ge 290 ]
	rcli DEL "$(fence_key "$res" lock)" >/dev/null
}

# --- run --------------------------------------------------------------------

# Run passes its command's exit status (128+N for a signal, 127 for none),
# gives it FENCE_* and PGOPTIONS (kept), and gives the lease back.
test_cli_run_status_env() {
	local res
	res=$(rname run)
	PGOPTIONS='-c work_mem=64kB' expect_rc 7 "$F" run "$res" --ttl 5s -- sh -c '
		printf "%s\n" "$FENCE_RESOURCE" "$FENCE_TOKEN" "$FENCE_OWNER" "$PGOPTIONS"
		exit 7'
	{ read -r r; read -r t; read -r o; read -r opts; } <"$TMP/out"
	[ "$r" = "$res" ]
	[ "$t" -ge 1 ]
	[[ $o =~ ^[A-Za-z0-9_:@+-]+:[0-9]+:sh/[0-9a-f]{32}$ ]]
	[ "$opts" = "-c work_mem=64kB -c fence.resource=$res -c fence.token=$t -c fence.owner=$o" ]
	# the lease was given back when the command ended
	[ "$(rcli EXISTS "$(fence_key "$res" lock)")" = 0 ]
	# killed by a signal: 128 + N
	expect_rc 143 "$F" run "$res" -- sh -c 'kill -TERM $$'
	expect_rc 0 "$F" run "$res" -- true
	expect_rc 127 "$F" run "$res" -- /nonexistent/command
}

# The command inherits no socket of fence's: not the Redis connections
# (the main one and the heartbeat's), not PostgreSQL's.
test_cli_run_no_sockets() {
	local res
	res=$(rname fds)
	expect_rc 0 "$F" run "$res" --pg "$PGC" -- sh -c 'ls -l /proc/$$/fd/'
	grep -q ' 0 -> ' "$TMP/out"
	refute grep 'socket:' "$TMP/out"
	# and a command that is not a shell: what ls itself sees
	expect_rc 0 "$F" run "$res" -- ls -l /proc/self/fd/
	refute grep 'socket:' "$TMP/out"
}

# Run on a held lease exits 75 without starting its command, with or without
# --wait.
test_cli_run_busy() {
	local res
	res=$(rname runbusy)
	rcli SET "$(fence_key "$res" lock)" holder PX 5000 >/dev/null
	expect_rc 75 "$F" run "$res" -- true
	expect_rc 75 "$F" run "$res" --wait 200ms -- true
	rcli DEL "$(fence_key "$res" lock)" >/dev/null
}

# A SIGTERM to run reaches its command, run exits 143, and the lease is
# given back.
test_cli_run_forward_signal() {
	local res fpid rc=0
	res=$(rname fwd)
	"$F" run "$res" -- sh -c "echo \$\$ > $TMP/fwd; exec sleep 30" &
	fpid=$!
	wait_for 5 test -s "$TMP/fwd"
	kill -TERM $fpid
	wait $fpid || rc=$?
	[ $rc = 143 ]
	dead "$(cat "$TMP/fwd")"
	[ "$(rcli EXISTS "$(fence_key "$res" lock)")" = 0 ]
}

# start "fence run" on a child that leaves a background sleep behind
start_group() {
	local res=$1
	shift
	rm -f "$TMP/sh" "$TMP/bg"
	"$F" run "$res" "$@" -- sh -c "$GROUP_SCRIPT" &
	fpid=$!
	wait_for 5 test -s "$TMP/bg"
	wait_for 5 test -s "$TMP/sh"
}
GROUP_SCRIPT="sleep 60 & echo \$! > $TMP/bg; echo \$\$ > $TMP/sh; wait"

# A lease whose lock Redis lost (deleted): run ends its command's whole
# group and exits 76.
test_cli_run_lost_del() {
	local res rc=0
	res=$(rname lostdel)
	start_group "$res" --ttl 600ms --grace 2s
	rcli DEL "$(fence_key "$res" lock)" >/dev/null
	wait $fpid || rc=$?
	[ $rc = 76 ]
	wait_for 5 dead "$(cat "$TMP/sh")"
	wait_for 5 dead "$(cat "$TMP/bg")"
}

# A lease another owner took over: run ends its command's group, exits 76,
# and leaves the new owner's lock alone.
test_cli_run_lost_takeover() {
	local res rc=0
	res=$(rname losttake)
	start_group "$res" --ttl 600ms --grace 2s
	rcli SET "$(fence_key "$res" lock)" intruder PX 5000 >/dev/null
	wait $fpid || rc=$?
	[ $rc = 76 ]
	wait_for 5 dead "$(cat "$TMP/sh")"
	wait_for 5 dead "$(cat "$TMP/bg")"
	# fence did not delete the new owner's lock
	[ "$(rcli GET "$(fence_key "$res" lock)")" = intruder ]
	rcli DEL "$(fence_key "$res" lock)" >/dev/null
}

# The lease passes to another owner while the command runs, too briefly
# for the heartbeat (ttl/3 is 10 s) to see it: only the final
# compare-and-DEL does, and that is a lease lost while the command ran
# (76), not the command's own 0.  The other owner's lock stays.
test_cli_run_lost_at_release() {
	local res
	res=$(rname lostrel)
	expect_rc 76 "$F" run "$res" --ttl 30s -- sh -c \
		"sleep 0.5; redis-cli -u '$FENCE_REDIS_URL' SET '$(fence_key "$res" lock)' other PX 30000 >/dev/null; sleep 1"
	grep -q 'lost while the command ran' "$TMP/err"
	[ "$(rcli GET "$(fence_key "$res" lock)")" = other ]
	# and fence release of the lease it no longer holds: 76 as well
	expect_rc 76 "$F" release "$res" "$(rcli GET "$(fence_key "$res" lock)")x"
	[ "$(rcli GET "$(fence_key "$res" lock)")" = other ]
	rcli DEL "$(fence_key "$res" lock)" >/dev/null
}

# A command that ignores SIGTERM after its lease is lost is SIGKILLed when
# --grace runs out, not before.
test_cli_run_lost_sigkill() {
	local res rc=0 start end
	res=$(rname lostkill)
	GROUP_SCRIPT="trap '' TERM; sleep 60 & echo \$! > $TMP/bg; echo \$\$ > $TMP/sh; wait" \
		start_group "$res" --ttl 600ms --grace 700ms
	start=$(date +%s%N)
	rcli DEL "$(fence_key "$res" lock)" >/dev/null
	wait $fpid || rc=$?
	end=$(date +%s%N)
	[ $rc = 76 ]
	# SIGTERM was ignored: SIGKILL came after the grace period
	[ $(((end - start) / 1000000)) -ge 700 ]
	wait_for 5 dead "$(cat "$TMP/sh")"
	wait_for 5 dead "$(cat "$TMP/bg")"
}

# The lease covers every process the command started: after the command
# ends, fence keeps renewing while its background job runs, and gives the
# lease back only once that is gone too.
test_cli_run_waits_for_group() {
	local res fpid rc=0 t0
	res=$(rname bgjob)
	rm -f "$TMP/bg"
	"$F" run "$res" --ttl 600ms -- sh -c "sleep 60 & echo \$! > $TMP/bg; echo started" \
		>"$TMP/out" 2>"$TMP/err" &
	fpid=$!
	wait_for 5 test -s "$TMP/bg"
	wait_for 5 grep -q started "$TMP/out"
	# the shell is gone; for two TTLs the lease stays held, and fence waits
	t0=$(date +%s%N)
	while [ $(($(date +%s%N) - t0)) -lt 1200000000 ]; do
		kill -0 $fpid
		[ "$(rcli EXISTS "$(fence_key "$res" lock)")" = 1 ]
		sleep 0.05
	done
	kill "$(cat "$TMP/bg")"
	wait $fpid || rc=$?
	[ $rc = 0 ]
	lock_free "$res"
}

# When the lease is lost, every process the command started is stopped,
# also one that left the process group (setsid), and one that ignores
# SIGTERM gets SIGKILL after --grace.
test_cli_run_lost_escaped() {
	local res fpid rc=0
	res=$(rname escaped)
	rm -f "$TMP/sh" "$TMP/bg" "$TMP/bg2"
	"$F" run "$res" --ttl 600ms --grace 700ms -- sh -c "
		setsid sleep 60 & echo \$! > $TMP/bg
		setsid sh -c 'trap \"\" TERM; echo \$\$ > $TMP/bg2; exec sleep 60' &
		echo \$\$ > $TMP/sh; exec sleep 60" &
	fpid=$!
	wait_for 5 test -s "$TMP/sh"
	wait_for 5 test -s "$TMP/bg"
	wait_for 5 test -s "$TMP/bg2"
	# they really left the group
	[ "$(ps -o pgid= -p "$(cat "$TMP/bg")" | tr -d ' ')" != "$(ps -o pgid= -p "$(cat "$TMP/sh")" | tr -d ' ')" ]
	rcli DEL "$(fence_key "$res" lock)" >/dev/null
	wait $fpid || rc=$?
	[ $rc = 76 ]
	wait_for 5 dead "$(cat "$TMP/sh")"
	wait_for 5 dead "$(cat "$TMP/bg")"
	wait_for 5 dead "$(cat "$TMP/bg2")"
}

# Signals ignored when fence starts (nohup, a shell's trap '') stay ignored,
# in fence and in the command.
test_cli_run_ignored_signals() {
	local res mask fpid rc=0
	res=$(rname ign)
	(trap '' HUP INT QUIT TERM; exec "$F" run "$res" -- sh -c 'grep ^SigIgn: /proc/$$/status') >"$TMP/out"
	mask=$(awk '{ print $2 }' "$TMP/out")
	[ $((16#$mask & 0x4007)) = $((0x4007)) ]
	# a SIGHUP that fence ignores is not passed on; the SIGTERM after it is
	rm -f "$TMP/sh"
	(trap '' HUP; exec "$F" run "$res" -- sh -c "echo \$\$ > $TMP/sh; exec sleep 60") &
	fpid=$!
	wait_for 5 test -s "$TMP/sh"
	kill -HUP $fpid
	kill -TERM $fpid
	wait $fpid || rc=$?
	[ $rc = 143 ]
}

# Hold fence.fences locked (a psql session in the background), so that an
# announce waits: fence has taken the lock in Redis and is not done yet.
lock_fences() {
	psql -XAtq -c "BEGIN" -c "LOCK TABLE fence.fences IN ACCESS EXCLUSIVE MODE" \
		-c "SELECT pg_sleep(60)" >/dev/null 2>&1 &
	LOCKER=$!
	wait_for 5 fences_locked
}
fences_locked() {
	[ "$(psql -XAtc "SELECT count(*) FROM pg_locks WHERE relation = 'fence.fences'::regclass
		AND mode = 'AccessExclusiveLock' AND granted")" = 1 ]
}
announce_waits() {
	[ "$(psql -XAtc "SELECT count(*) FROM pg_stat_activity
		WHERE wait_event_type = 'Lock' AND query LIKE '%fence.advance%'")" -ge 1 ]
}
unlock_fences() {
	psql -XAtqc "SELECT pg_terminate_backend(pid) FROM pg_locks
		WHERE relation = 'fence.fences'::regclass AND mode = 'AccessExclusiveLock' AND granted" >/dev/null
	wait $LOCKER 2>/dev/null || true
}

# A signal that comes while fence acquires and announces (before it could
# act on one) must not strand the lock in Redis until its TTL: fence gives
# the lease back and exits 128+N, printing nothing and starting nothing.
# A second signal ends it at once.  exec cancels a running statement.
test_cli_signal_during_acquire() {
	local res fpid rc verb
	res=$(rname sigacq)
	for verb in acquire run exec; do
		lock_fences
		rc=0
		case $verb in
		acquire) "$F" acquire "$res" --pg "$PGC" >"$TMP/out" & ;;
		run) "$F" run "$res" --pg "$PGC" -- sh -c "echo ran > $TMP/ran" & ;;
		exec) "$F" exec "$res" --pg "$PGC" 'SELECT 1' >"$TMP/out" & ;;
		esac
		fpid=$!
		wait_for 5 announce_waits
		refute lock_free "$res"
		kill -TERM $fpid
		unlock_fences
		wait $fpid || rc=$?
		[ $rc = 143 ] || { echo "$verb exited $rc, expected 143"; return 1; }
		lock_free "$res" || { echo "$verb left the lock in Redis"; return 1; }
		[ ! -s "$TMP/out" ] && [ ! -e "$TMP/ran" ]
	done
	# asked twice: at once, the announce still waiting (SIGTERM: a job in
	# the background of a script ignores SIGINT)
	lock_fences
	rc=0
	"$F" acquire "$res-twice" --pg "$PGC" >"$TMP/out" 2>"$TMP/err" &
	fpid=$!
	wait_for 5 announce_waits
	kill -TERM $fpid
	wait_for 5 grep -q 'again to stop at once' "$TMP/err"
	kill -TERM $fpid
	wait_for 5 dead $fpid
	unlock_fences
	wait $fpid || rc=$?
	[ $rc = 143 ]
	# waiting with --wait: one signal gives up the wait (within half a
	# second), not after the minute asked for
	"$F" acquire "$res-held" --ttl 60s >/dev/null
	rc=0
	"$F" run "$res-held" --wait 60s -- sh -c "echo ran > $TMP/ran" 2>"$TMP/err" &
	fpid=$!
	wait_for 5 queued "$res-held"
	kill -TERM $fpid
	wait_for 5 grep -q 'again to stop at once' "$TMP/err"
	wait_for 5 dead $fpid
	wait $fpid || rc=$?
	[ $rc = 143 ] && [ ! -e "$TMP/ran" ]
	rcli DEL "$(fence_key "$res-held" lock)" >/dev/null
	# exec: a signal cancels the statement, then the lease is given back
	rc=0
	"$F" exec "$res" --pg "$PGC" 'SELECT pg_sleep(60)' >"$TMP/out" 2>"$TMP/err" &
	fpid=$!
	wait_for 5 lock_exists "$res"
	wait_for 5 sleeping
	kill -TERM $fpid
	wait $fpid || rc=$?
	[ $rc = 143 ]
	lock_free "$res"
}
lock_exists() { ! lock_free "$1"; }
queued() { [ "$(rcli ZCARD "$(fence_key "$1" queue)")" -ge 1 ]; }
sleeping() {
	[ "$(psql -XAtc "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(60)%'
		AND pid <> pg_backend_pid() AND state = 'active'")" -ge 1 ]
}

# fence run killed with SIGKILL: the command must not work on without a
# lease.  It gets SIGTERM (PR_SET_PDEATHSIG), or the --death-signal given.
test_cli_run_fence_killed() {
	local res fpid
	res=$(rname k9)
	rm -f "$TMP/k9"
	"$F" run "$res" --ttl 2s -- sh -c "echo \$\$ > $TMP/k9; exec sleep 60" &
	fpid=$!
	wait_for 5 test -s "$TMP/k9"
	kill -9 $fpid
	wait $fpid || true
	wait_for 5 dead "$(cat "$TMP/k9")"
	# a command that ignores SIGTERM, with --death-signal KILL (the killed
	# fence's lock is there until its TTL: another resource)
	rm -f "$TMP/k9"
	"$F" run "$res-kill" --ttl 2s --death-signal KILL -- sh -c "trap '' TERM; echo \$\$ > $TMP/k9; exec sleep 60" &
	fpid=$!
	wait_for 5 test -s "$TMP/k9"
	kill -9 $fpid
	wait $fpid || true
	wait_for 5 dead "$(cat "$TMP/k9")"
	expect_rc 64 "$F" run "$res" --death-signal NOSUCH -- true
	grep -q 'death-signal' "$TMP/err"
}

# In a terminal, run behaves like the command under job control: Ctrl-Z
# stops it (and bash sees the job stopped) while the lease is kept, fg and
# bg resume it, Ctrl-C ends it (client/test/pty_job.py drives a real bash).
test_cli_run_job_control() {
	python3 test/pty_job.py "$F" "$(rname job)" "$FENCE_REDIS_URL"
}

# libpq and OpenSSL are opened at their first use, not at start: a run
# without --pg and without TLS maps neither (nor what they bring: GSSAPI,
# LDAP), and one with --pg opens libpq, announces and passes the token.
# Both checks read the maps of the running fence, the parent of the
# command, so the first one would fail if anything linked them again.
test_cli_lazy_libpq() {
	local res
	res=$(rname lazy)
	# --no-pg: PGHOST and PGDATABASE are set, and run would announce there
	"$F" run "$res" --no-pg -- sh -c 'cat /proc/$PPID/maps >"$0"; echo "$PPID" >"$0.pid"' "$TMP/maps"
	[ "$(cat "$TMP/maps.pid")" != "" ]
	awk '$6 ~ /\.so/ {n = split($6, p, "/"); print p[n]}' "$TMP/maps" | sort -u >"$TMP/libs"
	grep -q '^libhiredis' "$TMP/libs"	# the maps are fence's
	if grep -E '^lib(pq|ssl|crypto|gssapi_krb5|ldap)' "$TMP/libs"; then return 1; fi
	# acquire and release: LD_DEBUG=files lists every object the loader opens
	LD_DEBUG=files "$F" acquire "$res" >"$TMP/out" 2>"$TMP/ld"
	grep -q 'file=libhiredis' "$TMP/ld"
	if grep -E 'file=lib(pq|ssl|crypto)' "$TMP/ld"; then return 1; fi
	eval "$(cat "$TMP/out")"
	expect_rc 0 "$F" release "$res" "$FENCE_OWNER"
	# with --pg: libpq is there by the time the command runs, opened, not
	# linked (LD_DEBUG says "dynamically loaded"), and the token was announced
	LD_DEBUG=files "$F" run "$res" --pg "$PGC" -- sh -c \
		'cat /proc/$PPID/maps >"$0"; printf "%s\n" "$FENCE_TOKEN" >"$0.token"' "$TMP/maps" 2>"$TMP/ld"
	grep -q '/libpq\.so' "$TMP/maps"
	grep -q 'file=libpq.so.5 .*dynamically loaded' "$TMP/ld"
	[ "$(psql -XAtc "SELECT token FROM fence.fences WHERE resource = '$res'")" = "$(cat "$TMP/maps.token")" ]
	# exec and show --pg, through the same lazily opened libpq
	expect_rc 0 "$F" exec "$res" --pg "$PGC" 'SELECT 41 + 1'
	grep -qx 42 "$TMP/out"
	expect_rc 0 "$F" show "$res" --pg "$PGC"
	grep -q "^FENCE_PG_TOKEN=[1-9]" "$TMP/out"
}

# A libpq.so.5 that lacks what fence calls (here a stand-in found first on
# LD_LIBRARY_PATH) is refused with a message that says so, exit 69, before
# any lease is taken; without --pg the same command never opens it.
test_cli_lazy_libpq_missing() {
	local res
	res=$(rname nolibpq)
	mkdir -p "$TMP/stub"
	echo 'int fence_stub;' | cc -shared -fPIC -x c - -Wl,-soname,libpq.so.5 -o "$TMP/stub/libpq.so.5"
	LD_LIBRARY_PATH=$TMP/stub expect_rc 69 "$F" run "$res" --pg "$PGC" -- true
	grep -q 'libpq.so.5 has no function PQ' "$TMP/err"
	lock_free "$res"
	LD_LIBRARY_PATH=$TMP/stub expect_rc 0 "$F" run "$res" --no-pg -- true
}

# Run --pg announces the token before the command starts, and the command's
# psql carries the resource and token (and its own PGOPTIONS).
test_cli_run_psql() {
	local res
	res=$(rname "sp ace\\x")
	SQL="SELECT current_setting('fence.resource'), current_setting('fence.token'), current_setting('work_mem')" \
	PGOPTIONS='-c work_mem=64kB' expect_rc 0 "$F" run "$res" --pg "$PGC" -- sh -c '
		psql -XAt -c "$SQL"
		printf "%s\n" "$FENCE_TOKEN"'
	[ "$(sed -n 1p "$TMP/out")" = "$res|$(sed -n 2p "$TMP/out")|64kB" ]
	# --pg announced the token before the command started
	[ "$(psql -XAtc "SELECT token FROM fence.fences WHERE resource = '$res'")" = "$(sed -n 2p "$TMP/out")" ]
}

# An options= inside --pg's connection string wins over PGOPTIONS, so a
# command that connects with it gets no token: the probe connects the way
# the command does, sees that, and says what to change (the command still
# runs, and its guarded writes fail closed).  Without options= of its own
# the probe stays quiet.
test_cli_run_pg_own_options() {
	local res
	res=$(rname pgopts)
	C="$PGC options='-c work_mem=64kB'" \
	SQL="SELECT coalesce(current_setting('fence.token', true), '') || '|' || current_setting('work_mem')" \
		expect_rc 0 "$F" run "$res" --pg "$PGC options='-c work_mem=64kB'" -- sh -c '
		psql -XAt -d "$C" -c "$SQL"'
	# the command, connecting with that string, has its options but no token
	[ "$(cat "$TMP/out")" = "|64kB" ]
	grep -q 'connection string of --pg sets options ("-c work_mem=64kB")' "$TMP/err"
	grep -q 'Move those' "$TMP/err"
	expect_rc 0 "$F" run "$res" --pg "$PGC" -- true
	refute grep -q 'warning' "$TMP/err"
}

# A resource PostgreSQL has no mark for (never announced, or its mark
# reset away): fence.mark() says 0, and show prints "no mark", not an
# error: FENCE_PG_TOKEN empty, "pg_token": null.  The troubleshooting case
# of the FAQ: a lease in Redis that was never announced.
test_cli_show_pg_no_mark() {
	local res owner
	res=$(rname nomark)
	expect_rc 0 "$F" show "$res" --pg "$PGC"
	grep -qx "FENCE_PG_TOKEN=''" "$TMP/out"
	grep -qx "FENCE_TOKEN=0" "$TMP/out"
	expect_rc 0 "$F" show "$res" --pg "$PGC" --json
	json_ok
	grep -q '"token":0,"pg_token":null,' "$TMP/out"
	# held in Redis, never announced
	eval "$("$F" acquire "$res" --ttl 10s)"
	owner=$FENCE_OWNER
	expect_rc 0 "$F" show "$res" --pg "$PGC"
	grep -qx "FENCE_OWNER=$owner" "$TMP/out"
	grep -qx "FENCE_TOKEN=$FENCE_TOKEN" "$TMP/out"
	grep -qx "FENCE_PG_TOKEN=''" "$TMP/out"
	"$F" release "$res" "$owner"
	# announced, then reset away by an administrator
	expect_rc 0 "$F" exec "$res" --pg "$PGC" 'SELECT 1'
	expect_rc 0 "$F" show "$res" --pg "$PGC" --json
	grep -q '"pg_token":[1-9]' "$TMP/out"
	psql -XAtqc "SELECT fence.reset('$res', 0)" >/dev/null 2>&1
	expect_rc 0 "$F" show "$res" --pg "$PGC" --json
	grep -q '"pg_token":null,' "$TMP/out"
}

# --- exec -----------------------------------------------------------------

# Exec runs one statement with parameters under a lease; show --pg names the
# server's mark and edition; an SQL error exits 1.
test_cli_exec() {
	local res tok
	res=$(rname exec)
	expect_rc 0 "$F" exec "$res" --pg "$PGC" 'SELECT $1::int * 2, $2::text' 21 'a b'
	[ "$(cat "$TMP/out")" = "42|a b" ]
	expect_rc 0 "$F" show "$res" --pg "$PGC"
	tok=$(sed -n 's/^FENCE_TOKEN=//p' "$TMP/out")
	grep -qx "FENCE_PG_TOKEN=$tok" "$TMP/out"
	grep -qx "FENCE_OWNER=''" "$TMP/out"
	# the extension names its edition (the SQL edition's: test/e2e/features/sql_edition.sh)
	grep -qx "FENCE_PG_EDITION=c" "$TMP/out"
	expect_rc 0 "$F" show "$res" --pg "$PGC" --json
	grep -q ',"pg_edition":"c","pg_standby":false}$' "$TMP/out"
	expect_rc 0 "$F" exec "$res" --pg "$PGC" --json 'SELECT 1'
	grep -q '"result":\[\["1"\]\]' "$TMP/out"
	# an SQL error is neither stale nor unreachable
	expect_rc 1 "$F" exec "$res" --pg "$PGC" 'SELECT nonsense FROM nowhere'
}

# What follows the SQL is parameters, never options, even when it looks
# like one; "--" ends the options before SQL that starts with "-".
test_cli_exec_args() {
	local res
	res=$(rname args)
	expect_rc 0 "$F" exec "$res" --pg "$PGC" 'SELECT $1::int, $2::text, $3::text' -5 --json --help
	[ "$(cat "$TMP/out")" = "-5|--json|--help" ]
	expect_rc 0 "$F" exec "$res" --json --pg "$PGC" -- '-- a comment first
SELECT $1::text' --ttl
	grep -q '"result":\[\["--ttl"\]\]' "$TMP/out"
	# run: the command's arguments are its own, with or without "--"
	expect_rc 0 "$F" run "$res" sh -c 'echo "$@"' sh -x --ttl 5s
	[ "$(cat "$TMP/out")" = "-x --ttl 5s" ]
	expect_rc 0 "$F" run "$res" --ttl 5s -- sh -c 'echo "$@"' sh -?
	[ "$(cat "$TMP/out")" = "-?" ]
	# options still go anywhere before that
	expect_rc 76 "$F" release "$res" nobody --json
	expect_rc 64 "$F" exec "$res" 'SELECT 1' --pg "$PGC"
}

# Output that cannot be written: acquire gives the lease back (nobody
# learnt its owner) and exec gives it back too (a closed pipe must not kill
# fence first); both exit 74.  The closed pipe is made in Python, whose
# subprocess gives the child SIGPIPE's default action.
closed_pipe() {
	python3 -c 'import os, subprocess, sys
r, w = os.pipe()
os.close(r)
sys.exit(subprocess.call(sys.argv[1:], stdout=w))' "$@"
}
# Output that cannot be written (full, closed, a closed pipe) exits 74 and
# gives the lease back, for acquire and exec.
test_cli_output_unwritable() {
	local res rc
	res=$(rname out)
	for how in full closed pipe; do
		rc=0
		case $how in
		full) "$F" acquire "$res" --ttl 60s >/dev/full 2>"$TMP/err" || rc=$? ;;
		closed) "$F" acquire "$res" --ttl 60s >&- 2>"$TMP/err" || rc=$? ;;
		pipe) closed_pipe "$F" acquire "$res" --ttl 60s 2>"$TMP/err" || rc=$? ;;
		esac
		[ $rc = 74 ] || { echo "acquire >$how exited $rc"; cat "$TMP/err"; return 1; }
		lock_free "$res" || { echo "acquire >$how left the lock"; return 1; }
	done
	[ $pg_ready = 1 ] || return 0
	for how in full pipe; do
		rc=0
		case $how in
		full) "$F" exec "$res" --pg "$PGC" 'SELECT 1' >/dev/full 2>"$TMP/err" || rc=$? ;;
		pipe) closed_pipe "$F" exec "$res" --pg "$PGC" 'SELECT 1' 2>"$TMP/err" || rc=$? ;;
		esac
		[ $rc = 74 ] || { echo "exec >$how exited $rc"; cat "$TMP/err"; return 1; }
		lock_free "$res" || { echo "exec >$how left the lock"; return 1; }
	done
}

# COPY cannot run through exec (one result, no data streamed): refused at
# once with 64, nothing written, the lease given back.
test_cli_exec_copy() {
	local res tbl=cli_copy_$$
	res=$(rname copy)
	psql -XAtq -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS $tbl" -c "CREATE TABLE $tbl (x int)" -c "INSERT INTO $tbl VALUES (1)"
	expect_rc 64 timeout 60 "$F" exec "$res" --pg "$PGC" "COPY $tbl FROM STDIN" </dev/null
	grep -q 'COPY is not supported' "$TMP/err"
	expect_rc 64 timeout 60 "$F" exec "$res" --pg "$PGC" "COPY $tbl TO STDOUT"
	[ ! -s "$TMP/out" ]
	expect_rc 64 timeout 60 "$F" exec "$res" --pg "$PGC" --json "COPY (DELETE FROM $tbl RETURNING x) TO STDOUT"
	# no result: only the error, as JSON
	refute grep -q '"result"' "$TMP/out"
	grep -q '^{"ok":false,"error":"usage","exit":64,' "$TMP/out"
	[ "$(psql -XAtc "SELECT count(*) FROM $tbl")" = 1 ]
	[ "$(rcli EXISTS "$(fence_key "$res" lock)")" = 0 ]
	psql -XAtqc "DROP TABLE $tbl"
}

# Another holder advanced the fence past the token the statement carries.
test_cli_exec_stale() {
	local res
	res=$(rname stale)
	expect_rc 0 "$F" exec "$res" --pg "$PGC" 'SELECT 1'
	expect_rc 77 "$F" exec "$res" --pg "$PGC" 'SELECT fence.advance($1, 1::bigint)' "$res"
	# and the lease was released on the way out
	[ "$(rcli EXISTS "$(fence_key "$res" lock)")" = 0 ]
	# show --pg has PostgreSQL's counts: the refusal is there although its
	# transaction rolled back (when the server preloads fence, as test/run.sh's does)
	if [ "$(psql -XAtc "SHOW shared_preload_libraries")" = fence ]; then
		# the mark is the first exec's token: the second's advance (its
		# announce) rolled back with the refused statement
		expect_rc 0 "$F" show "$res" --pg "$PGC"
		grep -qx "FENCE_PG_TOKEN=1" "$TMP/out"
		grep -qx "FENCE_PG_STALE=1" "$TMP/out"
		grep -qx "FENCE_PG_LAST_REFUSED_TOKEN=1" "$TMP/out"
		grep -qx "FENCE_PG_MISSING=0" "$TMP/out"
		grep -Eqx "FENCE_PG_LAST_REFUSAL=[0-9-]{10}T[0-9:.]+Z" "$TMP/out"
		# each exec's fence.advance accepted its token (its announce)
		[ "$(sed -n 's/^FENCE_PG_ACCEPTED=//p' "$TMP/out")" -ge 2 ]
		expect_rc 0 "$F" show "$res" --pg "$PGC" --json
		grep -q '"pg_token":1,"pg_stats":{"accepted":[0-9]*,"stale":1,"missing":0,"invalid":0,"last_refusal":"[^"]*","last_refused_token":1},"pg_edition":"c","pg_standby":false}' "$TMP/out"
	fi
}

# Exec with Redis or PostgreSQL unreachable exits 69 and leaves no lock; a
# connection string libpq cannot parse exits 64.
test_cli_exec_unreachable() {
	local res
	res=$(rname exec69)
	expect_rc 69 "$F" exec "$res" --redis redis://127.0.0.1:1 --pg "$PGC" 'SELECT 1'
	expect_rc 69 "$F" exec "$res" --pg 'host=127.0.0.1 port=1 connect_timeout=2' 'SELECT 1'
	grep -q 'could not connect to PostgreSQL' "$TMP/err"
	[ "$(rcli EXISTS "$(fence_key "$res" lock)")" = 0 ]
	expect_rc 64 "$F" exec "$res" --pg 'nonsense' 'SELECT 1'
}

# Exec on a held lease exits 75 after --wait, and runs once the lease is
# free.
test_cli_exec_busy() {
	local res
	res=$(rname exec75)
	rcli SET "$(fence_key "$res" lock)" holder PX 5000 >/dev/null
	expect_rc 75 "$F" exec "$res" --pg "$PGC" --wait 300ms 'SELECT 1'
	rcli DEL "$(fence_key "$res" lock)" >/dev/null
	expect_rc 0 "$F" exec "$res" --pg "$PGC" --wait 300ms 'SELECT 1'
}

# A lease that expires while its token is being announced is lost, not
# held: acquire prints nothing and exits 76, run starts no command, exec
# commits no statement.  A session holding the fence row makes the announce
# wait until the lease has expired in Redis.  Exec's announce is its
# statement's fence.advance, under the heartbeat, which keeps the lease
# while it waits: there the lock is taken away meanwhile, and waiting past
# the TTL (300 ms) makes sure the lease's deadline has passed.
test_cli_announce_expired() {
	local res verb line pid rc locker
	res=$(rname annexp)
	"$F" exec "$res" --pg "$PGC" 'SELECT 1' >/dev/null
	for verb in acquire run exec; do
		coproc LOCKER { psql -XAtq -v ON_ERROR_STOP=1 2>&1; }
		locker=$LOCKER_PID
		echo "BEGIN; SELECT 'locked' FROM fence.fences WHERE resource = '$res' FOR UPDATE;" >&"${LOCKER[1]}"
		read -r line <&"${LOCKER[0]}"
		[ "$line" = locked ]
		case $verb in
		acquire) "$F" acquire "$res" --ttl 300ms --pg "$PGC" >"$TMP/out" 2>"$TMP/err" & ;;
		run) "$F" run "$res" --ttl 300ms --pg "$PGC" -- touch "$TMP/ran" >"$TMP/out" 2>"$TMP/err" & ;;
		exec) "$F" exec "$res" --ttl 300ms --pg "$PGC" "SELECT 'ran'" >"$TMP/out" 2>"$TMP/err" & ;;
		esac
		pid=$!
		wait_for 5 sh -c "psql -XAtc \"SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%fence.advance%'\" | grep -q 1"
		if [ $verb = exec ]; then
			rcli SET "$(fence_key "$res" lock)" someone-else PX 5000 >/dev/null
			sleep 0.4
		else
			wait_for 5 lock_free "$res"
		fi
		echo "COMMIT;" >&"${LOCKER[1]}"
		exec {LOCKER[1]}>&-
		rc=0
		wait $pid || rc=$?
		wait "$locker" 2>/dev/null || true
		echo "$verb: exit $rc: $(cat "$TMP/err")"
		[ $rc = 76 ]
		grep -q 'lost' "$TMP/err"
		[ ! -s "$TMP/out" ]
		[ ! -e "$TMP/ran" ]
	done
	rcli DEL "$(fence_key "$res" lock)" >/dev/null
}

# Redis forgets everything: the next acquire with --pg ends above PG's mark.
test_cli_heal_flushall() {
	local res mark
	res=$(rname heal)
	"$F" exec "$res" --pg "$PGC" 'SELECT 1' >/dev/null
	"$F" exec "$res" --pg "$PGC" 'SELECT 1' >/dev/null
	"$F" exec "$res" --pg "$PGC" 'SELECT 1' >/dev/null
	mark=$(psql -XAtc "SELECT token FROM fence.fences WHERE resource = '$res'")
	[ "$mark" -ge 3 ]
	rcli FLUSHALL >/dev/null
	eval "$("$F" acquire "$res" --pg "$PGC")"
	[ "$FENCE_TOKEN" -gt "$mark" ]
	[ "$(psql -XAtc "SELECT token FROM fence.fences WHERE resource = '$res'")" = "$FENCE_TOKEN" ]
	"$F" release "$res" "$FENCE_OWNER"
}

# Heal and show --pg as roles that are not superusers: an application role
# with the grants docs/install.md shows, and a monitoring role (pg_monitor).
# Neither may read fence.fences; both read the mark through fence.mark().
test_cli_non_superuser() {
	local res app=cli_app_$$ mon=cli_mon_$$
	res=$(rname nosuper)
	trap "psql -XAtq -c 'DROP OWNED BY $app, $mon' -c 'DROP ROLE $app, $mon'" EXIT
	psql -XAtq -c "CREATE ROLE $app LOGIN" -c "CREATE ROLE $mon LOGIN IN ROLE pg_monitor" \
		-c "GRANT EXECUTE ON FUNCTION fence.advance(text, bigint, text),
		                              fence.fenced_update(text, bigint, text),
		                              fence.mark(text) TO $app"
	[ "$(psql -XAtc "SELECT has_table_privilege('$app', 'fence.fences', 'SELECT')")" = f ]
	# PostgreSQL is ahead of the (empty) Redis counter: acquire heals
	psql -XAtqc "SELECT fence.advance('$res', 100)" >/dev/null
	expect_rc 0 "$F" acquire "$res" --pg "$PGC user=$app"
	grep -qx "FENCE_TOKEN=101" "$TMP/out"
	[ "$(psql -XAtc "SELECT token FROM fence.fences WHERE resource = '$res'")" = 101 ]
	# show --pg: the mark for both; the counts for pg_monitor, and for the
	# application role a warning that it may not read them
	expect_rc 0 "$F" show "$res" --pg "$PGC user=$app"
	grep -qx "FENCE_PG_TOKEN=101" "$TMP/out"
	if [ "$(psql -XAtc "SHOW shared_preload_libraries")" = fence ]; then
		grep -q 'warning: no counts from PostgreSQL: permission denied' "$TMP/err"
		expect_rc 0 "$F" show "$res" --pg "$PGC user=$mon"
		grep -qx "FENCE_PG_TOKEN=101" "$TMP/out"
		grep -qx "FENCE_PG_ACCEPTED=[1-9][0-9]*" "$TMP/out"
		[ ! -s "$TMP/err" ]
	fi
	# without the grant, the error says which function
	psql -XAtqc "REVOKE EXECUTE ON FUNCTION fence.mark(text) FROM $app"
	expect_rc 1 "$F" show "$res" --pg "$PGC user=$app"
	grep -q 'permission denied for function mark' "$TMP/err"
}

# PostgreSQL not set up for fence: a role without the grant of docs/install.md, and
# a database without the extension.  Each verb that reaches fence's own
# functions (the announce of acquire, run and exec; show's mark) says the
# fix, found by SQLSTATE (42501; 3F000, 42883), and the fix it says works;
# the caller's own statement failing with the same SQLSTATEs gets no hint.
hint_grant() {
	grep -qF "fence: hint: The role may not call fence's functions. As a superuser (or the extension's owner), grant them: GRANT EXECUTE ON FUNCTION fence.advance(text, bigint, text), fence.fenced_update(text, bigint, text), fence.fenced_update(text, bigint, text, \"any\"), fence.fenced_update(text, bigint, text, text[]), fence.advance_many(text[], bigint[], text[]), fence.fenced_update_many(text[], bigint[], text), fence.fenced_update_many(text[], bigint[], text, \"any\"), fence.fenced_update_many(text[], bigint[], text, text[]), fence.mark(text) TO \"$1\";" "$TMP/err"
}
hint_create() {
	grep -qF "fence: hint: The extension is not installed in database \"$1\". As a superuser, run in it: CREATE EXTENSION fence;" "$TMP/err"
}
# every_verb CONNINFO CHECK...: acquire, run, exec and show with --pg
# CONNINFO fail (exit 1, the lease given back) and CHECK passes after each
every_verb() {
	local pg=$1 verb
	shift
	for verb in acquire run exec show; do
		case $verb in
		acquire) expect_rc 1 "$F" acquire "$res" --pg "$pg" ;;
		run) expect_rc 1 "$F" run "$res" --pg "$pg" -- true ;;
		exec) expect_rc 1 "$F" exec "$res" --pg "$pg" 'SELECT 1' ;;
		show) expect_rc 1 "$F" show "$res" --pg "$pg" --json ;;
		esac
		"$@"
		lock_free "$res"
	done
}
# A missing grant, a missing or older extension: every verb's error carries
# the hint whose statement fixes it, and only those errors do.
test_cli_pg_setup_hints() {
	local res role=cli_nogrant_$$ db=cli_noext_$$ tbl=cli_hint_$$
	res=$(rname hints)
	trap "psql -XAtq -c 'DROP TABLE IF EXISTS $tbl' -c 'DROP OWNED BY $role' -c 'DROP ROLE $role' -c 'DROP DATABASE IF EXISTS $db'" EXIT
	psql -XAtq -c "CREATE ROLE $role LOGIN" -c "CREATE DATABASE $db" -c "CREATE TABLE $tbl (x int)"
	# no grant: permission denied for function advance (mark, for show)
	every_verb "$PGC user=$role" hint_grant "$role"
	grep -q 'permission denied for function mark' "$TMP/err"
	# the grant the hint says is the fix
	psql -XAtqc "$(sed -n 's/^fence: hint: .* grant them: //p' "$TMP/err")"
	expect_rc 0 "$F" show "$res" --pg "$PGC user=$role"
	expect_rc 0 "$F" exec "$res" --pg "$PGC user=$role" 'SELECT 1'
	# the caller's statement refused with the same 42501: no hint
	expect_rc 1 "$F" exec "$res" --pg "$PGC user=$role" "INSERT INTO $tbl VALUES (1)"
	grep -q "permission denied for table $tbl" "$TMP/err"
	refute grep -q '^fence: hint:' "$TMP/err"
	# and with 3F000
	expect_rc 1 "$F" exec "$res" --pg "$PGC" 'SELECT nosuchschema.f()'
	grep -q 'schema "nosuchschema" does not exist' "$TMP/err"
	refute grep -q '^fence: hint:' "$TMP/err"
	# no extension: schema "fence" does not exist
	every_verb "dbname=$db" hint_create "$db"
	grep -q 'schema "fence" does not exist' "$TMP/err"
	psql -d "$db" -XAtqc "$(sed -n 's/^fence: hint: .* run in it: //p' "$TMP/err")"
	expect_rc 0 "$F" exec "$res" --pg "dbname=$db" 'SELECT 1'
	# an extension without fence.mark (as one older than the client): 42883
	psql -d "$db" -XAtq -c "ALTER EXTENSION fence DROP FUNCTION fence.mark(text)" \
		-c "DROP FUNCTION fence.mark(text)"
	expect_rc 1 "$F" show "$res" --pg "dbname=$db"
	grep -q 'function fence.mark(text) does not exist' "$TMP/err"
	grep -qF "fence: hint: The extension is missing from database \"$db\", or older than this client. As a superuser, run in it: CREATE EXTENSION fence; (or, where it is installed: ALTER EXTENSION fence UPDATE;)" "$TMP/err"
}

# A quorum of three "nodes": three databases of the one test server, which
# keep separate keys as independent servers would; one member may be down.
test_cli_quorum() {
	local res q1 q2 q3 down=redis://127.0.0.1:1 n
	res=$(rname quorum)
	q1=$FENCE_REDIS_URL/11 q2=$FENCE_REDIS_URL/12 q3=$FENCE_REDIS_URL/13
	eval "$("$F" acquire "$res" --ttl 10s --redis "$q1" --redis "$q2" --redis "$q3")"
	[ "$FENCE_TOKEN" = 1 ]
	for n in 11 12 13; do
		[ "$(rcli -n $n GET "$(fence_key "$res" lock)")" = "$FENCE_OWNER" ]
	done
	expect_rc 75 "$F" acquire "$res" --redis "$q1" --redis "$q2" --redis "$q3"
	FENCE_REDIS_URL="$q1 $q2 $q3" expect_rc 0 "$F" show "$res"
	grep -qx "FENCE_OWNER=$FENCE_OWNER" "$TMP/out"
	expect_rc 0 "$F" release "$res" "$FENCE_OWNER" --redis "$q1" --redis "$q2" --redis "$q3"
	# one member down: still a majority
	eval "$("$F" acquire "$res" --redis "$q1" --redis "$down" --redis "$q3")"
	[ "$FENCE_TOKEN" = 2 ]
	[ "$(rcli -n 12 GET "$(fence_key "$res" token)")" = 1 ]
	expect_rc 0 "$F" release "$res" "$FENCE_OWNER" --redis "$q1" --redis "$down" --redis "$q3"
	# two down: no majority, exit 69, saying so
	expect_rc 69 "$F" acquire "$res" --redis "$q1" --redis "$down" --redis redis://127.0.0.1:2
	grep -q 'a majority needs 2' "$TMP/err"
	# waiting for replicas needs one master
	expect_rc 64 "$F" acquire "$res" --redis "$q1" --redis "$q2" --redis "$q3" --min-replicas 1
	for n in 11 12 13; do rcli -n $n DEL "$(fence_key "$res" token)" >/dev/null; done
}

# --min-replicas on a server without replicas: exit 69, nothing left held.
test_cli_min_replicas() {
	local res
	res=$(rname minrep)
	expect_rc 69 "$F" acquire "$res" --min-replicas 1 --replica-timeout 100ms
	grep -q 'reached 0 of the 1 replicas asked for within 100 ms' "$TMP/err"
	[ "$(rcli EXISTS "$(fence_key "$res" lock)")" = 0 ]
	expect_rc 0 "$F" acquire "$res" --min-replicas 0
}

# The example program runs its whole path against the real servers.
test_example() {
	expect_rc 0 "$PWD/examples/example" "$FENCE_REDIS_URL" "$PGC" "$(rname example)"
	grep -q '^token [0-9]*, owner [0-9a-f]\{32\}$' "$TMP/out"
}

run_test cli_help
run_test cli_version
run_test cli_usage_errors
run_test cli_usage_before_connect
run_test cli_redis_down
run_test cli_redis_auth_unix
run_test cli_acquire_release
run_test cli_acquire_quoting
run_test cli_cluster_slot
run_test cli_corrupt_keys
run_test cli_json
run_test cli_json_bytes
run_test cli_wait
run_test cli_run_status_env
run_test cli_run_no_sockets pg
run_test cli_run_busy
run_test cli_run_forward_signal
run_test cli_run_lost_del
run_test cli_run_lost_takeover
run_test cli_run_lost_at_release
run_test cli_run_lost_sigkill
run_test cli_run_waits_for_group
run_test cli_run_lost_escaped
run_test cli_run_ignored_signals
run_test cli_run_job_control
run_test cli_run_fence_killed
run_test cli_signal_during_acquire pg
run_test cli_quorum
run_test cli_min_replicas
run_test cli_lazy_libpq pg
run_test cli_lazy_libpq_missing pg
run_test cli_run_psql pg
run_test cli_run_pg_own_options pg
run_test cli_exec pg
run_test cli_show_pg_no_mark pg
run_test cli_exec_copy pg
run_test cli_output_unwritable
run_test cli_exec_args pg
run_test cli_exec_stale pg
run_test cli_exec_unreachable pg
run_test cli_exec_busy pg
run_test cli_announce_expired pg
run_test cli_heal_flushall pg
run_test cli_non_superuser pg
run_test cli_pg_setup_hints pg
run_test example pg

echo "# client CLI tests: $passed passed, $failed failed, $skipped skipped"
[ $failed = 0 ]
