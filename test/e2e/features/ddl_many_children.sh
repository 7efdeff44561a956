#!/usr/bin/env bash
# DDL on a table with a thousand partitions or inheritance children, by a
# role that may only create tables (no fence grants, nothing protected).
#
# Must hold: fence's event trigger neither crashes the backend nor the
# server.  It used to build its list of tables in SPI's memory, which
# SPI_finish() frees before the list is read: with this many children the
# list no longer fits a small chunk, the memory goes back to the system,
# and ALTER TABLE ... RENAME died with SIGSEGV, which restarts every
# backend of the cluster.  The test runs on a server of its own, so that
# such a crash does not take the shared server's sessions with it.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init ddl_many_children

pg_start
stop_own() { as_pg "$PG_BINDIR/pg_ctl" -D "$WORK/pgdata" -m immediate -w stop; }
E2E_ON_EXIT=stop_own
sql -c "CREATE EXTENSION fence"
sql <<-'SQL'
	CREATE ROLE ddl_plain LOGIN;
	GRANT CREATE ON SCHEMA public TO ddl_plain;
SQL
started=$(sql -c "SELECT pg_postmaster_start_time()")

PGUSER=ddl_plain sql <<-'SQL'
	CREATE TABLE parted (id int, v int) PARTITION BY RANGE (id);
	DO $$ BEGIN
		FOR i IN 1..1000 LOOP
			EXECUTE format('CREATE TABLE parted_%s PARTITION OF parted FOR VALUES FROM (%s) TO (%s)', i, i, i + 1);
		END LOOP;
	END $$;
	CREATE TABLE base (id int, v int);
	DO $$ BEGIN
		FOR i IN 1..1000 LOOP
			EXECUTE format('CREATE TABLE base_%s () INHERITS (base)', i);
		END LOOP;
	END $$;
SQL
say "1000 partitions and 1000 inheritance children made"

# each statement in one session that must survive it: its pid is the same after
for stmt in "ALTER TABLE parted RENAME COLUMN v TO w" "ALTER TABLE parted RENAME TO parted2" \
	"ALTER TABLE base RENAME COLUMN v TO w" "ALTER TABLE base ADD COLUMN x int" \
	"CREATE TRIGGER nothing AFTER INSERT ON parted2 FOR EACH ROW EXECUTE FUNCTION suppress_redundant_updates_trigger()"; do
	out=$(PGUSER=ddl_plain psql -X -qAt -v ON_ERROR_STOP=1 -c "SELECT pg_backend_pid()" -c "$stmt" \
		-c "SELECT pg_backend_pid()" 2>&1) || fail "$stmt: $out"
	[ "$(sed -n 1p <<<"$out")" = "$(sed -n 2p <<<"$out")" ] || fail "$stmt: the session did not survive: $out"
done
[ "$(sql -c "SELECT pg_postmaster_start_time()")" = "$started" ] || fail "the server restarted"
! grep -q 'terminated by signal' "$WORK/postgres.log" || fail "a backend died: $(grep 'terminated by signal' "$WORK/postgres.log")"
say "ALTER TABLE and CREATE TRIGGER on 1000 children: no backend died"
say "pass"
