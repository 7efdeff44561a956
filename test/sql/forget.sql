-- fence.forget(older_than): marks that have not moved for longer than
-- older_than are deleted, and the floor of each one's prefix is raised to
-- it, so that no token at or below a forgotten mark is accepted again, in
-- any mode: fence.advance, fence.fenced_update, their _many forms, and the
-- guard (under fence.resource or fence.tokens) in table,
-- key and token-column mode.  A new resource under a prefix with a floor
-- starts above it.

-- The prefix: up to the last ':' that no backslash escapes, '' if none; a
-- key-mode row's prefix is its table's resource, whatever its key holds
SELECT r AS resource, fence.floor_prefix(r) AS prefix
  FROM (VALUES ('inv:7'), ('inv'), ('app:orders:7'), (fence.key_resource('doc', 'a:b\c')),
               ('a\\:b'), ('x\:7'), (':7'), ('inv:')) v(r);
SELECT fence.floor_prefix(NULL);

-- Bad input: nothing is forgotten
SELECT fence.advance('fg:bad', 3);
SELECT fence.forget(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.forget('-1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.forget('1 month -40 days');
\echo :LAST_ERROR_SQLSTATE
SELECT resource, token FROM fence.fences WHERE resource = 'fg:bad';

-- Marks that moved a while ago, and some that moved just now
CREATE TABLE fg_tbl (id int PRIMARY KEY, n int);
INSERT INTO fg_tbl VALUES (1, 0);
SELECT fence.protect('fg_tbl', 'fg:tbl');
CREATE TABLE fg_keyed (id int PRIMARY KEY, n int);
INSERT INTO fg_keyed VALUES (1, 0), (2, 0);
SELECT fence.protect('fg_keyed', 'fgk', key_column => 'id');
CREATE TABLE fg_log (n int);
CREATE TABLE fg_stamped (id int PRIMARY KEY, n int, tok bigint);
INSERT INTO fg_stamped VALUES (1, 0, NULL);
SELECT fence.protect('fg_stamped', 'fgs:jobs', token_column => 'tok');
BEGIN;
SELECT fence.advance('fg:tbl', 30, 'w1');
UPDATE fg_tbl SET n = n + 1;
SELECT fence.advance('fgk:1', 12, 'w1');
SELECT fence.advance('fgk:2', 40);
UPDATE fg_keyed SET n = n + 1;
SELECT fence.advance('fgs:jobs', 9);
UPDATE fg_stamped SET n = n + 1;
SELECT fence.fenced_update('fg:upd', 50, 'INSERT INTO fg_log VALUES ($1)', 50);
SELECT fence.advance('fg:keep', 70);
COMMIT;
UPDATE fence.fences SET updated_at = updated_at - interval '2 days'
 WHERE resource IN ('fg:tbl', 'fgk:1', 'fgk:2', 'fgs:jobs', 'fg:upd');
SELECT fence.advance('fg:young', 60);
UPDATE fence.fences SET updated_at = updated_at - interval '1 hour'
 WHERE resource IN ('fg:young', 'fg:bad');
-- fg:keep moves now, after it aged: it is kept
UPDATE fence.fences SET updated_at = updated_at - interval '2 days' WHERE resource = 'fg:keep';
SELECT fence.advance('fg:keep', 71);

-- Returns how many it forgot; the floors hold the highest per prefix
SELECT fence.forget('1 day');
SELECT resource, token FROM fence.fences WHERE resource LIKE 'fg%' ORDER BY resource;
SELECT prefix, token FROM fence.floors ORDER BY prefix;
SELECT fence.forget('1 day');

-- A stale writer of a forgotten resource is refused, in every mode, even
-- with the forgotten mark's own token and owner
SELECT fence.advance('fg:tbl', 30, 'w1');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance('fg:tbl', 29);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.fenced_update('fg:upd', 50, 'INSERT INTO fg_log VALUES ($1)', 50);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance_many('{fg:fresh,fg:tbl}', '{100,30}');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.fenced_update_many('{fg:upd,fg:fresh}', '{50,100}', 'INSERT INTO fg_log VALUES (1)');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS fresh_marks FROM fence.fences WHERE resource = 'fg:fresh';
BEGIN;
SET LOCAL fence.tokens = 'fg:tbl=30';
UPDATE fg_tbl SET n = n + 1;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SET LOCAL fence.resource = 'fg:tbl';
SET LOCAL fence.token = '30';
UPDATE fg_tbl SET n = n + 1;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SET LOCAL fence.resource = 'fgk:1';
SET LOCAL fence.token = '12';
UPDATE fg_keyed SET n = n + 1 WHERE id = 1;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
-- key 1's own mark was 12, but the floor of its table is key 2's 40
BEGIN;
SET LOCAL fence.resource = 'fgk:1';
SET LOCAL fence.token = '39';
UPDATE fg_keyed SET n = n + 1 WHERE id = 1;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SET LOCAL fence.resource = 'fgs:jobs';
SET LOCAL fence.token = '9';
UPDATE fg_stamped SET n = n + 1;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
-- nothing was written, no mark made
SELECT resource, token FROM fence.fences WHERE resource LIKE 'fg%' ORDER BY resource;
SELECT 'tbl' AS t, n FROM fg_tbl UNION ALL SELECT 'keyed', n FROM fg_keyed
 UNION ALL SELECT 'stamped', n FROM fg_stamped UNION ALL SELECT 'log', n FROM fg_log ORDER BY 1, 2;

-- fence.mark reports the floor for a resource without a mark, the mark
-- otherwise: what a client lifts its token counter to
SELECT fence.mark('fgk:1') AS forgotten, fence.mark('fgk:3') AS new_key,
       fence.mark('fg:young') AS marked, fence.mark('nofloor:1') AS none;

-- A token above the floor is accepted and makes the mark again; a new key
-- under the prefix starts above the floor too
BEGIN;
SET LOCAL fence.resource = 'fgk:1';
SET LOCAL fence.token = '41';
UPDATE fg_keyed SET n = n + 1 WHERE id = 1;
COMMIT;
SELECT fence.advance('fgk:3', 1);
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SET LOCAL fence.resource = 'fgk:3';
SET LOCAL fence.token = '41';
INSERT INTO fg_keyed VALUES (3, 0);
COMMIT;
BEGIN;
SET LOCAL fence.resource = 'fgs:jobs';
SET LOCAL fence.token = '31';
UPDATE fg_stamped SET n = n + 1;
COMMIT;
SELECT fence.fenced_update('fg:upd', 51, 'INSERT INTO fg_log VALUES ($1)', 51);
SELECT fence.advance('fg:tbl', 52, 'w2');
SELECT id, n, tok FROM fg_stamped;
SELECT n FROM fg_log ORDER BY n;
SELECT resource, token, owner FROM fence.fences WHERE resource LIKE 'fg%' ORDER BY resource;
-- and the mark, once made, is what counts: its equal token is accepted
SELECT fence.advance('fg:tbl', 52, 'w2');

-- Several first marks in one transaction (made after a first mark, they
-- are inserted before they are looked up): each is checked against its floor
BEGIN;
SELECT fence.advance('fg:n1', 71);
SELECT fence.advance('fg:n2', 50);
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
SELECT resource FROM fence.fences WHERE resource IN ('fg:n1', 'fg:n2');

-- Floors are never lowered: forgetting a lower mark under the prefix
-- keeps the floor
SELECT fence.advance('fgk:9', 45);
UPDATE fence.fences SET updated_at = updated_at - interval '2 days' WHERE resource = 'fgk:9';
SELECT fence.forget('1 day');
SELECT prefix, token FROM fence.floors WHERE prefix = 'fgk';
SELECT fence.advance('fgk:9', 45);
\echo :LAST_ERROR_SQLSTATE

-- fence.max_step counts from the floor for a resource without a mark
SET fence.max_step = 5;
SELECT fence.advance('fgk:10', 46);
SELECT fence.advance('fgk:11', 51);
\echo :LAST_ERROR_SQLSTATE
RESET fence.max_step;

-- fence.reset leaves the floors alone: a mark it sets counts, even below
-- the floor; removing the mark falls back to the floor
SELECT fence.reset('fgk:12', 2);
SELECT fence.advance('fgk:12', 3);
SELECT fence.reset('fgk:12');
SELECT fence.advance('fgk:12', 4);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.mark('fgk:12');
SELECT prefix, token FROM fence.floors ORDER BY prefix;

-- older_than 0 forgets every mark of earlier transactions, and nothing
-- this transaction made or moved
BEGIN;
SELECT fence.advance('fgnow', 1);
SELECT fence.forget('0') > 0 AS forgot_some;
SELECT resource FROM fence.fences WHERE resource = 'fgnow';
ROLLBACK;

-- The prefix '' is that of names without ':'
SELECT fence.advance('fgplain', 8);
UPDATE fence.fences SET updated_at = updated_at - interval '2 days' WHERE resource = 'fgplain';
SELECT fence.forget('1 day');
SELECT prefix, token FROM fence.floors WHERE prefix = '';
SELECT fence.advance('fgplain', 8);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance('fgplain2', 8);
\echo :LAST_ERROR_SQLSTATE

-- Clean up: the floors would hold for the tests that follow
DROP TABLE fg_tbl, fg_keyed, fg_stamped, fg_log;
SELECT count(fence.reset(resource)) FROM fence.fences WHERE resource LIKE 'fg%';
DELETE FROM fence.floors;
