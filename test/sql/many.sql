-- fence.advance_many and fence.fenced_update_many: the tokens of several
-- resources checked in one call, in the bytewise order of the names, all
-- or none, with the previous marks returned in the order given.

CREATE TABLE mn_acct (id text PRIMARY KEY, balance int NOT NULL);
INSERT INTO mn_acct VALUES ('a', 100), ('b', 100), ('c', 100);

-- Previous marks in the caller's order (0: no mark yet)
SELECT fence.advance('mn:b', 3);
SELECT fence.advance_many(ARRAY['mn:b', 'mn:a'], ARRAY[5, 7]);
SELECT resource, token, owner FROM fence.fences WHERE resource LIKE 'mn:%' ORDER BY 1;
-- with owners; a null owner is no owner
SELECT fence.advance_many(ARRAY['mn:a', 'mn:b', 'mn:c'], ARRAY[8, 5, 1],
                          ARRAY['o1', NULL, 'o3']);
SELECT resource, token, owner FROM fence.fences WHERE resource LIKE 'mn:%' ORDER BY 1;
-- nothing to do
SELECT fence.advance_many('{}', '{}');
-- the same resource twice with the same token: checked once, both answered
SELECT fence.advance_many(ARRAY['mn:c', 'mn:a', 'mn:c'], ARRAY[2, 8, 2]);

