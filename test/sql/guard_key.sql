-- The keyed guard: fence.protect(tbl, resource, key_column => col).  Each
-- row is its own resource, resource || ':' || key; an INSERT checks the new
-- key, a DELETE the old one, an UPDATE that moves a row both.

CREATE TABLE gk_orders (id int PRIMARY KEY, customer int, note text);
INSERT INTO gk_orders VALUES (1, 7, 'a'), (2, 7, 'b'), (3, 8, 'c');
SELECT fence.protect('gk_orders', 'cust', key_column => 'customer');
SELECT tgname, tgenabled, pg_catalog.pg_get_triggerdef(oid)
  FROM pg_trigger WHERE tgrelid = 'gk_orders'::regclass ORDER BY tgname;

-- The holder of cust:7 writes customer 7's rows ...
BEGIN;
SET LOCAL fence.resource = 'cust:7';
SET LOCAL fence.token = '5';
UPDATE gk_orders SET note = note || '+' WHERE customer = 7;
INSERT INTO gk_orders VALUES (4, 7, 'd');
DELETE FROM gk_orders WHERE id = 2;
COMMIT;
-- ... but not customer 8's: LF002 names the row's resource
BEGIN;
SET LOCAL fence.resource = 'cust:7';
SET LOCAL fence.token = '5';
UPDATE gk_orders SET note = 'x' WHERE customer = 8;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SET LOCAL fence.resource = 'cust:7';
SET LOCAL fence.token = '5';
INSERT INTO gk_orders VALUES (5, 8, 'e');
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SET LOCAL fence.resource = 'cust:7';
SET LOCAL fence.token = '5';
DELETE FROM gk_orders WHERE customer = 8;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
-- A statement that touches no row needs no token in this mode
UPDATE gk_orders SET note = 'x' WHERE customer = 9;
SELECT id, customer, note FROM gk_orders ORDER BY id;

-- An older token of cust:7 is refused; cust:8 has a mark of its own
SELECT fence.advance('cust:7', 6);
BEGIN;
SET LOCAL fence.resource = 'cust:7';
SET LOCAL fence.token = '5';
UPDATE gk_orders SET note = 'stale' WHERE id = 1;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SET LOCAL fence.resource = 'cust:8';
SET LOCAL fence.token = '5';
UPDATE gk_orders SET note = 'c+' WHERE id = 3;
COMMIT;
SELECT resource, token FROM fence.fences WHERE resource LIKE 'cust:%' ORDER BY resource;

-- Moving a row to another key needs the tokens of both keys
BEGIN;
SELECT fence.advance('cust:7', 6);
UPDATE gk_orders SET customer = 9 WHERE id = 1;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fence.advance('cust:9', 1);
UPDATE gk_orders SET customer = 9 WHERE id = 1;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fence.advance('cust:7', 6);
SELECT fence.advance('cust:9', 1);
UPDATE gk_orders SET customer = 9 WHERE id = 1;
COMMIT;
SELECT id, customer, note FROM gk_orders ORDER BY id;

-- Null keys: a row without a key belongs to no resource, and is refused
-- when written (null_value_not_allowed, 22004), even with a token
BEGIN;
SELECT fence.advance('cust:7', 6);
INSERT INTO gk_orders VALUES (6, NULL, 'f');
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fence.advance('cust:7', 6);
UPDATE gk_orders SET customer = NULL WHERE id = 4;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
-- ... and one that predates the guard cannot be updated or deleted through it
ALTER TABLE gk_orders DISABLE TRIGGER fence_guard;
INSERT INTO gk_orders VALUES (6, NULL, 'f');
ALTER TABLE gk_orders ENABLE ALWAYS TRIGGER fence_guard;
BEGIN;
SELECT fence.advance('cust:7', 6);
DELETE FROM gk_orders WHERE id = 6;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
-- Give it a key with the key's token, and it is an ordinary row again
ALTER TABLE gk_orders DISABLE TRIGGER fence_guard;
UPDATE gk_orders SET customer = 7 WHERE id = 6;
ALTER TABLE gk_orders ENABLE ALWAYS TRIGGER fence_guard;
BEGIN;
SELECT fence.advance('cust:7', 6);
DELETE FROM gk_orders WHERE id = 6;
COMMIT;

-- TRUNCATE has no rows to key on: it needs the token of the resource itself
BEGIN;
SELECT fence.advance('cust:7', 6);
TRUNCATE gk_orders;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fence.advance('cust', 1);
TRUNCATE gk_orders;
ROLLBACK;
SELECT count(*) FROM gk_orders;

-- One statement over many rows of one key checks the fence once: a
-- hundred thousand rows of line:1 leave one mark behind
CREATE TABLE gk_lines (id int, customer bigint, qty int);
SELECT fence.protect('gk_lines', 'line', key_column => 'customer');
BEGIN;
SET LOCAL fence.resource = 'line:1';
SET LOCAL fence.token = '3';
INSERT INTO gk_lines SELECT g, 1, 0 FROM generate_series(1, 100000) g;
UPDATE gk_lines SET qty = qty + 1;
COMMIT;
SELECT count(*), sum(qty) FROM gk_lines;
SELECT resource, token FROM fence.fences WHERE resource LIKE 'line%';
-- Many keys in one statement: each key is checked, with its own token
BEGIN;
SELECT count(fence.advance('line:' || g, 1)) FROM generate_series(2, 4) g;
INSERT INTO gk_lines SELECT g, g % 3 + 2, 0 FROM generate_series(1, 3000) g;
COMMIT;
BEGIN;
SELECT count(fence.advance('line:' || g, 2)) FROM generate_series(2, 3) g;
INSERT INTO gk_lines SELECT g, g % 3 + 2, 0 FROM generate_series(1, 3000) g;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
SELECT resource, token FROM fence.fences WHERE resource LIKE 'line%' ORDER BY resource;

-- Keys of any type with an output function, here text
CREATE TABLE gk_docs (path text, owner_id int, body text);
SELECT fence.protect('gk_docs', 'doc', key_column => 'path');
BEGIN;
SET LOCAL fence.resource = 'doc:/a/b';
SET LOCAL fence.token = '1';
INSERT INTO gk_docs VALUES ('/a/b', 1, 'x');
INSERT INTO gk_docs VALUES ('/a/c', 1, 'x');
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE

-- Keyed and stamped at once: the stamp is the token of the row's key, and
-- a moved row takes the new key's token
CREATE TABLE gk_acct (id int PRIMARY KEY, branch text, balance int, fence_token bigint);
SELECT fence.protect('gk_acct', 'branch', 'fence_token', 'branch');
BEGIN;
SELECT fence.advance('branch:north', 10);
SELECT fence.advance('branch:south', 20);
INSERT INTO gk_acct VALUES (1, 'north', 0, NULL), (2, 'south', 0, NULL);
UPDATE gk_acct SET branch = 'south' WHERE id = 1;
COMMIT;
SELECT id, branch, balance, fence_token FROM gk_acct ORDER BY id;

DROP TABLE gk_orders, gk_lines, gk_docs, gk_acct;
SELECT fence.reset(resource) FROM fence.fences
 WHERE resource ~ '^(cust|line|doc|branch)(:|$)' ORDER BY resource;
