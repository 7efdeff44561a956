#!/usr/bin/env bash
# client/test/cli_ops.sh: what an operator asks the fence command, against
# the real Redis (FENCE_REDIS_URL) and PostgreSQL (PG* variables): who
# holds a lease (owner names, --name), who waits for it (fence show), and
# which leases are held (fence list).  One "ok - NAME" / "not ok - NAME" /
# "skip - NAME" line per test.
#
# The harness (FENCE_BIN, FENCE_CLI_ONLY) is clilib.sh's.
set -u
cd "$(dirname "$0")/.."
: "${FENCE_REDIS_URL:=redis://127.0.0.1:6379}"
export FENCE_REDIS_URL
. test/clilib.sh

rcli() { redis-cli -u "$FENCE_REDIS_URL" "$@"; }
lockkey() { echo "fence:{$1}:lock"; }
HEX='[0-9a-f]{32}'

# --- owner names ----------------------------------------------------------

# --name puts a readable name in front of the owner id, which stays unique;
# it travels as it is to Redis, FENCE_OWNER, show and release.
test_ops_name() {
	local res owner
	res=$(rname name)
	eval "$("$F" acquire "$res" --ttl 10s --name 'ops@db1:nightly+1')"
	[[ $FENCE_OWNER =~ ^ops@db1:nightly\+1/$HEX$ ]]
	owner=$FENCE_OWNER
	[ "$(rcli GET "$(lockkey "$res")")" = "$owner" ]
	expect_rc 0 "$F" show "$res"
	grep -qx "FENCE_OWNER=$owner" "$TMP/out"
	expect_rc 0 "$F" show "$res" --json
	grep -qF "\"owner\":\"$owner\"" "$TMP/out"
	# the same name twice: two owners all the same
	eval "$("$F" acquire "$res-2" --ttl 10s --name 'ops@db1:nightly+1')"
	[[ $FENCE_OWNER =~ ^ops@db1:nightly\+1/$HEX$ ]]
	[ "$FENCE_OWNER" != "$owner" ]
	expect_rc 0 "$F" release "$res-2" "$FENCE_OWNER"
	expect_rc 76 "$F" release "$res" "ops@db1:nightly+1"
	expect_rc 0 "$F" release "$res" "$owner"
	# -n, and 64 bytes is not too long
	eval "$("$F" acquire "$res" -n "$(printf 'x%.0s' $(seq 64))")"
	[[ $FENCE_OWNER =~ ^x{64}/$HEX$ ]]
	expect_rc 0 "$F" release "$res" "$FENCE_OWNER"
}

# Names that could not travel as they are: refused (64) before anything is
# contacted (the Redis named here does not exist).
test_ops_name_refused() {
	local dead=redis://127.0.0.1:1 bad
	for bad in '' 'a b' 'a.b' 'a/b' 'a\b' "a'b" 'a"b' 'a$b' 'a{b}' 'é' "$(printf 'a\tb')" \
		"$(printf 'x%.0s' $(seq 65))"; do
		expect_rc 64 "$F" acquire r --name "$bad" --redis $dead
		grep -q -- '--name: owner name' "$TMP/err"
	done
	grep -q 'too long (65 bytes, at most 64)' "$TMP/err"
	expect_rc 64 "$F" run r --name 'a.b' --redis $dead -- true
	grep -q "may not hold '.'" "$TMP/err"
	expect_rc 64 "$F" exec r --name 'a b' --redis $dead --pg "$PGC" 'SELECT 1'
	expect_rc 69 "$F" acquire r --name 'ok:name_1-2@x+y' --redis $dead
}

# Without --name: HOST:PID:COMMAND, for the process the lease is for.  run:
# fence's own pid (the command's parent) and the command's name; acquire:
# the process that started fence.  What a name may not hold becomes '_'.
test_ops_name_default() {
	local res host
	res=$(rname default)
	host=$(hostname | cut -d. -f1 | cut -c1-32)
	expect_rc 0 "$F" run "$res" -- sh -c 'echo "$FENCE_OWNER $PPID"'
	read -r owner ppid <"$TMP/out"
	[[ $owner =~ ^$host:$ppid:sh/$HEX$ ]]
	expect_rc 0 "$F" acquire "$res" --ttl 5s
	grep -Eqx "FENCE_OWNER=$host:$BASHPID:bash/$HEX" "$TMP/out"
	eval "$(cat "$TMP/out")"
	"$F" release "$res" "$FENCE_OWNER"
	# a command whose name holds a '.', run by its path
	printf '#!/bin/sh\necho "$FENCE_OWNER"\n' >"$TMP/my.job"
	chmod +x "$TMP/my.job"
	expect_rc 0 "$F" run "$res" -- "$TMP/my.job"
	grep -Eqx "$host:[0-9]+:my_job/$HEX" "$TMP/out"
	# a host name with dots gives its first label
	if unshare -u true 2>/dev/null; then
		unshare -u sh -c 'hostname db-7.example.com && exec "$@"' sh \
			"$F" run "$res" -- sh -c 'echo "$FENCE_OWNER"' >"$TMP/out"
		grep -Eqx "db-7:[0-9]+:sh/$HEX" "$TMP/out"
	fi
}

# The named owner travels into PostgreSQL: PGOPTIONS (-c fence.owner=...),
# the session's fence.owner and the mark's owner in fence.fences.
test_ops_name_pg() {
	local res owner
	res=$(rname namepg)
	expect_rc 0 "$F" run "$res" --name 'etl:load@db1' --pg "$PGC" -- sh -c \
		'echo "$FENCE_OWNER"; echo "$PGOPTIONS"; psql -XAtc "SHOW fence.owner"'
	owner=$(sed -n 1p "$TMP/out")
	[[ $owner =~ ^etl:load@db1/$HEX$ ]]
	[[ $(sed -n 2p "$TMP/out") == *"-c fence.owner=$owner" ]]
	[ "$(sed -n 3p "$TMP/out")" = "$owner" ]
	[ "$(psql -XAtc "SELECT owner FROM fence.fences WHERE resource = '$res'")" = "$owner" ]
}

run_test ops_name
run_test ops_name_refused
run_test ops_name_default
run_test ops_name_pg pg

echo "# client operator CLI tests: $passed passed, $failed failed, $skipped skipped"
[ $failed = 0 ]
