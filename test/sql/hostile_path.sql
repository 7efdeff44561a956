-- Every function of fence, called with a hostile schema first in the
-- search path.  A role with CREATE on a schema in a
-- caller's path (public, in a database created before PostgreSQL 15) can
-- define functions and operators that a call naming no schema would pick
-- over pg_catalog's: a better match (format(text, text, text) against
-- pg_catalog.format(text, VARIADIC "any")), or, where the path names
-- pg_catalog after it, an exact one.  Each of those below raises once
-- armed; fence's functions must call none of them, whatever they run.
-- The caller's own query in fenced_update still runs under the caller's
-- path (the last test).

CREATE SCHEMA hostile;
CREATE TABLE hp_stock (id int PRIMARY KEY, qty int NOT NULL);
INSERT INTO hp_stock VALUES (1, 100), (2, 100);
CREATE TABLE hp_keyed (id int PRIMARY KEY, note text, fence_token bigint);
CREATE TABLE hp_table (id int);

-- hostile.NAME(ARGS) for each of these: raises when armed, else does
-- what pg_catalog's does
DO $$
DECLARE
    f record;
BEGIN
    FOR f IN SELECT * FROM (VALUES
        ('format', 'text, text', 'text', 'pg_catalog.format($1, $2)'),
        ('format', 'text, text, text', 'text', 'pg_catalog.format($1, $2, $3)'),
        ('format', 'text, text, text, text', 'text', 'pg_catalog.format($1, $2, $3, $4)'),
        ('format', 'text, bigint', 'text', 'pg_catalog.format($1, $2)'),
        ('format', 'text, text, bigint', 'text', 'pg_catalog.format($1, $2, $3)'),
        ('regexp_replace', 'text, text, text', 'text', 'pg_catalog.regexp_replace($1, $2, $3)'),
        ('regexp_replace', 'text, text, text, text', 'text', 'pg_catalog.regexp_replace($1, $2, $3, $4)'),
        ('strpos', 'text, text', 'int', 'pg_catalog.strpos($1, $2)'),
        ('quote_literal', 'text', 'text', 'pg_catalog.quote_literal($1)'),
        ('quote_ident', 'text', 'text', 'pg_catalog.quote_ident($1)'),
        ('pg_has_role', 'oid, text', 'boolean', 'pg_catalog.pg_has_role($1, $2)'),
        ('current_setting', 'text', 'text', 'pg_catalog.current_setting($1)'),
        ('current_setting', 'text, boolean', 'text', 'pg_catalog.current_setting($1, $2)'),
        ('set_config', 'text, text, boolean', 'text', 'pg_catalog.set_config($1, $2, $3)'),
        ('md5', 'text', 'text', 'pg_catalog.md5($1)'),
        ('left', 'text, int', 'text', 'pg_catalog.left($1, $2)'),
        ('length', 'text', 'int', 'pg_catalog.length($1)'),
        ('octet_length', 'text', 'int', 'pg_catalog.octet_length($1)'),
        ('split_part', 'text, text, int', 'text', 'pg_catalog.split_part($1, $2, $3)'),
        ('convert_to', 'text, name', 'bytea', 'pg_catalog.convert_to($1, $2)'),
        ('encode', 'bytea, text', 'text', 'pg_catalog.encode($1, $2)'),
        ('nullif', 'text, text', 'text', 'pg_catalog.nullif($1, $2)'),
        ('now', '', 'timestamptz', 'pg_catalog.now()'),
        ('format_type', 'oid, int', 'text', 'pg_catalog.format_type($1, $2)'),
        ('jsonb_build_object', 'text, bigint', 'jsonb', 'pg_catalog.jsonb_build_object($1, $2)'),
        ('array_length', 'text[], int', 'int', 'pg_catalog.array_length($1, $2)'),
        ('cardinality', 'text[]', 'int', 'pg_catalog.cardinality($1)'),
        ('texteq', 'text, text', 'boolean', 'pg_catalog.texteq($1, $2)'),
        ('textne', 'text, text', 'boolean', 'pg_catalog.textne($1, $2)'),
        ('textcat', 'text, text', 'text', 'pg_catalog.textcat($1, $2)'),
        ('textregexeq', 'text, text', 'boolean', 'pg_catalog.textregexeq($1, $2)'),
        ('int8eq', 'bigint, bigint', 'boolean', 'pg_catalog.int8eq($1, $2)'),
        ('int8lt', 'bigint, bigint', 'boolean', 'pg_catalog.int8lt($1, $2)'),
        ('int8gt', 'bigint, bigint', 'boolean', 'pg_catalog.int8gt($1, $2)'),
        ('int8le', 'bigint, bigint', 'boolean', 'pg_catalog.int8le($1, $2)')
    ) AS t(name, args, result, body)
    LOOP
        EXECUTE format($f$
            CREATE FUNCTION hostile.%I(%s) RETURNS %s LANGUAGE plpgsql SET search_path = pg_catalog AS $b$
            BEGIN
                IF current_setting('regress.hostile', true) = 'on' THEN
                    RAISE EXCEPTION 'hostile.%s(%s) was called';
                END IF;
                RETURN %s;
            END $b$ $f$, f.name, f.args, f.result, f.name, f.args, f.body);
    END LOOP;
