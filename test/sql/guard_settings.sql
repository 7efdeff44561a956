-- How the token reaches the guard: what fence.advance registered in this
-- transaction, else the settings fence.resource, fence.token and fence.owner
-- (SET LOCAL, SET, or the connection's options as PGOPTIONS sets them).
-- fence.token is parsed strictly: anything but a plain positive number is
-- LF003, never read as some other number.

CREATE TABLE gs_items (id int PRIMARY KEY, v int);
SELECT fence.protect('gs_items', 'gs');

-- SET LOCAL lasts for the transaction ...
BEGIN;
SET LOCAL fence.resource = 'gs';
SET LOCAL fence.token = '10';
INSERT INTO gs_items VALUES (1, 0);
COMMIT;
UPDATE gs_items SET v = 1;
\echo :LAST_ERROR_SQLSTATE

-- ... SET for the session, until RESET
SET fence.resource = 'gs';
SET fence.token = '10';
UPDATE gs_items SET v = 1;
UPDATE gs_items SET v = 2;
RESET fence.token;
UPDATE gs_items SET v = 3;
\echo :LAST_ERROR_SQLSTATE
RESET fence.resource;

-- fence.token without fence.resource counts for nothing: a session must say
-- which resource its token is for
SET fence.token = '10';
UPDATE gs_items SET v = 3;
\echo :LAST_ERROR_SQLSTATE
RESET fence.token;

-- fence.owner travels with the token: the same token from another owner is
-- one that the lock service issued twice (LF001)
BEGIN;
SET LOCAL fence.resource = 'gs';
SET LOCAL fence.token = '11';
SET LOCAL fence.owner = 'worker-a';
UPDATE gs_items SET v = 11;
COMMIT;
SELECT resource, token, owner FROM fence.fences WHERE resource = 'gs';
BEGIN;
SET LOCAL fence.resource = 'gs';
SET LOCAL fence.token = '11';
SET LOCAL fence.owner = 'worker-b';
UPDATE gs_items SET v = 12;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SET LOCAL fence.resource = 'gs';
SET LOCAL fence.token = '11';
SET LOCAL fence.owner = 'worker-a';
UPDATE gs_items SET v = 12;
COMMIT;

-- A token registered by fence.advance in the transaction comes first: the
-- settings are not consulted for that resource
BEGIN;
SELECT fence.advance('gs', 12);
SET LOCAL fence.resource = 'gs';
SET LOCAL fence.token = '13';
UPDATE gs_items SET v = 13;
COMMIT;
SELECT resource, token, owner FROM fence.fences WHERE resource = 'gs';

-- Strict parsing: each of these is LF003 and writes nothing
SET fence.resource = 'gs';
SET fence.token = '12abc';
UPDATE gs_items SET v = 0;
\echo :LAST_ERROR_SQLSTATE
SET fence.token = '';
UPDATE gs_items SET v = 0;
\echo :LAST_ERROR_SQLSTATE
SET fence.token = ' 13';
UPDATE gs_items SET v = 0;
\echo :LAST_ERROR_SQLSTATE
SET fence.token = '13 ';
UPDATE gs_items SET v = 0;
\echo :LAST_ERROR_SQLSTATE
SET fence.token = '+13';
UPDATE gs_items SET v = 0;
\echo :LAST_ERROR_SQLSTATE
SET fence.token = '-1';
UPDATE gs_items SET v = 0;
\echo :LAST_ERROR_SQLSTATE
SET fence.token = '0';
UPDATE gs_items SET v = 0;
\echo :LAST_ERROR_SQLSTATE
SET fence.token = '1e3';
UPDATE gs_items SET v = 0;
\echo :LAST_ERROR_SQLSTATE
SET fence.token = '0x20';
UPDATE gs_items SET v = 0;
\echo :LAST_ERROR_SQLSTATE
SET fence.token = '9223372036854775808';
UPDATE gs_items SET v = 0;
\echo :LAST_ERROR_SQLSTATE
SET fence.token = '99999999999999999999999';
UPDATE gs_items SET v = 0;
\echo :LAST_ERROR_SQLSTATE
SELECT id, v FROM gs_items;
SELECT resource, token FROM fence.fences WHERE resource = 'gs';
-- ... while a plain number is read as itself, up to 2^63 - 1
SET fence.token = '13';
UPDATE gs_items SET v = 13;
BEGIN;
SET LOCAL fence.token = '9223372036854775807';
UPDATE gs_items SET v = 14;
SELECT resource, token FROM fence.fences WHERE resource = 'gs';
ROLLBACK;
RESET fence.resource;
RESET fence.token;

-- The connection's options, as PGOPTIONS='-c fence.resource=... -c
-- fence.token=...' or "fence run" set them: a client fenced without a
-- single change to its SQL
\c -reuse-previous=on "options='-c fence.resource=gs -c fence.token=14'"
SHOW fence.resource;
SHOW fence.token;
UPDATE gs_items SET v = 14;
SELECT resource, token FROM fence.fences WHERE resource = 'gs';
-- an older token in the options is refused like any other
\c -reuse-previous=on "options='-c fence.resource=gs -c fence.token=13'"
UPDATE gs_items SET v = 13;
\echo :LAST_ERROR_SQLSTATE
-- and so is a malformed one
\c -reuse-previous=on "options='-c fence.resource=gs -c fence.token=14x'"
UPDATE gs_items SET v = 13;
\echo :LAST_ERROR_SQLSTATE
\c -reuse-previous=on "options=''"
SELECT id, v FROM gs_items;

DROP TABLE gs_items;
SELECT fence.reset('gs');
