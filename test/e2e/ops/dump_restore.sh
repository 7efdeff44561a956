#!/usr/bin/env bash
# pg_dump and pg_restore of a database that uses fence, in every way the
# documentation says works (docs/backups.md).
#
# The source database has a mark for each resource, a floor that
# fence.forget() left of a forgotten mark, and a table in every
# protect mode: table, key, token column, key and token column, a key-mode
# partition under a partitioned table, and a key-mode table with a
# disabled BEFORE ROW trigger whose name sorts after the guard (which
# fence.protect accepts, and the guard's own hint suggests).
#
# Must hold, for a custom-format dump restored with pg_restore
# --exit-on-error, a plain dump restored with psql -1 -v ON_ERROR_STOP=1,
# and a directory dump restored with pg_restore -j2 --exit-on-error: the
# restore succeeds, and the copy has the same marks and floors, the same triggers
# (guards ENABLE ALWAYS, the late trigger still disabled) and the same
# rows; a stale token is refused there, the forgotten resource's old one
# too, and the current one accepted, also
# under session_replication_role = replica.  pg_dump writes a disabled
# trigger as CREATE TRIGGER and then DISABLE TRIGGER, and fence used to
# refuse the CREATE (0.2.0).
#
# A data-only restore needs --disable-triggers, which ends with ENABLE
# TRIGGER ALL: the guards come back at plain ENABLE, and the late trigger
# enabled, which the guard refuses to write with until it is disabled
# again; fence.reprotect_all() (new in 0.3.0) puts ENABLE ALWAYS back.
#
# A role that is not a superuser restores as docs/backups.md
# says: a superuser
# makes the database and the extension and grants INSERT on fence.fences
# and fence.floors,
# and the restore leaves out the schema and the extension, which are
# there already.  The marks come back, and a token below the source's
# mark is refused.  Without that grant the restore stops at fence.fences
# instead of going on without the marks.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init dump_restore

dbs="fr_src fr_custom fr_plain fr_dir fr_data fr_user"
cleanup_dbs() {
	local d
	for d in $dbs; do sql -d postgres -c "DROP DATABASE IF EXISTS $d" 2>/dev/null; done
	sql -d postgres -c "DROP ROLE IF EXISTS fr_restorer" 2>/dev/null
}
cleanup_dbs
E2E_ON_EXIT=cleanup_dbs
for d in $dbs; do sql -d postgres -c "CREATE DATABASE $d"; done

sql -d fr_src <<-'SQL' >/dev/null
	CREATE EXTENSION fence;
	CREATE FUNCTION audit() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN NEW.qty := -1; RETURN NEW; END';
	CREATE TABLE t_table (id int PRIMARY KEY, qty int);
	SELECT fence.protect('t_table', 'fr:table');
	CREATE TABLE t_key (id int PRIMARY KEY, qty int);
	SELECT fence.protect('t_key', 'frk', key_column => 'id');
	CREATE TABLE t_token (id int PRIMARY KEY, qty int, tok bigint);
	SELECT fence.protect('t_token', 'frt', token_column => 'tok');
	CREATE TABLE t_both (id int PRIMARY KEY, qty int, tok bigint);
	SELECT fence.protect('t_both', 'frb', 'tok', 'id');
	CREATE TABLE parted (id int, qty int, tok bigint) PARTITION BY RANGE (id);
	CREATE TABLE part1 PARTITION OF parted FOR VALUES FROM (0) TO (100);
	SELECT fence.protect('part1', 'frp', 'tok', 'id');
	CREATE TABLE t_late (id int PRIMARY KEY, qty int);
	CREATE TRIGGER zz_audit BEFORE INSERT OR UPDATE ON t_late FOR EACH ROW EXECUTE FUNCTION audit();
	ALTER TABLE t_late DISABLE TRIGGER zz_audit;
	SELECT fence.protect('t_late', 'frl', key_column => 'id');
	BEGIN;
	SELECT fence.advance(r, 5) FROM unnest(ARRAY['fr:table', 'frk:1', 'frt', 'frb:1', 'frp:1', 'frl:1']) r;
	INSERT INTO t_table VALUES (1, 10);
	INSERT INTO t_key VALUES (1, 10);
	SET LOCAL fence.resource = 'frt';
	SET LOCAL fence.token = '5';
	INSERT INTO t_token VALUES (1, 10);
	INSERT INTO t_both VALUES (1, 10);
	INSERT INTO parted VALUES (1, 10);
	INSERT INTO t_late VALUES (1, 10);
	COMMIT;
	SELECT fence.advance('frk:2', 9);
	UPDATE fence.fences SET updated_at = updated_at - interval '2 days' WHERE resource = 'frk:2';
	SELECT fence.forget('1 day');
