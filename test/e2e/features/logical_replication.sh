#!/usr/bin/env bash
# A protected table replicated by logical replication, with the workaround
# of docs/install.md on the subscriber.
#
# Subscribers apply changes in replica mode, where ENABLE ALWAYS triggers
# still fire: fence's guards would refuse the replicated rows (LF002), which
# were fenced on the publisher already.  docs/install.md says which
# command lets the subscriber apply them; this test runs that command as
# docs/install.md prints it, on a publisher and a subscriber database of one server of its
# own (wal_level = logical), each with the table protected.
#
# Must hold: rows inserted, updated, a TRUNCATE and rows inserted after it
# on the publisher (each with a valid token) all reach the subscriber, and
# its apply worker never fails.  The workaround used to name only
# fence_guard: fence_guard_truncate stayed ALWAYS, the TRUNCATE failed on
# the subscriber with LF002 for ever, and every later change of the
# subscription was stuck behind it (0.2.0).  On the subscriber,
# a local write still needs a token.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init logical_replication

pg_start -c wal_level=logical -c max_replication_slots=4 -c max_wal_senders=4
stop_own() { as_pg "$PG_BINDIR/pg_ctl" -D "$WORK/pgdata" -m immediate -w stop; }
E2E_ON_EXIT=stop_own
sql -c "CREATE DATABASE lr_pub" -c "CREATE DATABASE lr_sub"

# docs/install.md's command, for table t, with the table's name put in
workaround=$(sed -n '/<!-- subscriber workaround -->/,/^ *```$/p' "$TOP/docs/install.md" |
	sed -n 's/^ *\(ALTER TABLE .*\)/\1/p' | head -n1)
[ -n "$workaround" ] || fail "no subscriber workaround in docs/install.md"
workaround=${workaround/ALTER TABLE t /ALTER TABLE lr_stock }
say "docs/install.md's workaround: $workaround"

for d in lr_pub lr_sub; do
	sql -d "$d" <<-'SQL' >/dev/null
		CREATE EXTENSION fence;
		CREATE TABLE lr_stock (id int PRIMARY KEY, qty int NOT NULL);
		SELECT fence.protect('lr_stock', 'lr');
	SQL
done
sql -d lr_pub <<-'SQL' >/dev/null
	BEGIN;
	SELECT fence.advance('lr', 5);
	INSERT INTO lr_stock VALUES (1, 10), (2, 20);
	COMMIT;
	CREATE PUBLICATION lr_pub FOR TABLE lr_stock;
	SELECT pg_create_logical_replication_slot('lr_slot', 'pgoutput');
SQL
sql -d lr_sub -c "$workaround"
sql -d lr_sub -c "CREATE SUBSCRIPTION lr_sub CONNECTION 'host=$PGHOST port=$PGPORT user=$PGUSER dbname=lr_pub'
	PUBLICATION lr_pub WITH (create_slot = false, slot_name = 'lr_slot')"

rows() { sql -d lr_sub -c "SELECT coalesce(string_agg(id || '=' || qty, ' ' ORDER BY id), '') FROM lr_stock"; }
rows_are() { [ "$(rows)" = "$1" ]; }
# the apply and sync workers' failures: pg_stat_subscription_stats from
# PostgreSQL 15; before it, the workers that exited with an error, as the
# server log says (a failed worker exits with code 1 and is started again)
if [ "$(sql -d lr_sub -c "SHOW server_version_num")" -ge 150000 ]; then
	errors() { sql -d lr_sub -c "SELECT apply_error_count + sync_error_count FROM pg_stat_subscription_stats WHERE subname = 'lr_sub'"; }
else
	errors() { grep -c 'logical replication .*worker.* exited with exit code [1-9]' "$WORK/postgres.log"; }
fi
wait_rows() {
	local want=$1 t0=$SECONDS
	until rows_are "$want"; do
		((SECONDS - t0 < 60)) || fail "the subscriber has '$(rows)', not '$want' (apply errors: $(errors)): $(grep -E 'ERROR|LF00' "$WORK/postgres.log" | tail -n 3)"
		sleep 0.05
	done
}
wait_rows "1=10 2=20"
say "initial copy arrived"

sql -d lr_pub <<-'SQL' >/dev/null
	BEGIN;
	SELECT fence.advance('lr', 6);
	UPDATE lr_stock SET qty = qty - 1 WHERE id = 1;
	COMMIT;
	BEGIN;
	SELECT fence.advance('lr', 6);
	TRUNCATE lr_stock;
	COMMIT;
	BEGIN;
	SELECT fence.advance('lr', 7);
	INSERT INTO lr_stock VALUES (3, 30);
	COMMIT;
SQL
wait_rows "3=30"
[ "$(errors)" = 0 ] || fail "the apply worker failed $(errors) times"
say "UPDATE, TRUNCATE and the INSERT after it arrived, no apply error"

# the subscriber's own writers are still fenced
[ "$(sqlstate -d lr_sub -c "UPDATE lr_stock SET qty = 0")" = LF002 ] || fail "a local write without a token landed"
[ "$(sqlstate -d lr_sub -c "TRUNCATE lr_stock")" = LF002 ] || fail "a local TRUNCATE without a token landed"
say "local writes on the subscriber still need a token"
sql -d lr_sub -c "DROP SUBSCRIPTION lr_sub" >/dev/null
say "pass"
