#!/usr/bin/env bash
# F10: bypass attempts by an application role.
#
# Login roles as a deployment has them: f10_owner owns and protects the
# table, f10_app writes it (and may announce tokens: the grant of docs/install.md).
# f10_app takes leases with "fence run --pg" and writes through the guard
# (tokens 1 and 2).  Then, each from its own psql process as f10_app and
# each followed in the same session by a stale write (token 1, through
# PGOPTIONS as "fence run" would set it), it tries to get around the fence:
# write fence.fences directly (INSERT, UPDATE, DELETE, TRUNCATE), lower the
# mark with fence.reset, TRUNCATE the table, disable the guard trigger,
# drop it, unprotect the table, and switch triggers off with
# session_replication_role.
#
# Must hold: every attempt is refused (42501, insufficient privilege), each
# stale write after it is refused with LF001, the mark stays 2, the row
# holds the two good writes, and the history passes the checker.
# The extension's test/sql/privileges.sql checks the same grants with SET
# ROLE; this test goes through real logins and real client processes.
# Negative control: the table's owner may disable the guard on its own
# table (why owner and application must be different roles); after it does,
# the stale write lands and the checker must see the token go down.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init f10
need_client
have_guard || skip "the extension has no guard trigger (fence.protect) yet"

reset_roles() {
	sql -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS f10g_stock, f10g_log, f10c_stock, f10c_log" \
		-c "DO \$\$ BEGIN
			IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'f10_app') THEN
				DROP OWNED BY f10_app; DROP ROLE f10_app; END IF;
			IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'f10_owner') THEN
				DROP OWNED BY f10_owner; DROP ROLE f10_owner; END IF;
		END \$\$"
}
reset_roles
E2E_ON_EXIT=reset_roles
sql <<'SQL'
CREATE ROLE f10_owner LOGIN;
CREATE ROLE f10_app LOGIN;
GRANT CREATE ON SCHEMA public TO f10_owner;
GRANT EXECUTE ON FUNCTION fence.protect(regclass, text, name, name), fence.unprotect(regclass),
	fence.guard() TO f10_owner;
GRANT EXECUTE ON FUNCTION fence.advance(text, bigint, text) TO f10_app;
SQL

# as ROLE PREFIX: make the tables as f10_owner, protected, writable by f10_app
tables() {
	PGUSER=f10_owner make_tables "$1" 100
	PGUSER=f10_owner sql -c "SELECT fence.protect('${1}_stock', '$1:stock')" \
		-c "GRANT SELECT, INSERT, UPDATE ON ${1}_stock, ${1}_log TO f10_app" \
		-c "GRANT USAGE ON SEQUENCE ${1}_log_seq_seq TO f10_app" >/dev/null
}
APPCONN="host=$PGHOST port=$PGPORT user=f10_app dbname=$PGDATABASE"

# good_writes PREFIX: two leases, two writes through the guard, as f10_app
good_writes() {
	local i
	for i in 1 2; do
		W_PG=$APPCONN TBL=$1 start_worker "G$i" "$1:stock" guard --ttl 5s --pg "$APPCONN"
		wait_exit "$LAST_PID" 20
		[ "$RC" = 0 ] && [ "$(outcome "G$i")" = ok ] || fail "good write $i: exit $RC, $(outcome "G$i")"
	done
}

# attempt ROLE PREFIX WHAT SQL: SQL as ROLE, then a stale write in the same
# session; prints "<SQLSTATE of SQL> <SQLSTATE of the write>"
attempt() {
	local role=$1 p=$2 what=$3 out a w
	out=$(PGUSER=$role PGOPTIONS="-c fence.resource=$p:stock -c fence.token=1 -c fence.owner=intruder" \
		psql -X -qAt -v VERBOSITY=verbose 2>/dev/null <<-SQL
		$4
		\echo attempt :SQLSTATE
		BEGIN \; UPDATE ${p}_stock SET qty = 0 WHERE id = 1 \; INSERT INTO ${p}_log (worker, resource, token, owner) VALUES ('intruder', '$p:stock', 1, 'intruder') \; COMMIT;
		\echo write :SQLSTATE
		SQL
	)
	a=$(sed -n 's/^attempt //p' <<<"$out")
	w=$(sed -n 's/^write //p' <<<"$out")
	hist "$role" bypass "$p:stock" 1 intruder "$(now_ms)" - "$a" "case=${what// /_}" "then_write=$w"
	say "as $role: $what -> $a; stale write after it -> $w"
	ATTEMPT=$a WRITE=$w
}

p=f10g
new_history "$p"
tables "$p"
good_writes "$p"
mark() { sql -c "SELECT token FROM fence.fences WHERE resource = '$1:stock'"; }
[ "$(mark "$p")" = 2 ] || fail "mark $(mark "$p") after the good writes, expected 2"
while IFS='|' read -r what stmt; do
	attempt f10_app "$p" "$what" "$stmt"
	[ "$ATTEMPT" = 42501 ] || fail "$what: SQLSTATE $ATTEMPT, expected 42501"
	[ "$WRITE" = LF001 ] || fail "$what: the stale write after it gave $WRITE, expected LF001"
	[ "$(mark "$p")" = 2 ] || fail "$what: the mark moved to $(mark "$p")"
done <<SQL
insert into fence.fences|INSERT INTO fence.fences (resource, token) VALUES ('f10x', 1);
update fence.fences|UPDATE fence.fences SET token = 1 WHERE resource = '$p:stock';
delete from fence.fences|DELETE FROM fence.fences WHERE resource = '$p:stock';
truncate fence.fences|TRUNCATE fence.fences;
fence.reset|SELECT fence.reset('$p:stock', 1);
fence.reset to 0|SELECT fence.reset('$p:stock');
truncate the table|TRUNCATE ${p}_stock;
disable trigger all|ALTER TABLE ${p}_stock DISABLE TRIGGER ALL;
disable the guard|ALTER TABLE ${p}_stock DISABLE TRIGGER fence_guard;
drop the guard|DROP TRIGGER fence_guard ON ${p}_stock;
fence.unprotect|SELECT fence.unprotect('${p}_stock');
session_replication_role|SET session_replication_role = replica;
SQL
[ "$(qty "$p")" = 98 ] || fail "quantity $(qty "$p"), expected 98"
dump_commits "$p"
record_counter "$p" "$p:stock" 100 -1
check_ok

# --- negative control: the owner disables the guard of its own table
p=f10c
new_history "$p"
rm -f "$WORK"/G*.*
tables "$p"
good_writes "$p"
attempt f10_owner "$p" "owner disables the guard" "ALTER TABLE ${p}_stock DISABLE TRIGGER ALL;"
[ "$ATTEMPT" = 00000 ] && [ "$WRITE" = 00000 ] || fail "control: the owner's bypass: $ATTEMPT, then $WRITE"
dump_commits "$p"
record_counter "$p" "$p:stock" 100 -1
check_fails token-down
say "pass"