SQL

# state DB: what must survive, one line per fact
state() {
	sql -d "$1" <<-'SQL'
		SELECT 'mark', resource, token FROM fence.fences ORDER BY resource;
		SELECT 'floor', prefix, token FROM fence.floors ORDER BY prefix;
		SELECT 'trigger', tgrelid::regclass::text, tgname, tgenabled, tgfoid::regproc, encode(tgargs, 'escape')
		  FROM pg_trigger WHERE NOT tgisinternal ORDER BY 2, 3;
		SELECT 'rows', (SELECT string_agg(format('%s', t), ' ') FROM t_table t),
		       (SELECT string_agg(format('%s', t), ' ') FROM t_key t),
		       (SELECT string_agg(format('%s', t), ' ') FROM t_token t),
		       (SELECT string_agg(format('%s', t), ' ') FROM t_both t),
		       (SELECT string_agg(format('%s', t), ' ') FROM parted t),
		       (SELECT string_agg(format('%s', t), ' ') FROM t_late t);
	SQL
}
state fr_src >"$WORK/src.state"
grep -qx 'floor|frk|9' "$WORK/src.state" || fail "source: no floor for frk: $(cat "$WORK/src.state")"
grep -q '^mark|frk:2|' "$WORK/src.state" && fail "source: frk:2 was not forgotten"
grep -q '^trigger|t_late|zz_audit|D|' "$WORK/src.state" || fail "source: zz_audit is not disabled: $(cat "$WORK/src.state")"
[ "$(grep -c '^trigger|.*|fence_guard.*|A|fence.guard|' "$WORK/src.state")" = 12 ] ||
	fail "source: not 12 guards ENABLE ALWAYS: $(cat "$WORK/src.state")"

# same_state DB WHAT: DB has the source's state, and fences as it does
same_state() {
	state "$1" >"$WORK/$1.state"
	diff "$WORK/src.state" "$WORK/$1.state" >"$WORK/$1.diff" ||
		fail "$2: the restored database differs from the source: $(cat "$WORK/$1.diff")"
	[ "$(sqlstate -d "$1" -c "BEGIN" -c "SET LOCAL fence.resource = 'fr:table'" \
		-c "SET LOCAL fence.token = '4'" -c "UPDATE t_table SET qty = 0" -c "COMMIT")" = LF001 ] ||
		fail "$2: a stale token was not refused"
	[ "$(sqlstate -d "$1" -c "SELECT fence.advance('frk:2', 9)")" = LF001 ] ||
		fail "$2: the old token of a forgotten resource was not refused"
	[ "$(sqlstate -d "$1" -c "SET session_replication_role = replica" -c "UPDATE t_key SET qty = 0")" = LF002 ] ||
		fail "$2: replica mode skipped a guard"
	[ "$(sqlstate -d "$1" -c "BEGIN" -c "SELECT fence.advance('frb:1', 6)" \
		-c "UPDATE t_both SET qty = qty + 1" -c "ROLLBACK")" = 00000 ] ||
		fail "$2: the current holder's write was refused"
}

"$PG_BINDIR/pg_dump" -Fc -f "$WORK/src.dump" fr_src || fail "pg_dump -Fc"
"$PG_BINDIR/pg_restore" --exit-on-error -d fr_custom "$WORK/src.dump" 2>"$WORK/custom.err" ||
	fail "pg_restore --exit-on-error: $(cat "$WORK/custom.err")"
same_state fr_custom "custom format"
say "custom format: restored, marks, guards and triggers intact"

"$PG_BINDIR/pg_dump" -Fp -f "$WORK/src.sql" fr_src || fail "pg_dump -Fp"
psql -X -q -1 -v ON_ERROR_STOP=1 -d fr_plain -f "$WORK/src.sql" >/dev/null 2>"$WORK/plain.err" ||
	fail "psql -1 -v ON_ERROR_STOP=1: $(cat "$WORK/plain.err")"
same_state fr_plain "plain format"
say "plain format with psql -1: restored, marks, guards and triggers intact"

"$PG_BINDIR/pg_dump" -Fd -j2 -f "$WORK/src.dir" fr_src || fail "pg_dump -Fd -j2"
"$PG_BINDIR/pg_restore" -j2 --exit-on-error -d fr_dir "$WORK/src.dir" 2>"$WORK/dir.err" ||
	fail "pg_restore -j2 --exit-on-error: $(cat "$WORK/dir.err")"
