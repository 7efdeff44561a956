#!/usr/bin/env bash
# editions_surface: the C extension and the SQL edition of hosted
# PostgreSQL (sql/hosted/fence_hosted.sql) expose the same objects: every
# function of schema fence with its return type, volatility, SECURITY
# DEFINER and STRICT; every table and view with its columns; the grants on
# them and on the schema; their comments; event triggers.  An object added
# to one edition and forgotten in the other fails here.
#
# Must hold: the two surfaces differ only by the allow-list below, each
# entry with its reason (most are rows of docs/hosted.md's "What the SQL
# edition cannot do"), and every entry of the list is still a difference
# (an entry that no longer differs fails too: the list stays true).  Names
# that begin with "_" are the SQL edition's own helpers (what the C
# extension does in C), left out of the comparison.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init editions_surface

dbc=fence_surface_c_$$ dbs=fence_surface_sql_$$
drop_dbs() { psql -X -q -c "DROP DATABASE IF EXISTS $dbc" -c "DROP DATABASE IF EXISTS $dbs"; }
E2E_ON_EXIT=drop_dbs
createdb -T template0 "$dbc" && createdb -T template0 "$dbs" || fail "createdb"
sql -d "$dbc" -c 'CREATE EXTENSION fence' || fail "CREATE EXTENSION fence"
sql -d "$dbs" -1 -f "$TOP/sql/hosted/fence_hosted.sql" >/dev/null || fail "the SQL edition's script"

# surface DB: one line an object or property, sorted
surface() {
	sql -d "$1" <<-'SQL' | grep -v -E '(fence\._|(relation|column|grant relation|comment relation) _)' | LC_ALL=C sort
		WITH f AS (SELECT p.oid, p.oid::regprocedure::text AS sig, p.proowner, p.proacl
		           FROM pg_proc p WHERE p.pronamespace = 'fence'::regnamespace),
		     r AS (SELECT c.oid, c.relname::text AS name, c.relkind, c.relowner, c.relacl
		           FROM pg_class c WHERE c.relnamespace = 'fence'::regnamespace)
		SELECT 'function ' || f.sig || ' returns ' || pg_get_function_result(f.oid)
		    || ' ' || p.provolatile::text || CASE WHEN p.prosecdef THEN ' security definer' ELSE '' END
		    || CASE WHEN p.proisstrict THEN ' strict' ELSE '' END
		FROM f JOIN pg_proc p ON p.oid = f.oid
		UNION ALL
		SELECT 'relation ' || name || ' ' || relkind::text FROM r
		UNION ALL
		SELECT 'column ' || r.name || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
		    || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
		FROM r JOIN pg_attribute a ON a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE r.relkind IN ('r', 'v', 'p')
		UNION ALL
		SELECT 'grant function ' || f.sig || ' to ' || CASE WHEN x.grantee = 0 THEN 'PUBLIC' ELSE x.grantee::regrole::text END
		    || ' ' || x.privilege_type
		FROM f, aclexplode(coalesce(f.proacl, acldefault('f', f.proowner))) x WHERE x.grantee <> f.proowner
		UNION ALL
		SELECT 'grant relation ' || r.name || ' to ' || CASE WHEN x.grantee = 0 THEN 'PUBLIC' ELSE x.grantee::regrole::text END
		    || ' ' || x.privilege_type
		FROM r, aclexplode(coalesce(r.relacl, acldefault('r', r.relowner))) x WHERE x.grantee <> r.relowner
		UNION ALL
		SELECT 'grant schema fence to ' || CASE WHEN x.grantee = 0 THEN 'PUBLIC' ELSE x.grantee::regrole::text END
		    || ' ' || x.privilege_type
		FROM pg_namespace n, aclexplode(coalesce(n.nspacl, acldefault('n', n.nspowner))) x
		WHERE n.nspname = 'fence' AND x.grantee <> n.nspowner
		UNION ALL
		SELECT 'comment function ' || f.sig || ': ' || coalesce(replace(obj_description(f.oid, 'pg_proc'), E'\n', '\n'), '(none)')
		FROM f
		UNION ALL
		SELECT 'comment relation ' || r.name || ': ' || coalesce(replace(obj_description(r.oid, 'pg_class'), E'\n', '\n'), '(none)')
		FROM r WHERE r.relkind IN ('r', 'v', 'p')
		UNION ALL
		SELECT 'comment column ' || r.name || '.' || a.attname || ': ' || replace(col_description(r.oid, a.attnum), E'\n', '\n')
		FROM r JOIN pg_attribute a ON a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE col_description(r.oid, a.attnum) IS NOT NULL
		UNION ALL
		SELECT 'comment schema fence: ' || coalesce(obj_description('fence'::regnamespace, 'pg_namespace'), '(none)')
		UNION ALL
		SELECT 'event trigger ' || evtname || ' on ' || evtevent || ' ' || evtfoid::regproc::text FROM pg_event_trigger
		UNION ALL
		SELECT 'type ' || t.typname || ' ' || t.typtype::text FROM pg_type t
		WHERE t.typnamespace = 'fence'::regnamespace AND t.typtype <> 'c' AND t.typname !~ '^_'
	SQL
}
surface "$dbc" >"$WORK/c" || fail "the C extension's surface"
surface "$dbs" >"$WORK/sql" || fail "the SQL edition's surface"
[ "$(grep -c '^function fence\.' "$WORK/c")" -ge 15 ] || fail "too few functions read: $(cat "$WORK/c")"
[ "$(grep -c '^function fence\.' "$WORK/sql")" -ge 15 ] || fail "too few functions read: $(cat "$WORK/sql")"