-- Bad input: nothing is advanced
SELECT fence.advance_many(ARRAY['mn:a', 'mn:b'], ARRAY[9]);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance_many(ARRAY['mn:a'], ARRAY[9], ARRAY['x', 'y']);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance_many(ARRAY['mn:a', NULL], ARRAY[9, 9]);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance_many(NULL, ARRAY[9]);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance_many(ARRAY['mn:a', 'mn:b'], ARRAY[9, NULL]);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance_many(ARRAY['mn:a'], NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance_many(ARRAY['mn:a', ''], ARRAY[9, 9]);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance_many(ARRAY[['mn:a'], ['mn:b']], ARRAY[[9], [9]]);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance_many(ARRAY['mn:a', 'mn:b', 'mn:a'], ARRAY[9, 9, 10]);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance_many(ARRAY['mn:a', 'mn:a'], ARRAY[9, 9], ARRAY['o1', 'o2']);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance_many(ARRAY['mn:a', 'mn:b'], ARRAY[9, 0]);
\echo :LAST_ERROR_SQLSTATE
SELECT resource, token, owner FROM fence.fences WHERE resource LIKE 'mn:%' ORDER BY 1;

-- All or none: a stale token on the second resource (in name order) leaves
-- the first unadvanced, and a stale one on the first stops before the second
SELECT fence.advance_many(ARRAY['mn:a', 'mn:b'], ARRAY[20, 4]);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance_many(ARRAY['mn:b', 'mn:a'], ARRAY[20, 7]);
\echo :LAST_ERROR_SQLSTATE
SELECT resource, token, owner FROM fence.fences WHERE resource LIKE 'mn:%' ORDER BY 1;
-- ... also inside a transaction that goes on after a caught error
BEGIN;
SAVEPOINT s;
SELECT fence.advance_many(ARRAY['mn:a', 'mn:b'], ARRAY[20, 4]);
ROLLBACK TO SAVEPOINT s;
SELECT fence.mark('mn:a');
COMMIT;

-- What advance_many registered is what the guard uses later in the same
-- transaction, before any setting
CREATE TABLE mn_g (id text PRIMARY KEY, balance int NOT NULL);
INSERT INTO mn_g SELECT * FROM mn_acct;
SELECT fence.protect('mn_g', 'mn', key_column => 'id');
BEGIN;
SELECT fence.advance_many(ARRAY['mn:b', 'mn:a'], ARRAY[6, 9], ARRAY['w', 'w']);
SET LOCAL fence.tokens = 'mn:a=8/o1,mn:b=5';
UPDATE mn_g SET balance = balance + CASE id WHEN 'a' THEN -5 ELSE 5 END
 WHERE id IN ('a', 'b');
-- mn:c was not registered: its entry in fence.tokens is used, and is stale
SET LOCAL fence.tokens = 'mn:c=1';
UPDATE mn_g SET balance = 0 WHERE id = 'c';
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fence.advance_many(ARRAY['mn:b', 'mn:a'], ARRAY[6, 9], ARRAY['w', 'w']);
UPDATE mn_g SET balance = balance + CASE id WHEN 'a' THEN -5 ELSE 5 END
 WHERE id IN ('a', 'b');
COMMIT;
SELECT * FROM mn_g ORDER BY id;
SELECT resource, token, owner FROM fence.fences WHERE resource LIKE 'mn:%' ORDER BY 1;

-- fenced_update_many: every check, then the statement
SELECT fence.fenced_update_many(ARRAY['mn:b', 'mn:a'], ARRAY[6, 9],
    'UPDATE mn_acct SET balance = balance + CASE id WHEN $1 THEN -$3 ELSE $3 END WHERE id IN ($1, $2)',
    'a', 'b', 10);
SELECT * FROM mn_acct ORDER BY id;
-- the three-argument form, and the overload for untyped parameters
SELECT fence.fenced_update_many(ARRAY['mn:a', 'mn:b'], ARRAY[9, 6],
    'UPDATE mn_acct SET balance = balance + 1');
PREPARE mn_untyped AS
  SELECT fence.fenced_update_many(ARRAY['mn:a', 'mn:b'], ARRAY[9, 6],
    'UPDATE mn_acct SET balance = balance - $2 WHERE id = $1', $1, $2);
EXECUTE mn_untyped('a', '1');
SELECT * FROM mn_acct ORDER BY id;
-- the owner of each resource comes from the settings, as for fenced_update
BEGIN;
SET LOCAL fence.tokens = 'mn:a=9/w,mn:b=6/intruder';
SELECT fence.fenced_update_many(ARRAY['mn:a', 'mn:b'], ARRAY[9, 6],
    'UPDATE mn_acct SET balance = 0');
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
-- a stale token on any resource: the statement does not run, no mark moves
SELECT fence.fenced_update_many(ARRAY['mn:a', 'mn:b'], ARRAY[10, 5],
    'UPDATE mn_acct SET balance = 0');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.fenced_update_many(ARRAY['mn:b', 'mn:a'], ARRAY[7, 8],
    'UPDATE mn_acct SET balance = 0');
\echo :LAST_ERROR_SQLSTATE
-- a statement that fails after the checks takes the advances with it
SELECT fence.fenced_update_many(ARRAY['mn:a', 'mn:b'], ARRAY[10, 7],
    'UPDATE mn_acct SET balance = 1 / 0');
\echo :LAST_ERROR_SQLSTATE
-- a statement that cannot run fails before the marks move
SELECT fence.fenced_update_many(ARRAY['mn:a', 'mn:b'], ARRAY[10, 7],
    'CREATE TABLE mn_x (i int)');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.fenced_update_many(ARRAY['mn:a', 'mn:b'], ARRAY[10, 7],
    'UPDATE mn_acct SET balance = $1', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mn_acct ORDER BY id;
SELECT resource, token, owner FROM fence.fences WHERE resource LIKE 'mn:%' ORDER BY 1;
-- bad arguments
SELECT fence.fenced_update_many(ARRAY['mn:a', 'mn:b'], ARRAY[10], 'SELECT 1');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.fenced_update_many(ARRAY['mn:a', 'mn:b'], ARRAY[10, 10], NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.fenced_update_many(ARRAY['mn:a', 'mn:a'], ARRAY[10, 11], 'SELECT 1');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.fenced_update_many('{}', '{}', 'UPDATE mn_acct SET balance = 0');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.fenced_update_many(NULL, ARRAY[10], 'SELECT 1');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.fenced_update_many(ARRAY['mn:a'], ARRAY[NULL::bigint], 'SELECT 1');
\echo :LAST_ERROR_SQLSTATE
-- and what it registered serves the guard later in the transaction
BEGIN;
SELECT fence.fenced_update_many(ARRAY['mn:b', 'mn:c'], ARRAY[7, 3],
    'UPDATE mn_acct SET balance = balance - 1 WHERE id = $1', 'b');
UPDATE mn_g SET balance = balance + 1 WHERE id IN ('b', 'c');
COMMIT;
SELECT * FROM mn_g ORDER BY id;

-- Not in a read-only transaction
BEGIN READ ONLY;
SELECT fence.advance_many(ARRAY['mn:a'], ARRAY[20]);
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN READ ONLY;
SELECT fence.fenced_update_many(ARRAY['mn:a'], ARRAY[20], 'SELECT 1');
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE

DROP TABLE mn_acct, mn_g;
DELETE FROM fence.fences;