same_state fr_dir "directory format"
say "directory format with -j2: restored, marks, guards and triggers intact"

# data only, into the schema restored first
"$PG_BINDIR/pg_restore" --exit-on-error --schema-only -d fr_data "$WORK/src.dump" 2>"$WORK/data.err" ||
	fail "pg_restore --schema-only: $(cat "$WORK/data.err")"
"$PG_BINDIR/pg_restore" --exit-on-error --data-only --disable-triggers -d fr_data "$WORK/src.dump" \
	2>"$WORK/data.err" || fail "pg_restore --data-only --disable-triggers: $(cat "$WORK/data.err")"
[ "$(sql -d fr_data -c "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'fence_guard%' AND tgenabled = 'O'")" = 12 ] ||
	fail "data-only: the guards are not at plain ENABLE, as docs/backups.md says they are"
# ENABLE TRIGGER ALL enabled zz_audit too: the guard refuses to write
# with it, and so does fence.reprotect_all() until it is disabled again
[ "$(sqlstate -d fr_data -c "BEGIN" -c "SELECT fence.advance('frl:1', 6)" \
	-c "UPDATE t_late SET qty = 1" -c "ROLLBACK")" = 0A000 ] || fail "data-only: t_late written with zz_audit after its guard"
[ "$(sqlstate -d fr_data -c "SELECT fence.reprotect_all()")" = 0A000 ] ||
	fail "data-only: fence.reprotect_all() enabled a guard with zz_audit after it"
sql -d fr_data -c "ALTER TABLE t_late DISABLE TRIGGER zz_audit"
[ "$(sql -d fr_data -c "SELECT fence.reprotect_all()")" = 6 ] || fail "fence.reprotect_all() did not change 6 tables"
[ "$(sql -d fr_data -c "SELECT fence.reprotect_all()")" = 0 ] || fail "fence.reprotect_all() again changed something"
same_state fr_data "data-only with --disable-triggers, then fence.reprotect_all()"
say "data only: guards at plain ENABLE, fence.reprotect_all() sets ENABLE ALWAYS back"

# restorer_db [SQL]: the database fr_user ready for fr_restorer's restore,
# as docs/backups.md sets it up (the extension, EXECUTE on the guard's
# functions, CREATE on public), and SQL
restorer_db() {
	sql -d fr_user <<-SQL
		CREATE EXTENSION fence;
		GRANT EXECUTE ON FUNCTION fence.protect(regclass, text, name, name),
		                          fence.unprotect(regclass), fence.guard()
		    TO fr_restorer;
		GRANT CREATE ON SCHEMA public TO fr_restorer;
		${1:-}
	SQL
}

# a restore by a role that is not a superuser, as
# docs/backups.md shows
sql -d postgres <<-'SQL'
	CREATE ROLE fr_restorer LOGIN;
	ALTER DATABASE fr_user OWNER TO fr_restorer;
SQL
restorer_db
"$PG_BINDIR/pg_restore" -l "$WORK/src.dump" | grep -v -e ' SCHEMA - fence ' -e ' EXTENSION - fence ' \
	-e ' COMMENT - EXTENSION fence ' >"$WORK/user.list"
if PGUSER=fr_restorer "$PG_BINDIR/pg_restore" --exit-on-error --no-owner -L "$WORK/user.list" \
	-d fr_user "$WORK/src.dump" 2>"$WORK/user.err"; then
	fail "a restore without INSERT on fence.fences went through"
fi
grep -q 'permission denied for table fences' "$WORK/user.err" || fail "no refusal at fence.fences: $(cat "$WORK/user.err")"
say "not a superuser, without INSERT on fence.fences: the restore stops there"
sql -d postgres -c "DROP DATABASE fr_user" -c "CREATE DATABASE fr_user OWNER fr_restorer"
restorer_db "GRANT INSERT ON fence.fences, fence.floors TO fr_restorer;"
PGUSER=fr_restorer "$PG_BINDIR/pg_restore" --exit-on-error --no-owner -L "$WORK/user.list" \
	-d fr_user "$WORK/src.dump" 2>"$WORK/user.err" || fail "restore as fr_restorer: $(cat "$WORK/user.err")"
sql -d fr_user -c "REVOKE INSERT ON fence.fences, fence.floors FROM fr_restorer"
same_state fr_user "restore by a role that is not a superuser"
[ "$(PGUSER=fr_restorer sqlstate -d fr_user -c "UPDATE fence.fences SET token = 1")" = 42501 ] ||
	fail "the restoring role may still write fence.fences"
say "not a superuser, with the grants of docs/backups.md: marks, guards and triggers intact"
say "pass"
