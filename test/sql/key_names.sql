-- How key mode names a row: resource || ':' || key, where the key is its
-- type's text form with ':' and '\' escaped by '\'.  Names are the same in
-- every session (only key types with a stable text form are accepted, at
-- fence.protect and again when the guard fires), no two (resource, key)
-- pairs share one, and fence.key_resource computes them from SQL.

-- fence.key_resource, and the guard naming exactly what it computes
SELECT fence.key_resource('inv', 7) AS plain,
       fence.key_resource('inv', 'b:c') AS colon,
       fence.key_resource('inv', 'a\b') AS backslash,
       fence.key_resource('inv', '\:') AS both,
       fence.key_resource('inv', '') AS empty,
       fence.key_resource('inv', 'ü:é') AS multibyte;
SELECT fence.key_resource('inv', NULL::int) IS NULL AS null_key;

CREATE DOMAIN kn_code AS varchar(20);
CREATE TABLE kn_all (id int, b boolean, s smallint, i int, l bigint,
                     n numeric, n2 numeric(6,2), t text, v varchar(10),
                     c char(4), nm name, u uuid, d kn_code);
INSERT INTO kn_all VALUES
  (1, true, -2, 3, 9223372036854775807, 1.50, 7, 'x:y\z', 'p:q', 'ab', 'n:m',
   '0e5c0a5e-aaaa-bbbb-cccc-123456789abc', 'd:e'),
  (2, false, 0, -1, -5, 'NaN', -0.5, '', '\', ':', 'nm',
   'FFFFFFFF-0000-0000-0000-000000000000', '');
CREATE FUNCTION kn_names(col text) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
    -- protect kn_all with key column "col" and resource kn_<col>, write
    -- every row with the tokens of the names fence.key_resource gives, and
    -- return the names the guard left in fence.fences
    EXECUTE format('SELECT fence.protect(''kn_all'', %L, key_column => %L)', 'kn_' || col, col);
    EXECUTE format('SELECT count(fence.advance(fence.key_resource(%L, %I), 1)) FROM kn_all', 'kn_' || col, col);
    EXECUTE 'UPDATE kn_all SET id = id';
    PERFORM fence.unprotect('kn_all');
    RETURN QUERY SELECT resource FROM fence.fences
                  WHERE resource LIKE 'kn\_' || col || ':%' ORDER BY resource COLLATE "C";
END $$;
SELECT kn_names(c) AS resource
  FROM unnest(ARRAY['b', 's', 'i', 'l', 'n', 'n2', 't', 'v', 'c', 'nm', 'u', 'd']) c;
-- the guard checked those names: a token for another name is not enough
SELECT fence.protect('kn_all', 'kn', key_column => 't');
BEGIN;
SELECT fence.advance('kn:x:y\z', 1);
UPDATE kn_all SET id = id WHERE id = 1;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fence.advance(fence.key_resource('kn', 'x:y\z'::text), 1);
UPDATE kn_all SET id = id WHERE id = 1;
COMMIT;
SELECT fence.unprotect('kn_all');

