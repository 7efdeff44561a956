#!/usr/bin/env bash
# bench/s16_durable_announce.sh: scenario 16, what a durable announce
# costs with synchronous_commit = off in the session (the bench server's
# setting, bench/run.sh).
#
#   plain        UPDATE of one row, autocommit, synchronous_commit = off:
#                an announce's write committed as the session asks, which
#                is how announces committed before 0.3.0         baseline
#   plain_sync   the same with synchronous_commit = on (PGOPTIONS): the
#                WAL flush every durable commit waits for
#   announce     SELECT fence.advance(R, T) with a new T each time: moves
#                the mark, so its commit is made durable (extension/marks.c)
#
# Each pgbench client announces on its own resource "b16:<client>".
set -euo pipefail
. "$(dirname "$0")/lib.sh"

log "s16: a durable announce vs an announce's write committed with synchronous_commit = off"
sql >/dev/null <<SQL
CREATE SCHEMA IF NOT EXISTS bench;
DROP TABLE IF EXISTS bench.b16_marks;
DROP SEQUENCE IF EXISTS bench.b16_tokens;
CREATE SEQUENCE bench.b16_tokens;
CREATE TABLE bench.b16_marks (id int PRIMARY KEY, token bigint NOT NULL) WITH (fillfactor = 70);
INSERT INTO bench.b16_marks SELECT c, 0 FROM generate_series(0, $CLIENTS - 1) c;
SELECT fence.advance('b16:' || c, nextval('bench.b16_tokens')) FROM generate_series(0, $CLIENTS - 1) c;
SQL

run_variant() {
	case $1 in
	plain) record s16 plain "$(pgb announce_plain.pgbench)" ;;
	plain_sync) record s16 plain_sync "$(PGOPTIONS='-c synchronous_commit=on' pgb announce_plain.pgbench)" ;;
	announce) record s16 announce "$(pgb announce_durable.pgbench)" ;;
	esac
}

interleave run_variant plain plain_sync announce

plain=$(median s16 plain)
row 16 "plain one-row UPDATE, synchronous_commit = off (an announce's write as the session commits it)" "$plain" tx/s
row 16 "the same, synchronous_commit = on (the flush) vs off" "$(median s16 plain_sync)" tx/s "off" "$plain" "" "$(pratio s16 plain_sync plain)"
row 16 "durable fence.advance moving the mark, session off, vs plain off" "$(median s16 announce)" tx/s "off" "$plain" "" "$(pratio s16 announce plain)"
row_vs 16 "durable fence.advance vs plain UPDATE with synchronous_commit = on" tx/s announce plain_sync "on"
note "Scenario 16: pgbench -M prepared, $CLIENTS clients, $CORES threads, ${SECS}s per run, $ROUNDS runs each, one resource per client; the server at synchronous_commit = off and fsync = on, so the announce's commit waits for a WAL flush (to disk) that the plain UPDATE at off does not; concurrent commits share flushes (group commit)."
