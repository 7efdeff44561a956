-- fence.tokens: the tokens of several resources in one setting, as
-- RESOURCE=TOKEN[/OWNER] entries separated by commas.  Parsed when set
-- (a malformed value is refused with 22023 and says where), quoted with
-- double quotes where a name needs it; the guard takes a resource's entry
-- after what fence.advance registered and before fence.resource/fence.token.

-- Well-formed values, and what SHOW gives back: the value as set
SET fence.tokens = 'acct:1=41/web1:812:psql/9f3c2a01,acct:2=17/web1:812:psql/9f3c2a01';
SHOW fence.tokens;
SET fence.tokens = '  a=1 ,  b=2/o  ,c=3/"o "';
SHOW fence.tokens;
SET fence.tokens = '"a,b"=5,"x""y"=6,"=eq"=7/"own,er","  sp "=8';
SET fence.tokens = '';
SET fence.tokens = '   ';
-- the same resource twice is fine when both entries say the same
SET fence.tokens = 'a=1/o,a=1/o';
RESET fence.tokens;
SHOW fence.tokens;

-- Malformed values: refused when set (22023), and the value in force stays
SET fence.tokens = 'keep=1';
SET fence.tokens = 'a';
\echo :LAST_ERROR_SQLSTATE
SET fence.tokens = 'a=';
SET fence.tokens = 'a=12abc';
SET fence.tokens = 'a=1.5';
SET fence.tokens = 'a=9223372036854775808';
SET fence.tokens = '=5';
SET fence.tokens = '""=5';
SET fence.tokens = 'a=1,,b=2';
SET fence.tokens = 'a=1,';
SET fence.tokens = ',a=1';
SET fence.tokens = 'a=1/';
SET fence.tokens = 'a"b=1';
SET fence.tokens = 'a\b=1';
SET fence.tokens = '"ab=1';
SET fence.tokens = '"ab"x=1';
SET fence.tokens = 'a =1';
SET fence.tokens = 'a=1/ o';
SET fence.tokens = 'a=1 2';
SET fence.tokens = 'a=1/"o"x';
SET fence.tokens = 'a=1/o"';
SET fence.tokens = 'a=1,a=2';
SET fence.tokens = 'a=1/o1,a=1/o2';
SET fence.tokens = 'a=1/o1,a=1';
SELECT 'x=1,' || repeat('r', 1025) || '=1' AS long \gset
SET fence.tokens = :'long';
\echo :LAST_ERROR_SQLSTATE
SHOW fence.tokens;
RESET fence.tokens;

-- Table mode: the guard takes the entry of the table's resource
CREATE TABLE tk_a (id int PRIMARY KEY, v int);
CREATE TABLE tk_b (id int PRIMARY KEY, v int);
SELECT fence.protect('tk_a', 'tk:a');
SELECT fence.protect('tk_b', 'tk:b');
BEGIN;
SET LOCAL fence.tokens = 'tk:a=5/ow,tk:b=9';
INSERT INTO tk_a VALUES (1, 0);
INSERT INTO tk_b VALUES (1, 0);
COMMIT;
SELECT resource, token, owner FROM fence.fences WHERE resource LIKE 'tk:%' ORDER BY 1;
-- quoted names and owners arrive as they were before quoting
CREATE TABLE tk_q (id int);
SELECT fence.protect('tk_q', 'q"t,= ');
BEGIN;
SET LOCAL fence.tokens = 'tk:a=5/ow, "q""t,= "=3/"o,w""/x" ';
INSERT INTO tk_q VALUES (1);
COMMIT;
SELECT resource, token, owner FROM fence.fences WHERE resource LIKE 'q%';
-- a resource without an entry is missing (LF002)
BEGIN;
SET LOCAL fence.tokens = 'tk:a=5/ow';
UPDATE tk_b SET v = 1;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
-- a stale entry (LF001), a zero or negative one (LF003, when used)
BEGIN;
SET LOCAL fence.tokens = 'tk:a=4/ow';
UPDATE tk_a SET v = 1;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
SET fence.tokens = 'tk:a=0,tk:b=-3';
UPDATE tk_a SET v = 1;
\echo :LAST_ERROR_SQLSTATE
UPDATE tk_b SET v = 1;
\echo :LAST_ERROR_SQLSTATE
RESET fence.tokens;
-- the owner travels with the entry: token 5 of another owner is LF001
BEGIN;
SET LOCAL fence.tokens = 'tk:a=5/other';
UPDATE tk_a SET v = 1;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE

