-- The registry of accepted tokens at scale: a transaction that fences many
-- resources keeps a small, fixed amount of memory per resource (24 bytes
-- and its share of an index: at most 32 bytes), the guard finds every one
-- of them, and a savepoint that rolls back takes exactly its own entries
-- and changes with it, however many.

CREATE TABLE reg (id int PRIMARY KEY, v int NOT NULL DEFAULT 0);
INSERT INTO reg (id) SELECT g FROM generate_series(1, 20000) g;
SELECT fence.protect('reg', 'reg', key_column => 'id');

BEGIN;
SELECT count(fence.advance(fence.key_resource('reg', g), 5)) FROM generate_series(1, 100000) g;
SELECT sum(total_bytes) / 100000 <= 32 AS at_most_32_bytes_per_resource
  FROM pg_backend_memory_contexts WHERE name = 'fence registry';
-- the guard finds each row's token without a setting
UPDATE reg SET v = v + 1;
COMMIT;
SELECT count(*) FROM reg WHERE v = 1;

-- A savepoint makes 10000 new entries (ids 20001 to 30000 have no row; the
-- advances make their marks) and moves 10000 old ones; its rollback drops
-- the new entries and gives the old ones back their tokens, and every
-- entry left is still found.
BEGIN;
SELECT count(fence.advance(fence.key_resource('reg', g), 6)) FROM generate_series(1, 20000) g;
SAVEPOINT s;
SELECT count(fence.advance(fence.key_resource('reg', g), 7)) FROM generate_series(10001, 30000) g;
ROLLBACK TO s;
-- rows 1 to 20000 are written with token 6, found in the registry
UPDATE reg SET v = v + 1;
-- a key whose entry the rollback dropped has no token here (LF002)
SAVEPOINT t;
INSERT INTO reg (id) VALUES (25000);
ROLLBACK TO t;
\echo :LAST_ERROR_SQLSTATE
COMMIT;
SELECT count(*) FROM reg WHERE v = 2;
SELECT token, count(*) FROM fence.fences
 WHERE resource LIKE 'reg:%' GROUP BY token ORDER BY token;

-- RELEASE keeps the savepoint's entries, a rollback of the parent takes
-- them and the parent's own
BEGIN;
SAVEPOINT a;
SELECT count(fence.advance(fence.key_resource('reg', g), 8)) FROM generate_series(1, 5000) g;
SAVEPOINT b;
SELECT count(fence.advance(fence.key_resource('reg', g), 9)) FROM generate_series(2501, 7500) g;
RELEASE b;
UPDATE reg SET v = v + 1 WHERE id <= 7500;
ROLLBACK TO a;
SAVEPOINT c;
UPDATE reg SET v = v + 1 WHERE id = 1;
ROLLBACK TO c;
\echo :LAST_ERROR_SQLSTATE
COMMIT;
SELECT count(*) FROM reg WHERE v = 3;

-- A transaction that made new marks inserts first: a resource that has a
-- mark is still checked against it
BEGIN;
SELECT fence.advance('reg-new-1', 1), fence.advance('reg-new-2', 1);
SELECT fence.advance(fence.key_resource('reg', 1), 5);
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fence.advance('reg-new-1', 1), fence.advance('reg-new-3', 1);
SELECT fence.advance(fence.key_resource('reg', 1), 10);
COMMIT;
SELECT token FROM fence.fences WHERE resource = fence.key_resource('reg', 1);

-- An index an administrator adds to fence.fences gets its entries too,
-- from inserts and from moves (which it keeps from being HOT); and
-- DROP INDEX works in the transaction that checked (no relation is held
-- open between checks).
CREATE INDEX fences_by_token ON fence.fences (token);
BEGIN;
SELECT fence.advance('reg-idx-' || g, 900 + g) FROM generate_series(1, 3) g;
SELECT fence.advance('reg-idx-1', 950);
COMMIT;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT resource, token FROM fence.fences WHERE token >= 900 ORDER BY token;
RESET enable_seqscan;
RESET enable_bitmapscan;
BEGIN;
SELECT fence.advance('reg-idx-1', 951);
DROP INDEX fence.fences_by_token;
SELECT fence.advance('reg-idx-1', 952);
COMMIT;

DROP TABLE reg;
DELETE FROM fence.fences WHERE resource LIKE 'reg%';
