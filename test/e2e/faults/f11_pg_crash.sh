#!/usr/bin/env bash
# F11: PostgreSQL crashes right after an acknowledged announce, with
# synchronous_commit = off in the session.
#
# A server of the test's own (it is killed): fence preloaded, autovacuum
# off, and its WAL writer stopped with SIGSTOP, so that nothing but a
# commit's own flush puts WAL on disk before the crash.  Holder A wrote
# with token 1 on two resources.  Holder B, whose session runs with
# synchronous_commit = off, announces token 2: on f11:adv with
# fence.advance (then SET LOCAL synchronous_commit = off, after the write
# and before COMMIT), on f11:stock with the first guarded write under
# token 2.  Both commits are acknowledged; then every process of the server
# is killed with SIGKILL, and the server restarts (crash recovery).
#
# Must hold: both marks are at token 2, owner B, after the restart, and A's
# token 1 is refused with LF001 on both.
# Negative controls, after B's announces and before the crash, in the same
# session: a plain insert into a table without a fence, and B's second
# write with the unchanged token 2 (which moves no mark and keeps the
# session's synchronous_commit), both acknowledged, are both lost by the
# crash: the set-up really loses what was committed without a flush.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init f11

pg_node_init crash -c shared_preload_libraries=fence -c autovacuum=off \
	-c wal_writer_delay=10s -c synchronous_commit=on
pg_node_up crash
on() { node_sql crash "$@"; }
on -c 'CREATE EXTENSION fence' \
	-c 'CREATE TABLE f11_stock (id int PRIMARY KEY, qty int NOT NULL)' \
	-c 'CREATE TABLE f11_plain (id int PRIMARY KEY)' \
	-c 'INSERT INTO f11_stock VALUES (1, 100), (2, 100)' \
	-c "SELECT fence.protect('f11_stock', 'f11:stock')" >/dev/null
# A holds token 1 on both (committed durably, the default)
on -c "SELECT fence.advance('f11:adv', 1, 'A')" >/dev/null
PGOPTIONS="-c fence.resource=f11:stock -c fence.token=1 -c fence.owner=A" \
	on -c 'UPDATE f11_stock SET qty = 99 WHERE id = 1' >/dev/null

walwriter=$(on -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'walwriter'")
[ -n "$walwriter" ] || fail "no walwriter found"
kill -STOP "$walwriter"
say "walwriter $walwriter stopped"

# B's session: synchronous_commit = off for the whole connection
out=$(PGOPTIONS="-c synchronous_commit=off -c fence.resource=f11:stock -c fence.token=2 -c fence.owner=B" on <<-'SQL'
	SHOW synchronous_commit;
	BEGIN;
	SELECT fence.advance('f11:adv', 2, 'B');
	SET LOCAL synchronous_commit = off;
	COMMIT;
	UPDATE f11_stock SET qty = 50 WHERE id = 1;
	INSERT INTO f11_plain VALUES (1);
	UPDATE f11_stock SET qty = 40 WHERE id = 2;
	SELECT 'acknowledged';
SQL
) || fail "B's session failed: $out"
case $out in *acknowledged*) ;; *) fail "B's session was not acknowledged: $out" ;; esac
say "B's announces acknowledged; killing every PostgreSQL process"
pg_node_crash crash
as_pg "$PG_BINDIR/pg_ctl" -D "$WORK/crash" -l "$WORK/crash.log" -w -t 60 start >/dev/null 2>&1 ||
	{ cat "$WORK/crash.log"; fail "the server did not restart"; }

marks=$(on -c "SELECT resource || '=' || token || '/' || owner FROM fence.fences ORDER BY resource")
say "marks after the crash: $(echo $marks)"
[ "$(on -c "SELECT token || '/' || owner FROM fence.fences WHERE resource = 'f11:adv'")" = 2/B ] ||
	fail "the mark of f11:adv announced with fence.advance was lost: $marks"
[ "$(on -c "SELECT token || '/' || owner FROM fence.fences WHERE resource = 'f11:stock'")" = 2/B ] ||
	fail "the mark of f11:stock moved by B's first guarded write was lost: $marks"
[ "$(on -c 'SELECT qty FROM f11_stock WHERE id = 1')" = 50 ] ||
	fail "B's first guarded write (token 2, which moved the mark) was lost"

state=$(on -v VERBOSITY=verbose -c "SELECT fence.advance('f11:adv', 1, 'A')" 2>&1 || true)
case $state in *LF001*) ;; *) fail "A's token 1 on f11:adv was not refused with LF001: $state" ;; esac
state=$(PGOPTIONS="-c fence.resource=f11:stock -c fence.token=1 -c fence.owner=A" \
	on -v VERBOSITY=verbose -c 'UPDATE f11_stock SET qty = 1 WHERE id = 1' 2>&1 || true)
case $state in *LF001*) ;; *) fail "A's token 1 on f11:stock was not refused with LF001: $state" ;; esac
say "A's token 1 refused on both resources"

# negative controls: what committed without a flush is gone
[ "$(on -c 'SELECT count(*) FROM f11_plain')" = 0 ] ||
	fail "negative control: the plain insert committed with synchronous_commit = off survived the crash (the set-up does not lose unflushed commits)"
[ "$(on -c 'SELECT qty FROM f11_stock WHERE id = 2')" = 100 ] ||
	fail "B's write with the unchanged token 2 survived the crash: it was committed durably, not with the session's synchronous_commit = off"
say "negative controls: the unfenced insert and the write under an unchanged mark were lost, as committed"
say "pass"
