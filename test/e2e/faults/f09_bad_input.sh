#!/usr/bin/env bash
# F9: bad input to the fence command and to the SQL functions.
#
# Must hold: each bad input fails with the documented exit code (64 usage,
# 69 Redis or PostgreSQL unreachable) or SQLSTATE (LF002 missing token,
# LF003 invalid token, 22004 null, 22023 bad resource name or query, 22003
# out of range, 42804 and 22P02 parameters that do not fit), and nothing is
# written: no lock or token is left in Redis by a refused command, no fence
# mark moves, no row changes.  Every case is recorded in the history, and
# the guarded table's history passes the checker.
# Negative control: the same bad tokens written to a table without the
# guard land (0, -1, none at all), and the checker must see the token go
# down.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init f09

# --- SQL
mode=$(guarded_mode)
p=f09g res=f09g:stock
new_history "$p"
make_tables "$p" 100
protect_if "$mode" "$p" "$res"
# one good write with token 5 first
sql -c "SET client_min_messages = warning" -c "BEGIN; SELECT fence.advance('$res', 5, 'good');
	UPDATE ${p}_stock SET qty = qty - 1 WHERE id = 1;
	INSERT INTO ${p}_log (worker, resource, token, owner) VALUES ('good', '$res', 5, 'good'); COMMIT;" >/dev/null
marks() { sql -c "SELECT coalesce(string_agg(resource || '=' || token, ',' ORDER BY resource), '') FROM fence.fences WHERE resource LIKE 'f09%'"; }
before=$(marks)

# expect_sql CODE DESCRIPTION SQL: SQL fails with CODE and changes nothing
expect_sql() {
	local want=$1 what=$2 got
	shift 2
	got=$(sqlstate "$@")
	hist sql bad "$res" - - "$(now_ms)" - "$got" "case=${what// /_}"
	[ "$got" = "$want" ] || fail "$what: SQLSTATE $got, expected $want"
	[ "$(marks)" = "$before" ] || fail "$what: the fence marks changed: $(marks)"
	[ "$(qty "$p")" = 99 ] || fail "$what: the row changed"
	say "sql: $what -> $got"
}
long=$(printf 'x%.0s' $(seq 1100))
expect_sql 22004 "null resource" -c "SELECT fence.advance(NULL, 6)"
expect_sql LF002 "null token" -c "SELECT fence.advance('$res', NULL)"
expect_sql LF003 "token 0" -c "SELECT fence.advance('$res', 0)"
expect_sql LF003 "negative token" -c "SELECT fence.advance('$res', -1)"
expect_sql 22003 "token 2^63" -c "SELECT fence.advance('$res', '9223372036854775808'::bigint)"
expect_sql 22023 "empty resource" -c "SELECT fence.advance('', 6)"
expect_sql 22023 "resource over 1024 bytes" -c "SELECT fence.advance('$long', 6)"
expect_sql LF001 "stale token" -c "SELECT fence.advance('$res', 4)"
expect_sql 42804 "wrong parameter type" \
	-c "SELECT fence.fenced_update('$res', 6, 'UPDATE ${p}_stock SET qty = \$1', '2020-01-02'::date)"
expect_sql 22P02 "parameter text that does not fit its inferred type" \
	-c "SELECT fence.fenced_update('$res', 6, 'UPDATE ${p}_stock SET qty = \$1', 'abc')"
expect_sql 22023 "two statements" \
	-c "SELECT fence.fenced_update('$res', 6, 'UPDATE ${p}_stock SET qty = 1; UPDATE ${p}_stock SET qty = 2')"
expect_sql 22023 "DDL in fenced_update" -c "SELECT fence.fenced_update('$res', 6, 'DROP TABLE ${p}_stock')"
expect_sql 22004 "null query" -c "SELECT fence.fenced_update('$res', 6, NULL)"
if [ "$mode" = guard ]; then
	expect_sql LF002 "guarded write without a token" -c "UPDATE ${p}_stock SET qty = 0"
	expect_sql LF003 "token setting not a number" \
		-c "SET fence.resource = '$res'" -c "SET fence.token = 'abc'" -c "UPDATE ${p}_stock SET qty = 0"
	expect_sql LF003 "token setting 0" \
		-c "SET fence.resource = '$res'" -c "SET fence.token = '0'" -c "UPDATE ${p}_stock SET qty = 0"
	expect_sql LF001 "stale token setting" \
		-c "SET fence.resource = '$res'" -c "SET fence.token = '4'" -c "UPDATE ${p}_stock SET qty = 0"
	sql -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS f09_wrong" -c "CREATE TABLE f09_wrong (id int)"
	expect_sql 39P01 "guard as an AFTER trigger" \
		-c "CREATE TRIGGER f09_after AFTER INSERT ON f09_wrong FOR EACH ROW EXECUTE FUNCTION fence.guard()" \
		-c "SET fence.resource = '$res'" -c "SET fence.token = '7'" -c "INSERT INTO f09_wrong VALUES (1)"
	sql -c "DROP TABLE f09_wrong"