-- Order: what fence.advance registered comes first, then fence.tokens, then
-- fence.resource / fence.token
BEGIN;
SELECT fence.advance('tk:a', 6, 'ow');
SET LOCAL fence.tokens = 'tk:a=5/ow';
UPDATE tk_a SET v = 2;
COMMIT;
SELECT token FROM fence.fences WHERE resource = 'tk:a';
BEGIN;
SET LOCAL fence.tokens = 'tk:a=7/ow';
SET LOCAL fence.resource = 'tk:b';
SET LOCAL fence.token = '10';
UPDATE tk_a SET v = 3;
UPDATE tk_b SET v = 3;
COMMIT;
SELECT resource, token, owner FROM fence.fences WHERE resource LIKE 'tk:%' ORDER BY 1;
-- fence.resource agreeing with the entry is fine ...
BEGIN;
SET LOCAL fence.tokens = 'tk:a=7/ow';
SET LOCAL fence.resource = 'tk:a';
SET LOCAL fence.token = '7';
SET LOCAL fence.owner = 'ow';
UPDATE tk_a SET v = 4;
COMMIT;
-- ... and so is fence.resource without fence.token, which carries no token
BEGIN;
SET LOCAL fence.tokens = 'tk:a=7/ow';
SET LOCAL fence.resource = 'tk:a';
UPDATE tk_a SET v = 4;
COMMIT;
-- ... but two different tokens, or owners, for one resource are LF003
BEGIN;
SET LOCAL fence.tokens = 'tk:a=8/ow';
SET LOCAL fence.resource = 'tk:a';
SET LOCAL fence.token = '7';
UPDATE tk_a SET v = 5;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SET LOCAL fence.tokens = 'tk:a=7/ow';
SET LOCAL fence.resource = 'tk:a';
SET LOCAL fence.token = '7';
SET LOCAL fence.owner = 'other';
UPDATE tk_a SET v = 5;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SET LOCAL fence.tokens = 'tk:a=7';
SET LOCAL fence.resource = 'tk:a';
SET LOCAL fence.token = 'junk';
UPDATE tk_a SET v = 5;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE

-- Key mode: each row's resource finds its own entry, quoted names too
CREATE TABLE tk_acct (id text PRIMARY KEY, balance int NOT NULL);
SELECT fence.protect('tk_acct', 'acct', key_column => 'id');
BEGIN;
SET LOCAL fence.tokens = 'acct:1=3,"acct:a,b"=4,acct:2=5';
INSERT INTO tk_acct VALUES ('1', 100), ('2', 100), ('a,b', 100);
COMMIT;
SELECT resource, token FROM fence.fences WHERE resource LIKE 'acct:%' ORDER BY 1;
-- a transfer: both rows in one statement, each with its own token
BEGIN;
SET LOCAL fence.tokens = 'acct:2=5,acct:1=3';
UPDATE tk_acct SET balance = balance + CASE id WHEN '1' THEN -10 ELSE 10 END
 WHERE id IN ('1', '2');
COMMIT;
SELECT * FROM tk_acct ORDER BY id;
-- a row of a resource without an entry stops the statement
BEGIN;
SET LOCAL fence.tokens = 'acct:1=3';
UPDATE tk_acct SET balance = 0;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
-- moving a row from one key to another needs both entries
BEGIN;
SET LOCAL fence.tokens = 'acct:1=3,acct:9=1';
UPDATE tk_acct SET id = '9' WHERE id = '1';
COMMIT;
SELECT * FROM tk_acct ORDER BY id;

-- Token-column mode: the entry's token is stamped, and a row holding a
-- higher token refuses a lower one
CREATE TABLE tk_jobs (id int PRIMARY KEY, state text, fence_token bigint);
SELECT fence.protect('tk_jobs', 'jobs', 'fence_token');
BEGIN;
SET LOCAL fence.tokens = 'other=1,jobs=12';
INSERT INTO tk_jobs VALUES (1, 'new', NULL);
COMMIT;
SELECT * FROM tk_jobs;
SELECT fence.reset('jobs', 2);
BEGIN;
SET LOCAL fence.tokens = 'jobs=3';
UPDATE tk_jobs SET state = 'old';
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE

-- SET LOCAL ends with the transaction, a savepoint's rollback takes its
-- SET back, and RESET goes back to the session's value
SET fence.tokens = 'tk:a=7/ow';
BEGIN;
SET LOCAL fence.tokens = 'tk:b=10';
SHOW fence.tokens;
UPDATE tk_a SET v = 6;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
SHOW fence.tokens;
UPDATE tk_a SET v = 6;
BEGIN;
SAVEPOINT s;
SET LOCAL fence.tokens = 'tk:b=10';
ROLLBACK TO SAVEPOINT s;
UPDATE tk_a SET v = 7;
UPDATE tk_b SET v = 7;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SAVEPOINT s;
SET fence.tokens = 'tk:b=10';
RELEASE SAVEPOINT s;
UPDATE tk_b SET v = 8;
COMMIT;
SHOW fence.tokens;
RESET fence.tokens;
UPDATE tk_a SET v = 9;
\echo :LAST_ERROR_SQLSTATE

-- A key-mode statement over many rows: one entry each
CREATE TABLE tk_many (k int PRIMARY KEY, v int);
SELECT fence.protect('tk_many', 'm', key_column => 'k');
SELECT string_agg(format('m:%s=%s', i, i), ',') AS many FROM generate_series(1, 2000) i \gset
BEGIN;
SET LOCAL fence.tokens = :'many';
INSERT INTO tk_many SELECT i, 0 FROM generate_series(1, 2000) i;
COMMIT;
SELECT count(*), sum(token) FROM fence.fences WHERE resource LIKE 'm:%';

DROP TABLE tk_q, tk_a, tk_b, tk_acct, tk_jobs, tk_many;
DELETE FROM fence.fences;

-- In PGOPTIONS the value travels as one -c fence.tokens=VALUE, with spaces
-- and backslashes escaped by a backslash, as the client writes it; a
-- malformed one refuses the connection
\setenv PGDATABASE :DBNAME
\! PGOPTIONS='-c fence.tokens="a\ b"=5/web1:1:psql/9f,"c\\d"=6' psql -X -At -c 'SHOW fence.tokens'
\! PGOPTIONS='-c fence.tokens=c\\d=6' psql -X -At -c 'SHOW fence.tokens' 2>&1 | sed 's/.*FATAL: */FATAL: /'
