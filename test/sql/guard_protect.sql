-- fence.protect and fence.unprotect check their arguments when the table is
-- protected, not at its first write; fence.guard refuses to run in a
-- trigger it was not made for.  Each refused case sits next to one that
-- works.

CREATE TABLE gp_t (id int PRIMARY KEY, tok bigint, small_tok int, k text,
                   g text GENERATED ALWAYS AS (k || '!') STORED);

-- Nulls and empty names
SELECT fence.protect(NULL, 'gp');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('gp_t', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('gp_t', '');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('gp_t', repeat('r', 1025));
\echo :LAST_ERROR_SQLSTATE
SELECT fence.unprotect(NULL);
\echo :LAST_ERROR_SQLSTATE

-- The table must exist and be an ordinary table
SELECT fence.protect('gp_nosuch', 'gp');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect(4000000000::oid::regclass, 'gp');
\echo :LAST_ERROR_SQLSTATE
CREATE VIEW gp_v AS SELECT * FROM gp_t;
SELECT fence.protect('gp_v', 'gp');
\echo :LAST_ERROR_SQLSTATE
CREATE SEQUENCE gp_seq;
SELECT fence.protect('gp_seq', 'gp');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('fence.fences', 'gp');
\echo :LAST_ERROR_SQLSTATE

-- Columns must exist, not be system or generated columns, and the token
-- column must be bigint
SELECT fence.protect('gp_t', 'gp', token_column => 'nosuch');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('gp_t', 'gp', key_column => 'nosuch');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('gp_t', 'gp', token_column => 'small_tok');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('gp_t', 'gp', token_column => 'k');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('gp_t', 'gp', token_column => 'xmin');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('gp_t', 'gp', key_column => 'ctid');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('gp_t', 'gp', key_column => 'g');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('gp_t', 'gp', token_column => 'tok', key_column => 'tok');
\echo :LAST_ERROR_SQLSTATE
-- A key must name the same resource in every session: only types whose
-- text form follows no setting are allowed (key_names tests each of them)
CREATE DOMAIN gp_when AS timestamptz;
CREATE TABLE gp_keys (at timestamptz, day date, ratio float8, blob bytea,
                      w gp_when, u uuid, n numeric);
SELECT fence.protect('gp_keys', 'gp', key_column => 'at');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('gp_keys', 'gp', key_column => 'day');
SELECT fence.protect('gp_keys', 'gp', key_column => 'ratio');
SELECT fence.protect('gp_keys', 'gp', key_column => 'blob');
SELECT fence.protect('gp_keys', 'gp', key_column => 'w');
SELECT fence.protect('gp_keys', 'gp', key_column => 'u');
SELECT fence.unprotect('gp_keys');
SELECT fence.protect('gp_keys', 'gp', key_column => 'n');
DROP TABLE gp_keys;
DROP DOMAIN gp_when;
-- nothing was left behind by the refused calls
SELECT count(*) FROM pg_trigger WHERE tgrelid = 'gp_t'::regclass;
SELECT fence.protect('gp_t', 'gp', token_column => 'tok', key_column => 'k');

-- Protecting twice is refused; unprotect, then protect the new way
SELECT fence.protect('gp_t', 'gp');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.unprotect('gp_t');
SELECT fence.unprotect('gp_t');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('gp_t', 'gp');
SELECT fence.unprotect('gp_t');

-- Quoting: odd table, column and resource names go through intact
CREATE TABLE "gp Odd ""T""" ("Tok En" bigint, "K" int);
SELECT fence.protect('"gp Odd ""T"""', 'it''s \ odd', 'Tok En', 'K');
SELECT tgname, pg_catalog.pg_get_triggerdef(oid)
  FROM pg_trigger WHERE tgrelid = '"gp Odd ""T"""'::regclass ORDER BY tgname;
BEGIN;
SELECT fence.advance('it''s \ odd:1', 3);
INSERT INTO "gp Odd ""T""" VALUES (NULL, 1);
COMMIT;
SELECT * FROM "gp Odd ""T""";
DROP TABLE "gp Odd ""T""";

-- Temporary tables can be protected
CREATE TEMP TABLE gp_temp (id int);
SELECT fence.protect('gp_temp', 'gp');
INSERT INTO gp_temp VALUES (1);
\echo :LAST_ERROR_SQLSTATE
DROP TABLE gp_temp;

-- Partitions and inheritance: statement triggers do not fire for rows
-- written through the parent, so the table-level guard is refused on a
-- partitioned table and on a child; the row-level guards fire either way
CREATE TABLE gp_parts (id int, tok bigint) PARTITION BY RANGE (id);
CREATE TABLE gp_part1 PARTITION OF gp_parts FOR VALUES FROM (0) TO (100);
SELECT fence.protect('gp_parts', 'gp');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('gp_parts', 'gp', 'tok');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('gp_part1', 'gp');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('gp_part1', 'gp', 'tok');
INSERT INTO gp_parts VALUES (1, NULL);
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fence.advance('gp', 5);
INSERT INTO gp_parts VALUES (1, NULL);
COMMIT;
SELECT * FROM gp_parts;
TRUNCATE gp_parts;
\echo :LAST_ERROR_SQLSTATE
DROP TABLE gp_parts;
CREATE TABLE gp_base (id int, tok bigint);
CREATE TABLE gp_child () INHERITS (gp_base);
SELECT fence.protect('gp_child', 'gp');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('gp_child', 'gp', 'tok');
SELECT fence.protect('gp_base', 'gp');
DROP TABLE gp_base, gp_child;

-- The guard checks its configuration again when it fires: a column renamed
-- or retyped after protect stops writes instead of letting them through
CREATE TABLE gp_r (id int, tok bigint, k int);
SELECT fence.protect('gp_r', 'gp', 'tok', 'k');
ALTER TABLE gp_r RENAME COLUMN k TO k2;
BEGIN;
SELECT fence.advance('gp:1', 1);
INSERT INTO gp_r VALUES (1, NULL, 1);
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE gp_r RENAME COLUMN k2 TO k;
ALTER TABLE gp_r ALTER COLUMN tok TYPE numeric;
BEGIN;
SELECT fence.advance('gp:1', 1);
INSERT INTO gp_r VALUES (1, NULL, 1);
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE gp_r ALTER COLUMN tok TYPE bigint;
ALTER TABLE gp_r ALTER COLUMN k TYPE float8;
BEGIN;
SELECT fence.advance('gp:1', 1);
INSERT INTO gp_r VALUES (1, NULL, 1);
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE gp_r ALTER COLUMN k TYPE int;
BEGIN;
SELECT fence.advance('gp:1', 1);
INSERT INTO gp_r VALUES (1, NULL, 1);
COMMIT;
SELECT * FROM gp_r;
-- ... and so does a key or token column dropped and made again as a
-- generated column, which fence.protect refuses: it is computed after the
-- guard, so an UPDATE of its base column would move the row to a key whose
-- fence was never checked, or write a token the guard never stamped
-- (0.2.0 let such writes through)
ALTER TABLE gp_r DROP COLUMN k;
ALTER TABLE gp_r ADD COLUMN k int GENERATED ALWAYS AS (id + 1) STORED;
BEGIN;
SELECT fence.advance('gp:2', 1);
UPDATE gp_r SET id = 5;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE gp_r DROP COLUMN k;
ALTER TABLE gp_r ADD COLUMN k int DEFAULT 1;
ALTER TABLE gp_r DROP COLUMN tok;
ALTER TABLE gp_r ADD COLUMN tok bigint GENERATED ALWAYS AS (0) STORED;
BEGIN;
SELECT fence.advance('gp:1', 1);
DELETE FROM gp_r;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
DROP TABLE gp_r;

-- fence.guard in a trigger it was not made for: the trigger protocol is
-- checked before anything else (39P01)
CREATE TABLE gp_m (id int, tok bigint);
INSERT INTO gp_m VALUES (1, NULL);
SELECT fence.guard();
\echo :LAST_ERROR_SQLSTATE
-- AFTER triggers come too late to stamp a row or to stop a statement early
CREATE TRIGGER m AFTER INSERT ON gp_m FOR EACH ROW EXECUTE FUNCTION fence.guard('gp', 'tok', '');
INSERT INTO gp_m VALUES (2, NULL);
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER m ON gp_m;
CREATE TRIGGER m AFTER UPDATE ON gp_m FOR EACH STATEMENT EXECUTE FUNCTION fence.guard('gp', '', '');
UPDATE gp_m SET id = 1;
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER m ON gp_m;
-- a row trigger without columns, a statement trigger with one
CREATE TRIGGER m BEFORE UPDATE ON gp_m FOR EACH ROW EXECUTE FUNCTION fence.guard('gp', '', '');
UPDATE gp_m SET id = 1;
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER m ON gp_m;
CREATE TRIGGER m BEFORE UPDATE ON gp_m FOR EACH STATEMENT EXECUTE FUNCTION fence.guard('gp', 'tok', '');
UPDATE gp_m SET id = 1;
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER m ON gp_m;
-- wrong arguments
CREATE TRIGGER m BEFORE UPDATE ON gp_m FOR EACH STATEMENT EXECUTE FUNCTION fence.guard();
UPDATE gp_m SET id = 1;
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER m ON gp_m;
CREATE TRIGGER m BEFORE UPDATE ON gp_m FOR EACH STATEMENT EXECUTE FUNCTION fence.guard('', '', '');
UPDATE gp_m SET id = 1;
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER m ON gp_m;
-- INSTEAD OF on a view is not a BEFORE trigger either
CREATE VIEW gp_mv AS SELECT * FROM gp_m;
CREATE TRIGGER m INSTEAD OF INSERT ON gp_mv FOR EACH ROW EXECUTE FUNCTION fence.guard('gp', 'tok', '');
INSERT INTO gp_mv VALUES (3, NULL);
\echo :LAST_ERROR_SQLSTATE
DROP VIEW gp_mv;
-- A hand-made guard with the right shape works, counts as protection, and
-- unprotect removes it too
CREATE TRIGGER my_guard BEFORE UPDATE ON gp_m FOR EACH ROW EXECUTE FUNCTION fence.guard('gp', 'tok', '');
UPDATE gp_m SET id = 1;
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('gp_m', 'gp');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.unprotect('gp_m');
SELECT count(*) FROM pg_trigger WHERE tgrelid = 'gp_m'::regclass;

DROP TABLE gp_t, gp_m CASCADE;
DROP SEQUENCE gp_seq;
SELECT fence.reset(resource) FROM fence.fences
 WHERE resource ~ '^(gp|it''s \\ odd)(:|$)' ORDER BY resource;