# The differences: "c: LINE" only the C extension has, "sql: LINE" only
# the SQL edition.
{
	LC_ALL=C comm -23 "$WORK/c" "$WORK/sql" | sed 's/^/c: /'
	LC_ALL=C comm -13 "$WORK/c" "$WORK/sql" | sed 's/^/sql: /'
} | LC_ALL=C sort >"$WORK/differences"

# The allow-list: the differences there are reasons for.
cat >"$WORK/allowed.txt" <<'ALLOWED'
# Refusal counts live in shared memory, which needs the C library preloaded
# (docs/hosted.md, the fence.stats row): the SQL edition has no fence.stats.
c: column stats.accepted bigint
c: column stats.invalid bigint
c: column stats.last_refusal timestamp with time zone
c: column stats.last_refused_token bigint
c: column stats.mark bigint
c: column stats.missing bigint
c: column stats.resource text
c: column stats.stale bigint
c: comment function fence.stats_counts(): Counts of accepted and refused tokens per resource since start or fence.stats_reset(), from shared memory; read them through fence.stats
c: comment function fence.stats_reset(): Administrators only: forget every count in fence.stats, in every database of the server
c: comment relation stats: Per resource: accepted checks, refusals by kind (stale LF001, missing LF002, invalid LF003), the last refusal and its token, and the committed mark; resource NULL counts the resources that found the table full (fence.stats_max_resources) and invalid names
c: function fence.stats_counts() returns SETOF record v
c: function fence.stats_reset() returns void v
c: grant function fence.stats_counts() to pg_monitor EXECUTE
c: grant relation stats to pg_monitor SELECT
c: relation stats v
# The DDL guard is an event trigger, which only a superuser may create
# (docs/hosted.md, the DDL guard row).
c: comment function fence.guard_ddl(): Event trigger that refuses DDL giving a table-mode protected table a parent (ATTACH PARTITION, INHERIT, hand-made guards) or a row guard a BEFORE ROW trigger that fires after it
c: event trigger fence_guard_ddl on ddl_command_end fence.guard_ddl
c: function fence.guard_ddl() returns event_trigger v
# PL/pgSQL has no VARIADIC "any": the SQL edition takes parameters of one
# common type (docs/hosted.md, the fenced_update row).
c: comment function fence.fenced_update(text,bigint,text,"any"): Accept token for resource, then run query with params bound to $1..$n; returns rows processed
c: comment function fence.fenced_update_many(text[],bigint[],text,"any"): Accept each token for its resource (in name order, all or none), then run query with params bound to $1..$n; returns rows processed
c: function fence.fenced_update(text,bigint,text,"any") returns bigint v
c: function fence.fenced_update_many(text[],bigint[],text,"any") returns bigint v
sql: comment function fence.fenced_update(text,bigint,text,anycompatiblearray): Accept token for resource, then run query with params (of one common type) bound to $1..$n; returns rows processed
sql: comment function fence.fenced_update_many(text[],bigint[],text,anycompatiblearray): Accept each token for its resource (in name order, all or none), then run query with params (of one common type) bound to $1..$n; returns rows processed
sql: function fence.fenced_update(text,bigint,text,anycompatiblearray) returns bigint v
sql: function fence.fenced_update_many(text[],bigint[],text,anycompatiblearray) returns bigint v
# Nobody may write fence.fences and fence.floors (docs/install.md): the C
# extension writes them from C, below the privilege checks; the SQL
# edition's functions that write them must run as their owner.
c: function fence.advance(text,bigint,text) returns bigint v
c: function fence.advance_many(text[],bigint[],text[]) returns bigint[] v
c: function fence.guard() returns trigger v
c: function fence.reset(text,bigint) returns bigint v
c: function fence.resync(text[],bigint[]) returns bigint v
sql: function fence.advance(text,bigint,text) returns bigint v security definer
sql: function fence.advance_many(text[],bigint[],text[]) returns bigint[] v security definer
sql: function fence.guard() returns trigger v security definer
sql: function fence.reset(text,bigint) returns bigint v security definer
sql: function fence.resync(text[],bigint[]) returns bigint v security definer
ALLOWED
grep -v -e '^#' -e '^$' "$WORK/allowed.txt" | LC_ALL=C sort >"$WORK/allowed"

unexplained=$(LC_ALL=C comm -23 "$WORK/differences" "$WORK/allowed")
stale=$(LC_ALL=C comm -13 "$WORK/differences" "$WORK/allowed")
say "$(wc -l <"$WORK/c") lines of the C extension's surface, $(wc -l <"$WORK/sql") of the SQL edition's, $(wc -l <"$WORK/differences") differences, $(wc -l <"$WORK/allowed") allowed"
[ -z "$unexplained" ] || fail "the editions differ where no reason is given (add the object to the other edition, or a reasoned entry here):
$unexplained"
[ -z "$stale" ] || fail "allowed differences that are no longer differences (remove them):
$stale"
say "the two editions expose the same objects, but for the reasoned allow-list"
