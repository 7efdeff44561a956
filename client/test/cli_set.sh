#!/usr/bin/env bash
# client/test/cli_set.sh: sets of leases from the fence command (-R, more
# than once), against the real Redis (FENCE_REDIS_URL) and PostgreSQL (PG*
# variables): acquire, extend and release of a set, the usage rules of -R,
# what run's command carries (FENCE_TOKENS, FENCE_COUNT, the numbered
# variables, one fence.tokens in PGOPTIONS), and nested runs, whose
# innermost command carries every token.  One "ok - NAME" / "not ok -
# NAME" / "skip - NAME" line per test.
#
# The harness (FENCE_BIN, FENCE_CLI_ONLY) is clilib.sh's.
set -u
cd "$(dirname "$0")/.."
. test/clilib.sh

unset FENCE_RESOURCE FENCE_TOKEN FENCE_OWNER FENCE_TOKENS FENCE_COUNT PGOPTIONS

# acquire -R b -R a: canonical order, one owner, eval-able; extend and
# release take the set's resources and that owner.
test_set_acquire() {
	local a b tokens
	a=$(rname a)
	b=$(rname b)
	expect_rc 0 "$F" acquire -R "$b" --resource "$a" --ttl 10s
	eval "$(cat "$TMP/out")"
	[ "$FENCE_COUNT" = 2 ]
	[ "$FENCE_RESOURCE_1" = "$a" ] && [ "$FENCE_RESOURCE_2" = "$b" ]
	[[ $FENCE_OWNER_1 =~ /$HEX$ ]] && [ "$FENCE_OWNER_1" = "$FENCE_OWNER_2" ]
	[ "$FENCE_TOKENS" = "$a=$FENCE_TOKEN_1/$FENCE_OWNER_1,$b=$FENCE_TOKEN_2/$FENCE_OWNER_2" ]
	# two resources: no single-resource variables
	refute grep -q '^FENCE_RESOURCE=' "$TMP/out"
	[ "$(rcli GET "$(fence_key "$a" lock)")" = "$FENCE_OWNER_1" ]
	[ "$(rcli GET "$(fence_key "$b" lock)")" = "$FENCE_OWNER_1" ]
	expect_rc 0 "$F" extend -R "$a" -R "$b" "$FENCE_OWNER_1" --ttl 60s
	[ "$(rcli PTTL "$(fence_key "$b" lock)")" -gt 50000 ]
	expect_rc 0 "$F" release -R "$a" -R "$b" "$FENCE_OWNER_1" --json
	grep -qx '{"released":true}' "$TMP/out"
	lock_free "$a" && lock_free "$b"
	# not held any more: 76, and a wrong owner touches nothing
	expect_rc 76 "$F" release -R "$a" -R "$b" "$FENCE_OWNER_1"
	expect_rc 76 "$F" extend -R "$a" "$FENCE_OWNER_1"
	# --json: the tokens value and every lease
	expect_rc 0 "$F" acquire -R "$a" -R "$b" --json
	tokens=$(sed -E 's/^\{"tokens":"([^"]*)".*/\1/' "$TMP/out")
	grep -q "\"leases\":\\[{\"resource\":\"$a\",\"token\":[0-9]*,\"owner\":\"[^\"]*\",\"ttl_ms\":30000},{\"resource\":\"$b\"" "$TMP/out"
	[[ $tokens == "$a="*",$b="* ]]
	expect_rc 0 "$F" release -R "$b" -R "$a" "$(sed -E 's/.*"owner":"([^"]*)".*/\1/' "$TMP/out")"
	lock_free "$a" && lock_free "$b"
	# one -R: the numbered variables and the single ones
	expect_rc 0 "$F" acquire -R "$a"
	grep -qx 'FENCE_COUNT=1' "$TMP/out" && grep -qx "FENCE_RESOURCE=$a" "$TMP/out"
	eval "$(cat "$TMP/out")"
	expect_rc 0 "$F" release "$a" "$FENCE_OWNER"
}

# One member busy: 75, and what was taken before it is given back.
test_set_busy() {
	local a b
	a=$(rname busy-a)
	b=$(rname busy-b)
	rcli SET "$(fence_key "$b" lock)" someone PX 10000 >/dev/null
	expect_rc 75 "$F" acquire -R "$b" -R "$a"
	grep -q "\"$b\" is held by another owner" "$TMP/err"
	lock_free "$a"
	expect_rc 75 "$F" run -R "$a" -R "$b" --wait 300ms -- true
	lock_free "$a"
	rcli DEL "$(fence_key "$b" lock)" >/dev/null
}

# Usage errors, before anything is contacted (this Redis does not exist).
test_set_usage() {
	local dead=redis://127.0.0.1:1
	expect_rc 64 "$F" acquire r -R s --redis $dead
	grep -q 'a RESOURCE argument and -R do not mix' "$TMP/err"
	expect_rc 64 "$F" acquire -R s r --redis $dead
	grep -q 'a RESOURCE argument and -R do not mix' "$TMP/err"
	expect_rc 64 "$F" run r -R s --redis $dead -- true
	grep -q 'do not mix' "$TMP/err"
	expect_rc 64 "$F" release -R s r owner --redis $dead
	grep -q 'do not mix' "$TMP/err"
	expect_rc 64 "$F" release -R s --redis $dead
	grep -q 'needs one argument: OWNER' "$TMP/err"
	expect_rc 64 "$F" extend -R s '' --redis $dead
	grep -q 'OWNER must not be empty' "$TMP/err"
	expect_rc 64 "$F" acquire -R s -R s --redis $dead
	grep -q -- '-R s is given twice' "$TMP/err"
	expect_rc 64 "$F" acquire -R '' --redis $dead
	grep -q -- '-R: resource name must not be empty' "$TMP/err"
	expect_rc 64 "$F" show -R s --redis $dead
	expect_rc 64 "$F" run -R s --redis $dead
	grep -q 'needs a command' "$TMP/err"
	expect_rc 64 "$F" exec -R s --redis $dead 'SELECT 1'
	grep -q 'needs --pg CONNINFO and SQL' "$TMP/err"
	expect_rc 64 "$F" exec -R s --pg "$PGC" --redis $dead
	expect_rc 64 "$F" exec r -R s --pg "$PGC" --redis $dead 'SELECT 1'
	expect_rc 64 "$F" acquire -R --redis $dead
	expect_rc 69 "$F" acquire -R s -R t --redis $dead
}

# run -R: the command's environment and PGOPTIONS, then the set given back.
test_set_run_env() {
	local a b
	a=$(rname run-a)
	b=$(rname run-b)
	expect_rc 0 env FENCE_RESOURCE=stale FENCE_RESOURCE_3=stale PGOPTIONS='-c work_mem=8MB' \
		"$F" run -R "$b" -R "$a" -- sh -c 'env | grep -E "^(FENCE_|PGOPTIONS=)" | sort'
	grep -qx 'FENCE_COUNT=2' "$TMP/out"
	grep -qx "FENCE_RESOURCE_1=$a" "$TMP/out"
	grep -qx "FENCE_RESOURCE_2=$b" "$TMP/out"
	refute grep -q '^FENCE_RESOURCE=' "$TMP/out"
	refute grep -q '^FENCE_RESOURCE_3=' "$TMP/out"
	eval "$(grep -E '^FENCE_(TOKENS|OWNER_1|TOKEN_1|TOKEN_2)=' "$TMP/out" | sed "s/=\(.*\)/='\1'/")"
	[ "$FENCE_TOKENS" = "$a=$FENCE_TOKEN_1/$FENCE_OWNER_1,$b=$FENCE_TOKEN_2/$FENCE_OWNER_1" ]
	grep -qxF "PGOPTIONS=-c work_mem=8MB -c fence.tokens=$FENCE_TOKENS" "$TMP/out"
	lock_free "$a" && lock_free "$b"
	# the command's status, and fence's 76 when a member is lost
	expect_rc 3 "$F" run -R "$a" -R "$b" -- sh -c 'exit 3'
	"$F" run -R "$a" -R "$b" --ttl 600ms --grace 1s -- sleep 30 >"$TMP/lost.out" 2>"$TMP/lost.err" &
	local pid=$! rc=0
	wait_for 5 eval '[ "$(rcli EXISTS "$(fence_key "$b" lock)")" = 1 ]'
	sleep 0.3
	rcli DEL "$(fence_key "$b" lock)" >/dev/null
	wait "$pid" || rc=$?
	[ "$rc" = 76 ]
	grep -q "lease on \"$b\" lost; stopping the command" "$TMP/lost.err"
	lock_free "$a"
}

# Nested runs: the inner command carries the outer tokens too, merged into
# one fence.tokens; an inherited entry for a resource the inner run holds
# gives way to the inner one; other options stay.
test_set_nested() {
	local a b c
	a=$(rname nest-a)
	b=$(rname nest-b)
	c=$(rname nest-c)
	expect_rc 0 env PGOPTIONS='-c work_mem=8MB' "$F" run "$a" -- \
		"$F" run -R "$c" -R "$b" -- sh -c 'echo "$PGOPTIONS"; echo "$FENCE_TOKENS"; echo "$FENCE_COUNT"; echo "${FENCE_RESOURCE:-none}"'
	local pgo tokens
	pgo=$(sed -n 1p "$TMP/out")
	tokens=$(sed -n 2p "$TMP/out")
	[[ $tokens =~ ^$a=[0-9]+/[^,]+/$HEX,$b=[0-9]+/[^,]+/$HEX,$c=[0-9]+/[^,]+/$HEX$ ]]
	[ "$pgo" = "-c work_mem=8MB -c fence.tokens=$tokens" ]
	[ "$(sed -n 3p "$TMP/out")" = 3 ] && [ "$(sed -n 4p "$TMP/out")" = none ]
	# the issue's own case: two plain runs, the inner one keeps its single
	# settings (which say the same as its entry) after the merged list
	expect_rc 0 "$F" run "$a" -- "$F" run "$b" -- sh -c 'echo "$PGOPTIONS"; echo "$FENCE_TOKEN_1 $FENCE_TOKEN_2 $FENCE_TOKEN"'
	pgo=$(sed -n 1p "$TMP/out")
	[[ $pgo =~ ^-c\ fence.tokens=$a=[0-9]+/[^,]+,$b=([0-9]+)/([^ ]+)\ -c\ fence.resource=$b\ -c\ fence.token=([0-9]+)\ -c\ fence.owner=([^ ]+)$ ]]
	[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[3]}" ] && [ "${BASH_REMATCH[2]}" = "${BASH_REMATCH[4]}" ]
	# an inherited entry for our own resource gives way; quoted ones survive
	expect_rc 0 env PGOPTIONS='-c fence.tokens="x,\ y"=5/o,'"$a"'=999999/old -c fence.resource=zz -c fence.token=7' \
		"$F" run "$a" -- sh -c 'echo "$FENCE_TOKENS"'
	tokens=$(cat "$TMP/out")
	[[ $tokens =~ ^$a=[0-9]+/[^,]+/$HEX,'"x, y"=5/o,zz=7'$ ]]
	[[ $tokens != *999999* ]]
	# what cannot be read is refused (64), the lease given back
	expect_rc 64 env PGOPTIONS='-c fence.tokens=x=5/"o' "$F" run -R "$a" --no-pg -- true
	grep -q 'PGOPTIONS: fence.tokens: the owner of "x" has a quote left open' "$TMP/err"
	lock_free "$a" && lock_free "$b" && lock_free "$c"
}

# Against PostgreSQL: the tokens are announced (fence.fences holds each
# member's), and a session opened with the command's PGOPTIONS sees them.
test_set_pg() {
	local a b
	a=$(rname pg-a)
	b=$(rname pg-b)
	cat >"$TMP/marks.sh" <<'SH'
psql -XAtc "SELECT string_agg(resource || '=' || token, ' ' ORDER BY resource)
            FROM fence.fences WHERE resource IN ('$FENCE_RESOURCE_1', '$FENCE_RESOURCE_2')"
echo "$FENCE_RESOURCE_1=$FENCE_TOKEN_1 $FENCE_RESOURCE_2=$FENCE_TOKEN_2"
SH
	expect_rc 0 "$F" run -R "$b" -R "$a" --pg "$PGC" -- sh "$TMP/marks.sh"
	[ "$(sed -n 1p "$TMP/out")" = "$(sed -n 2p "$TMP/out")" ]
	grep -qE "^$a=[0-9]+ $b=[0-9]+$" "$TMP/out"
}

# exec -R: one statement under every token of the set, on a table guarded
# in key mode (both rows' tokens are needed); a row outside the set is
# refused and nothing is written; COPY is refused (64).
test_set_exec() {
	local t=cliset$$
	if [ "$(psql -XAtc "SELECT to_regprocedure('fence.advance_many(text[],bigint[],text[])') IS NOT NULL")" != t ]; then
		echo "no fence.advance_many: extension older than 0.3.0"
		return 0
	fi
	psql -XAtq -v ON_ERROR_STOP=1 -c "DROP TABLE IF EXISTS $t" \
		-c "CREATE TABLE $t (id int PRIMARY KEY, balance int NOT NULL)" \
		-c "INSERT INTO $t VALUES (1, 100), (2, 100), (3, 100)" \
		-c "SELECT fence.protect('$t', '$t', key_column => 'id')" >/dev/null
	expect_rc 0 "$F" exec -R "$t:2" -R "$t:1" --pg "$PGC" \
		"UPDATE $t SET balance = balance + CASE id WHEN 1 THEN -\$1::int ELSE \$1::int END WHERE id IN (1, 2)" 7
	[ "$(psql -XAtc "SELECT string_agg(balance::text, ' ' ORDER BY id) FROM $t")" = "93 107 100" ]
	# marks: both announced and advanced
	[ "$(psql -XAtc "SELECT count(*) FROM fence.fences WHERE resource IN ('$t:1', '$t:2')")" = 2 ]
	expect_rc 1 "$F" exec -R "$t:1" -R "$t:2" --pg "$PGC" "UPDATE $t SET balance = 0 WHERE id IN (1, 3)"
	grep -q "missing fencing token for resource \"$t:3\"" "$TMP/err"
	refute grep -q Sanitizer "$TMP/err"
	lock_free "$t:1" && lock_free "$t:2"
	[ "$(psql -XAtc "SELECT string_agg(balance::text, ' ' ORDER BY id) FROM $t")" = "93 107 100" ]
	expect_rc 64 "$F" exec -R "$t:1" -R "$t:2" --pg "$PGC" "COPY $t TO STDOUT"
	grep -q 'COPY is not supported' "$TMP/err"
	lock_free "$t:1" && lock_free "$t:2"
	psql -XAtqc "DROP TABLE $t"
}

run_test set_acquire
run_test set_busy
run_test set_usage
run_test set_run_env
run_test set_nested
run_test set_pg pg
run_test set_exec pg

echo "# client set CLI tests: $passed passed, $failed failed, $skipped skipped"
[ $failed = 0 ]
