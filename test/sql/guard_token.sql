-- The stamping guard: fence.protect(tbl, resource, token_column => col).
-- Every written row gets the accepted token in that column, and a write
-- that carries a lower token than the row holds is refused, even when the
-- fence itself was lowered by an administrator.

CREATE TABLE gtk_jobs (id int PRIMARY KEY, state text, fence_token bigint);
INSERT INTO gtk_jobs VALUES (1, 'new', NULL), (2, 'new', NULL);
SELECT fence.protect('gtk_jobs', 'jobs', 'fence_token');
SELECT tgname, tgenabled, pg_catalog.pg_get_triggerdef(oid)
  FROM pg_trigger WHERE tgrelid = 'gtk_jobs'::regclass ORDER BY tgname;

-- No token: LF002
UPDATE gtk_jobs SET state = 'running';
\echo :LAST_ERROR_SQLSTATE

-- Token 7 is stamped on UPDATE and INSERT; a value the writer supplies for
-- the column is overwritten, so it cannot claim a higher token
BEGIN;
SET LOCAL fence.resource = 'jobs';
SET LOCAL fence.token = '7';
UPDATE gtk_jobs SET state = 'running' WHERE id = 1;
INSERT INTO gtk_jobs VALUES (3, 'new', 1000);
UPDATE gtk_jobs SET fence_token = 999 WHERE id = 2;
COMMIT;
SELECT id, state, fence_token FROM gtk_jobs ORDER BY id;

-- An older token is refused by the fence
BEGIN;
SET LOCAL fence.resource = 'jobs';
SET LOCAL fence.token = '6';
UPDATE gtk_jobs SET state = 'stale' WHERE id = 1;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE

-- An administrator lowers the fence (say, after the token counter was
-- lost).  Token 6 now passes the fence, and may write new rows ...
SELECT fence.reset('jobs', 5);
BEGIN;
SET LOCAL fence.resource = 'jobs';
SET LOCAL fence.token = '6';
INSERT INTO gtk_jobs VALUES (4, 'new', NULL);
COMMIT;
-- ... but rows stamped 7 never go back to token 6: not by UPDATE ...
BEGIN;
SET LOCAL fence.resource = 'jobs';
SET LOCAL fence.token = '6';
UPDATE gtk_jobs SET state = 'stale' WHERE id = 1;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
-- ... nor by DELETE
BEGIN;
SET LOCAL fence.resource = 'jobs';
SET LOCAL fence.token = '6';
DELETE FROM gtk_jobs WHERE id = 1;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
-- while the row stamped 6 (and equal tokens generally) can be written
BEGIN;
SET LOCAL fence.resource = 'jobs';
SET LOCAL fence.token = '6';
UPDATE gtk_jobs SET state = 'running' WHERE id = 4;
COMMIT;
-- Token 8 writes all of them
BEGIN;
SET LOCAL fence.resource = 'jobs';
SET LOCAL fence.token = '8';
UPDATE gtk_jobs SET state = 'done' WHERE id IN (1, 4);
DELETE FROM gtk_jobs WHERE id = 2;
COMMIT;
SELECT id, state, fence_token FROM gtk_jobs ORDER BY id;
SELECT resource, token FROM fence.fences WHERE resource = 'jobs';

-- A row without a token (written before protect) is anyone's with a token
ALTER TABLE gtk_jobs DISABLE TRIGGER fence_guard;
INSERT INTO gtk_jobs VALUES (5, 'old', NULL);
ALTER TABLE gtk_jobs ENABLE ALWAYS TRIGGER fence_guard;
BEGIN;
SELECT fence.advance('jobs', 8);
UPDATE gtk_jobs SET state = 'done' WHERE id = 5;
COMMIT;
SELECT id, state, fence_token FROM gtk_jobs WHERE id = 5;

-- TRUNCATE is fenced by the resource
TRUNCATE gtk_jobs;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fence.advance('jobs', 8);
TRUNCATE gtk_jobs;
ROLLBACK;

-- A bulk UPDATE stamps every row and checks the fence once
INSERT INTO gtk_jobs SELECT g, 'bulk', NULL FROM generate_series(100, 20099) g;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SET LOCAL fence.resource = 'jobs';
SET LOCAL fence.token = '9';
INSERT INTO gtk_jobs SELECT g, 'bulk', NULL FROM generate_series(100, 20099) g;
UPDATE gtk_jobs SET state = 'bulk2' WHERE id >= 100;
COMMIT;
SELECT state, fence_token, count(*) FROM gtk_jobs GROUP BY 1, 2 ORDER BY 1, 2;

-- INSERT ... ON CONFLICT DO UPDATE stamps both the inserted and the
-- updated row
BEGIN;
SET LOCAL fence.resource = 'jobs';
SET LOCAL fence.token = '10';
INSERT INTO gtk_jobs VALUES (1, 'upsert', 1) ON CONFLICT (id) DO UPDATE SET state = 'upsert';
INSERT INTO gtk_jobs VALUES (6, 'upsert', 1) ON CONFLICT (id) DO UPDATE SET state = 'upsert';
COMMIT;
SELECT id, state, fence_token FROM gtk_jobs WHERE state = 'upsert' ORDER BY id;

-- The stamp lands in the right place whatever precedes the column: long
-- and short text, nulls, a dropped column; and in a column added after the
-- row was written (its value then comes from the column's default)
CREATE TABLE gtk_shape (a text, b int, c smallint, tok bigint, d text);
INSERT INTO gtk_shape VALUES (repeat('x', 300), 1, 1, 5, 'tail'),
    (NULL, NULL, 2, 5, NULL), ('y', 1, NULL, 5, 'z'), ('q', 2, 4, NULL, 'n');
ALTER TABLE gtk_shape DROP COLUMN b;
ALTER TABLE gtk_shape ADD COLUMN tok2 bigint DEFAULT 42;
SELECT fence.protect('gtk_shape', 'shape', 'tok');
BEGIN;
SELECT fence.advance('shape', 9);
UPDATE gtk_shape SET d = coalesce(d, '') || '!';
COMMIT;
SELECT length(a), c, tok, d, tok2 FROM gtk_shape ORDER BY c NULLS LAST;
SELECT fence.unprotect('gtk_shape');
SELECT fence.protect('gtk_shape', 'shape2', 'tok2');
BEGIN;
SELECT fence.advance('shape2', 41);
UPDATE gtk_shape SET d = d || '?';
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fence.advance('shape2', 43);
UPDATE gtk_shape SET d = d || '?';
COMMIT;
SELECT length(a), c, tok, d, tok2 FROM gtk_shape ORDER BY c NULLS LAST;

DROP TABLE gtk_jobs, gtk_shape;
SELECT fence.reset('jobs'), fence.reset('shape'), fence.reset('shape2');