-- No two rows share a name, across tables either: the key's ':' is escaped,
-- and a key-mode resource may not contain ':' itself (else base 'a:b\' with
-- key 'c' and base 'a' with key 'b:c' would both be 'a:b\:c')
CREATE TABLE kn_a (k text);
CREATE TABLE kn_ab (k text, tok bigint);
SELECT fence.protect('kn_a', 'a', key_column => 'k');
SELECT fence.protect('kn_ab', 'a:b', key_column => 'k');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('kn_ab', 'a:b\', key_column => 'k');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.key_resource('a:b', 'c');
\echo :LAST_ERROR_SQLSTATE
-- ':' stays allowed in the resource of the other modes
SELECT fence.protect('kn_ab', 'a:b');
SELECT fence.unprotect('kn_ab');
SELECT fence.protect('kn_ab', 'a:b', token_column => 'tok');
SELECT fence.unprotect('kn_ab');
-- the holder of row 'b:c' of kn_a cannot raise the fence 'a:b:c'
BEGIN;
SET LOCAL fence.resource = 'a:b\:c';
SET LOCAL fence.token = '9223372036854775807';
INSERT INTO kn_a VALUES ('b:c');
COMMIT;
SELECT resource, token FROM fence.fences WHERE resource LIKE 'a:%' ORDER BY resource;
BEGIN;
SET LOCAL fence.resource = 'a:b:c';
SET LOCAL fence.token = '9223372036854775807';
INSERT INTO kn_a VALUES ('b:c');
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
-- a guard made by hand with such a resource is refused when it fires
CREATE TRIGGER kn_hand BEFORE INSERT ON kn_ab FOR EACH ROW
    EXECUTE FUNCTION fence.guard('a:b', '', 'k');
BEGIN;
SELECT fence.advance('a:b:c', 1);
INSERT INTO kn_ab VALUES ('c');
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
DROP TABLE kn_a, kn_ab;

-- Key types: an allow-list.  A type whose text form follows a setting or a
-- catalog would give one row several names, one per session
CREATE TYPE kn_mood AS ENUM ('ok', 'sad');
CREATE DOMAIN kn_when AS timestamp;
CREATE TABLE kn_types (tr tsrange, ta timestamp[], pt point, rc regclass,
                       mood kn_mood, w kn_when, f float8, f4 real, dt date,
                       tm time, iv interval, m money, by bytea, j json,
                       jb jsonb, ia int[], ir int4range, ip inet, bits bit(3),
                       ch "char", o oid, ok int);
CREATE FUNCTION kn_try_protect(col name) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM fence.protect('kn_types', 'kn', key_column => col);
    PERFORM fence.unprotect('kn_types');
    RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ' ' || SQLERRM;
END $$;
SELECT attname, kn_try_protect(attname)
  FROM pg_attribute WHERE attrelid = 'kn_types'::regclass AND attnum > 0 ORDER BY attnum;
SELECT fence.key_resource('kn', '[2026-01-01,2026-01-02)'::tsrange);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.key_resource('kn', 'pg_class'::regclass);
\echo :LAST_ERROR_SQLSTATE
-- the guard checks the type again when it fires, after ALTER COLUMN TYPE
SELECT fence.protect('kn_types', 'kn', key_column => 'ok');
ALTER TABLE kn_types ALTER COLUMN ok TYPE tsrange USING NULL;
BEGIN;
SELECT fence.advance('kn:empty', 1);
INSERT INTO kn_types (ok) VALUES ('empty');
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE kn_types ALTER COLUMN ok TYPE timestamp[] USING NULL;
BEGIN;
SELECT fence.advance('kn:{"2026-01-01 00:00:00"}', 1);
INSERT INTO kn_types (ok) VALUES ('{2026-01-01}');
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
DROP TABLE kn_types;
DROP FUNCTION kn_try_protect(name);
DROP TYPE kn_mood;
DROP DOMAIN kn_when;

-- Length: a row's name must fit in 1024 bytes, escapes included; the error
-- says which table, column and size
CREATE TABLE kn_long (k text);
SELECT fence.protect('kn_long', 'kn', key_column => 'k');
BEGIN;
SELECT fence.advance(fence.key_resource('kn', repeat('x', 1021)), 1);
INSERT INTO kn_long VALUES (repeat('x', 1021));
COMMIT;
BEGIN;
SET LOCAL fence.resource = 'kn';
SET LOCAL fence.token = '1';
INSERT INTO kn_long VALUES (repeat('x', 1022));
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
INSERT INTO kn_long VALUES (repeat(':', 511));
\echo :LAST_ERROR_SQLSTATE
SELECT fence.key_resource('kn', repeat(':', 511));
\echo :LAST_ERROR_SQLSTATE
SELECT octet_length(fence.key_resource('kn', repeat(':', 510)));
-- and the resource of a key-mode guard leaves room for ':' and a key
SELECT fence.unprotect('kn_long');
SELECT fence.protect('kn_long', repeat('r', 1024), key_column => 'k');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('kn_long', repeat('r', 1023), key_column => 'k');
DROP TABLE kn_long;

DROP TABLE kn_all;
DROP FUNCTION kn_names(text);
DROP DOMAIN kn_code;
SELECT count(fence.reset(resource)) FROM fence.fences
 WHERE resource ~ '^(kn|kn_[a-z0-9]+|a)(:|$)';