END
$$;
CREATE OPERATOR hostile.= (LEFTARG = text, RIGHTARG = text, FUNCTION = hostile.texteq);
CREATE OPERATOR hostile.<> (LEFTARG = text, RIGHTARG = text, FUNCTION = hostile.textne);
CREATE OPERATOR hostile.|| (LEFTARG = text, RIGHTARG = text, FUNCTION = hostile.textcat);
CREATE OPERATOR hostile.~ (LEFTARG = text, RIGHTARG = text, FUNCTION = hostile.textregexeq);
CREATE OPERATOR hostile.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = hostile.int8eq);
CREATE OPERATOR hostile.< (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = hostile.int8lt);
CREATE OPERATOR hostile.> (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = hostile.int8gt);
CREATE OPERATOR hostile.<= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = hostile.int8le);

-- the hostile schema first; pg_catalog after it, so that exact matches win
SET search_path = hostile, pg_catalog, public;
-- they are the ones picked, and they raise once armed
SELECT format('%s:%s', 'a', 'b'), 'a'::text = 'a'::text AS eq;
SET regress.hostile = on;
SELECT format('%s:%s', 'a', 'b');
SELECT 'a'::text = 'a'::text;
RESET regress.hostile;

-- every function, armed
SET regress.hostile = on;
SELECT fence.edition() IS NOT NULL AS edition;
SELECT fence.advance('hp', 1);
SELECT fence.advance('hp', 2, 'hp-owner');
SELECT fence.mark('hp');
SELECT fence.advance_many(ARRAY['hp:a', 'hp:b', 'hp:a'], ARRAY[1, 2, 1]::bigint[]);
SELECT fence.advance_many(ARRAY['hp:c'], ARRAY[1]::bigint[], ARRAY['hp-owner']);
SELECT fence.key_resource('hp', 7), fence.key_resource('hp', 'a:b'::text);
SELECT fence.floor_prefix('hp:a');
SELECT fence.protect('hp_stock', 'hp');
SELECT fence.protect('hp_keyed', 'hpk', 'fence_token', 'id');
SELECT fence.protect('hp_table', 'hpt');
SELECT fence.fenced_update('hp', 3, 'UPDATE hp_stock SET qty = qty - 1 WHERE id = 1');
SELECT fence.fenced_update('hp', 3, 'UPDATE hp_stock SET qty = qty - $1 WHERE id = $2', '1', '2');
SELECT fence.fenced_update('hp', 3, 'UPDATE hp_stock SET qty = qty - $1 WHERE id = $2', 1, 1);
SELECT fence.fenced_update_many(ARRAY['hp', 'hp:a'], ARRAY[3, 1]::bigint[],
                                'UPDATE hp_stock SET qty = qty + 1 WHERE id = 1');
SELECT fence.fenced_update_many(ARRAY['hp', 'hp:a'], ARRAY[3, 1]::bigint[],
                                'UPDATE hp_stock SET qty = qty + $1 WHERE id = $2', '1', '2');
SELECT fence.fenced_update_many(ARRAY['hp', 'hp:a'], ARRAY[3, 1]::bigint[],
                                'UPDATE hp_stock SET qty = qty + $1 WHERE id = $2', 1, 1);
-- the guards, with the token in each of the settings
SET fence.tokens = 'hpk:1=5/hp-owner, hpk:2=5, hpt=2';
INSERT INTO hp_keyed (id, note) VALUES (1, 'one'), (2, 'two');
UPDATE hp_keyed SET note = 'uno' WHERE id = 1;
INSERT INTO hp_table VALUES (1);
TRUNCATE hp_table;
RESET fence.tokens;
SET fence.resource = 'hp';
SET fence.token = 4;
SET fence.owner = 'hp-owner';
UPDATE hp_stock SET qty = qty - 1;
RESET fence.resource;
RESET fence.token;
RESET fence.owner;
BEGIN;
SELECT fence.advance('hpk:2', 6);
DELETE FROM hp_keyed WHERE id = 2;
COMMIT;
SELECT fence.unprotect('hp_table');
SELECT fence.reprotect_all();
SELECT fence.reset('hp:b');
SELECT fence.reset('hp:c', 9);
SELECT fence.forget('1 day');
RESET regress.hostile;

-- what was written
SELECT id, qty FROM hp_stock ORDER BY id;
SELECT id, note, fence_token FROM hp_keyed ORDER BY id;
SELECT resource, token, owner FROM fence.fences WHERE resource LIKE 'hp%' ORDER BY resource;

-- the caller's query runs under the caller's path: its unqualified names
-- are the caller's
CREATE FUNCTION hostile.hp_bump(int) RETURNS int LANGUAGE sql AS $$ SELECT $1 + 10 $$;
SELECT fence.fenced_update('hp', 4, 'UPDATE hp_stock SET qty = hp_bump(qty) WHERE id = 2');
SELECT fence.fenced_update('hp', 4, 'UPDATE hp_stock SET qty = hp_bump(qty) WHERE id = $1', 2);
SELECT fence.fenced_update_many(ARRAY['hp'], ARRAY[4]::bigint[], 'UPDATE hp_stock SET qty = hp_bump(qty) WHERE id = 2');
SELECT id, qty FROM hp_stock ORDER BY id;
RESET search_path;

SELECT fence.unprotect('hp_stock');
SELECT fence.unprotect('hp_keyed');
DROP TABLE hp_stock, hp_keyed, hp_table;
SET client_min_messages = warning;
DROP SCHEMA hostile CASCADE;
RESET client_min_messages;
SELECT fence.reset(resource) FROM fence.fences WHERE resource LIKE 'hp%' ORDER BY resource;