fi
record_counter "$p" "$res" 100 -1
dump_commits "$p"
check_ok

# --- the fence command
if [ -x "$FENCE_BIN" ]; then
	dead=$(spare_port)
	# expect_cli CODE DESCRIPTION ARGS...: no lock or counter left behind
	expect_cli() {
		local want=$1 what=$2 rc
		shift 2
		set +e
		"$FENCE_BIN" "$@" >"$WORK/cli.out" 2>"$WORK/cli.err"
		rc=$?
		set -e
		hist cli bad - - - "$(now_ms)" - "exit=$rc" "case=${what// /_}"
		[ "$rc" = "$want" ] || fail "fence $what: exit $rc, expected $want: $(head -c 300 "$WORK/cli.err")"
		[ -s "$WORK/cli.err" ] || fail "fence $what: no message on stderr"
		[ -z "$(rkeys 'fence:{f09c*')" ] || fail "fence $what: left keys in Redis: $(rkeys 'fence:{f09c*')"
		[ "$(marks)" = "$before" ] || fail "fence $what: the fence marks changed"
		say "fence $what -> $rc: $(head -n1 "$WORK/cli.err")"
	}
	expect_cli 64 "without a command"
	expect_cli 64 "unknown command" frobnicate f09c
	expect_cli 64 "acquire without a resource" acquire
	expect_cli 64 "unknown option" acquire f09c --bogus
	grep -q 'Try "fence --help"' "$WORK/cli.err" || fail "no pointer to --help after a bad option"
	expect_cli 64 "duration abc" acquire f09c --ttl abc
	expect_cli 64 "negative duration" acquire f09c --ttl -1s
	expect_cli 64 "zero ttl" acquire f09c --ttl 0
	expect_cli 64 "huge duration" acquire f09c --ttl 99999999999999999999
	expect_cli 64 "bad wait" acquire f09c --wait 5x
	expect_cli 64 "duration without its unit" run f09c --ttl 10 -- true
	expect_cli 64 "empty resource" acquire ''
	expect_cli 64 "resource of 100000 bytes" acquire "f09c$(head -c 100000 /dev/zero | tr '\0' x)"
	expect_cli 64 "run without a command" run f09c --
	expect_cli 64 "release without an owner" release f09c
	expect_cli 64 "malformed Redis URL" acquire f09c --redis notaurl
	expect_cli 64 "Redis URL with a bad port" acquire f09c --redis redis://127.0.0.1:99999
	expect_cli 69 "Redis down" acquire f09c --redis "redis://127.0.0.1:$dead"
	expect_cli 69 "Redis down (show)" show f09c --redis "redis://127.0.0.1:$dead"
	expect_cli 69 "PostgreSQL down (acquire --pg)" acquire f09c --pg "host=127.0.0.1 port=$dead"
	expect_cli 69 "PostgreSQL down (run --pg)" run f09c --pg "host=127.0.0.1 port=$dead" -- true
	expect_cli 69 "PostgreSQL down (exec)" exec f09c --pg "host=127.0.0.1 port=$dead" "SELECT 1"
	# a counter at 2^63-1 cannot grow: refused, and no lock left
	rcli SET "$(fence_key f09c:max token)" 9223372036854775807 >/dev/null
	set +e
	"$FENCE_BIN" acquire f09c:max >"$WORK/cli.out" 2>"$WORK/cli.err"
	rc=$?
	set -e
	hist cli bad f09c:max - - "$(now_ms)" - "exit=$rc" case=counter_at_max
	say "fence acquire with the counter at 2^63-1 -> $rc: $(head -n1 "$WORK/cli.err")"
	[ "$rc" != 0 ] || fail "acquire with the counter at 2^63-1 succeeded"
	[ "$(rcli GET "$(fence_key f09c:max token)")" = 9223372036854775807 ] || fail "the counter at 2^63-1 changed"
	lock_gone f09c:max || fail "acquire with the counter at 2^63-1 left a lock"
	rcli DEL "$(fence_key f09c:max token)" >/dev/null
else
	say "no fence command at $FENCE_BIN: command-line cases skipped"
fi

# --- negative control: the same bad tokens on a table without the guard
p=f09c res=f09c:stock
new_history "$p"
make_tables "$p" 100
# one -c is one transaction; its RETURNING comes last, as psql before 15
# prints only the last result of a -c (with a COMMIT after it, seq was
# empty on PostgreSQL 13)
for tok in 5 0 -1 NULL; do
	seq=$(sql -c "UPDATE ${p}_stock SET qty = qty - 1 WHERE id = 1;
		INSERT INTO ${p}_log (worker, resource, token, owner) VALUES ('t$tok', '$res', $tok, NULL)
		RETURNING seq")
	hist "t$tok" write "$res" "${tok/NULL/0}" - - - ok "seq=$seq"
done
record_counter "$p" "$res" 100 -1
check_fails token-down
say "pass"
