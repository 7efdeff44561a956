\echo Use "ALTER EXTENSION fence UPDATE TO '0.2.0'" to load this file. \quit

-- fence 0.1.0 -> 0.2.0: new objects only; no mark, guard or grant of 0.1.0
-- changes, so fence.fences keeps every row it had.  What each object is
-- for is said where sql/fence.sql creates it.

-- The check that sql/fence.sql makes before it creates anything, which
-- 0.1.0 did not make: schema fence must not be owned by, or open to
-- CREATE for, another role, nor hold objects the extension did not make.
DO $$
DECLARE
    s record;
BEGIN
    SELECT n.oid, o.rolname AS owner,
           n.nspowner OPERATOR(pg_catalog.=) r.oid AS ours,
           o.rolsuper AS owner_super,
           (SELECT COALESCE(g.rolname, 'PUBLIC') FROM pg_catalog.aclexplode(n.nspacl) a
              LEFT JOIN pg_catalog.pg_roles g ON g.oid OPERATOR(pg_catalog.=) a.grantee
             WHERE a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
               AND a.grantee OPERATOR(pg_catalog.<>) n.nspowner
               AND g.rolsuper IS NOT TRUE
             LIMIT 1) AS creator,
           (SELECT pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid)
              FROM pg_catalog.pg_depend d
             WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
               AND d.refobjid OPERATOR(pg_catalog.=) n.oid
               AND d.classid OPERATOR(pg_catalog.<>) 'pg_catalog.pg_extension'::pg_catalog.regclass
               AND NOT EXISTS (SELECT FROM pg_catalog.pg_depend m
                                JOIN pg_catalog.pg_extension e ON e.oid OPERATOR(pg_catalog.=) m.refobjid
                               WHERE m.classid OPERATOR(pg_catalog.=) d.classid
                                 AND m.objid OPERATOR(pg_catalog.=) d.objid
                                 AND m.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                                 AND m.deptype OPERATOR(pg_catalog.=) 'e'
                                 AND e.extname OPERATOR(pg_catalog.=) 'fence')
             LIMIT 1) AS stranger
      INTO s
      FROM pg_catalog.pg_namespace n
      JOIN pg_catalog.pg_roles o ON o.oid OPERATOR(pg_catalog.=) n.nspowner
      JOIN pg_catalog.pg_roles r ON r.rolname OPERATOR(pg_catalog.=) CURRENT_USER
     WHERE n.nspname OPERATOR(pg_catalog.=) 'fence';
    IF NOT (s.ours OR s.owner_super) THEN
        RAISE EXCEPTION 'schema "fence" is owned by role "%", which is not a superuser', s.owner
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Its owner could replace or shadow the objects of the extension.',
                  HINT = 'Drop or rename the schema, or check it and make a superuser its owner.';
    ELSIF s.creator IS NOT NULL THEN
        RAISE EXCEPTION 'role "%" may create objects in schema "fence"', s.creator
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Such a role could shadow the objects of the extension.',
                  HINT = 'Revoke CREATE on the schema from every role but its owner.';
    ELSIF s.stranger IS NOT NULL THEN
        RAISE EXCEPTION 'schema "fence" holds % that is not part of the extension', s.stranger
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'An object put there before the extension could shadow its objects.',
                  HINT = 'Move or drop it.';
    END IF;
END
$$;

-- The mark of one resource, for whoever may see marks without reading
-- fence.fences: the client heals a Redis counter that fell behind with it
-- (announce, fence show).  It runs as the owner of fence.fences, with the
-- search path pinned so that the caller's cannot redirect it; granted like
-- fence.advance, and to pg_monitor, which reads the marks in fence.stats.
CREATE FUNCTION fence.mark(resource text)
RETURNS bigint
LANGUAGE sql STABLE STRICT PARALLEL SAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE((SELECT f.token FROM fence.fences f
                      WHERE f.resource OPERATOR(pg_catalog.=) $1), 0)
$$;
REVOKE ALL ON FUNCTION fence.mark(text) FROM PUBLIC;
COMMENT ON FUNCTION fence.mark(text) IS
    'Highest accepted token of resource, 0 if none, for roles that may not read fence.fences';

-- Parameters that arrive without a type (node-postgres and pgbench -M
-- prepared send them so) cannot resolve against "any"; an unknown argument
-- prefers the string category, so they pick this overload, and a call with
-- any non-string argument still picks the "any" overload.  Both take untyped,
-- text and varchar arguments with the type the statement gives them.
CREATE FUNCTION fence.fenced_update(resource text, token bigint, query text,
                                    VARIADIC params text[])
RETURNS bigint
AS 'MODULE_PATHNAME', 'fence_fenced_update'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.fenced_update(text, bigint, text, text[]) FROM PUBLIC;
COMMENT ON FUNCTION fence.fenced_update(text, bigint, text, text[]) IS
    'Accept token for resource, then run query with params, typed as the query types $1..$n; returns rows processed';

COMMENT ON FUNCTION fence.protect(regclass, text, name, name) IS
    'Install the guard on a table you own: one check per statement, or per row with key_column (see fence.key_resource) and token_column (stamped, never lowered)';

-- The resource of a row of a key-mode table, as the guard names it: what a
-- worker leases to write that row.  Open to everybody: it only computes a
-- name.
CREATE FUNCTION fence.key_resource(resource text, key anycompatible)
RETURNS text
AS 'MODULE_PATHNAME', 'fence_key_resource'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION fence.key_resource(text, anycompatible) IS
    'Resource of the row with this key in a table protected with this resource and key_column: resource:key, with ":" and "\" in the key escaped by "\"';

-- Statistics --------------------------------------------------------------
-- Counts of accepted and refused tokens per resource, in shared memory
-- (extension/stats.c): they need fence in shared_preload_libraries, and
-- without it the functions below raise an error that says so.  Refusals
-- abort their transactions, which is why they are not kept in a table.
-- Resource names and marks are not for everybody: reading is granted to
-- pg_monitor, resetting to nobody but administrators.

CREATE FUNCTION fence.stats_counts(
    OUT resource text, OUT accepted bigint, OUT stale bigint,
    OUT missing bigint, OUT invalid bigint,
    OUT last_refusal timestamptz, OUT last_refused_token bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'fence_stats_counts'
LANGUAGE C VOLATILE PARALLEL SAFE;
REVOKE ALL ON FUNCTION fence.stats_counts() FROM PUBLIC;
COMMENT ON FUNCTION fence.stats_counts() IS
    'Counts of accepted and refused tokens per resource since start or fence.stats_reset(), from shared memory; read them through fence.stats';

CREATE VIEW fence.stats AS
    SELECT s.resource, s.accepted, s.stale, s.missing, s.invalid,
           s.last_refusal, s.last_refused_token, f.token AS mark
      FROM fence.stats_counts() s
      LEFT JOIN fence.fences f ON f.resource OPERATOR(pg_catalog.=) s.resource;
REVOKE ALL ON fence.stats FROM PUBLIC;
COMMENT ON VIEW fence.stats IS
    'Per resource: accepted checks, refusals by kind (stale LF001, missing LF002, invalid LF003), the last refusal and its token, and the committed mark; resource NULL counts the resources that found the table full (fence.stats_max_resources) and invalid names';

CREATE FUNCTION fence.stats_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'fence_stats_reset'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.stats_reset() FROM PUBLIC;
COMMENT ON FUNCTION fence.stats_reset() IS
    'Administrators only: forget every count in fence.stats';

-- DDL guard -------------------------------------------------------------------
-- A table protected in table mode must not get a parent: statement-level
-- triggers do not fire for rows written through a partitioned table or an
-- inheritance parent; and a row guard must be the last BEFORE ROW trigger
-- of its table (extension/guard_ddl.c).  CREATE SCHEMA is among the tags
-- because its elements run under it.  ENABLE ALWAYS, so that
-- session_replication_role does not skip it; only superusers can alter or
-- drop an event trigger.

CREATE FUNCTION fence.guard_ddl()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'fence_guard_ddl'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.guard_ddl() FROM PUBLIC;
COMMENT ON FUNCTION fence.guard_ddl() IS
    'Event trigger that refuses DDL giving a table-mode protected table a parent (ATTACH PARTITION, INHERIT, hand-made guards) or a row guard a BEFORE ROW trigger that fires after it';

CREATE EVENT TRIGGER fence_guard_ddl ON ddl_command_end
    WHEN TAG IN ('ALTER TABLE', 'CREATE TABLE', 'CREATE TRIGGER', 'ALTER TRIGGER',
                 'CREATE SCHEMA')
    EXECUTE FUNCTION fence.guard_ddl();
ALTER EVENT TRIGGER fence_guard_ddl ENABLE ALWAYS;
COMMENT ON EVENT TRIGGER fence_guard_ddl IS
    'Keeps tables protected without a token or key column from becoming partitions or inheritance children, and row guards last among BEFORE ROW triggers';

-- The objects made above get the ALTER DEFAULT PRIVILEGES of the role
-- running the update, which could hand them out behind the REVOKEs: take
-- every privilege on them from everybody but their owner, then grant what
-- sql/fence.sql grants.  (Grants on the objects of 0.1.0 are the
-- administrator's and stay.)
DO $$
DECLARE
    g record;
BEGIN
    FOR g IN
        SELECT 'TABLE' AS kind, c.oid::pg_catalog.regclass::pg_catalog.text AS object, a.grantee
          FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) a
         WHERE c.oid OPERATOR(pg_catalog.=) 'fence.stats'::pg_catalog.regclass
           AND a.grantee OPERATOR(pg_catalog.<>) c.relowner
        UNION
        SELECT 'FUNCTION', p.oid::pg_catalog.regprocedure::pg_catalog.text, a.grantee
          FROM pg_catalog.pg_proc p, pg_catalog.aclexplode(p.proacl) a
         WHERE p.oid OPERATOR(pg_catalog.=) ANY (ARRAY['fence.mark(text)',
                   'fence.fenced_update(text, bigint, text, text[])', 'fence.stats_counts()',
                   'fence.stats_reset()', 'fence.guard_ddl()',
                   'fence.key_resource(text, anycompatible)']::pg_catalog.regprocedure[])
           AND a.grantee OPERATOR(pg_catalog.<>) p.proowner
    LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON %s %s FROM %s', g.kind, g.object,
            CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                 ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(g.grantee)) END);
    END LOOP;
END
$$;
GRANT EXECUTE ON FUNCTION fence.key_resource(text, anycompatible) TO PUBLIC;
GRANT EXECUTE ON FUNCTION fence.mark(text) TO pg_monitor;
GRANT EXECUTE ON FUNCTION fence.stats_counts() TO pg_monitor;
GRANT SELECT ON fence.stats TO pg_monitor;

-- 0.2.0 refuses or renames what 0.1.0 let through; say so now if this
-- database has it, instead of at the next write or ALTER TABLE.  The key
-- types below are those of fence_key_type_allowed() (extension/key_resource.c).
DO $$
DECLARE
    g record;
    args text[];
    rest bytea;
    nul int;
    key_type oid;
    base_type oid;
    escaped bigint;
    example text;
BEGIN
    FOR g IN
        SELECT t.tgrelid::pg_catalog.regclass AS tbl, t.tgrelid AS relid, t.tgname, t.tgtype,
               t.tgargs, t.tgnargs, '' AS resource, '' AS token_column, '' AS key_column,
               (t.tgtype OPERATOR(pg_catalog.&) 1) OPERATOR(pg_catalog.=) 0 AS table_mode
          FROM pg_catalog.pg_trigger t
         WHERE t.tgfoid OPERATOR(pg_catalog.=) 'fence.guard()'::pg_catalog.regprocedure
           AND (t.tgtype OPERATOR(pg_catalog.&) 32) OPERATOR(pg_catalog.=) 0     -- not the TRUNCATE guard
         ORDER BY t.tgrelid, t.tgname
    LOOP
        -- The arguments, each ended by a zero byte, in the database's
        -- encoding: decode them as text, so that a column named "clé" is
        -- found (encode(..., 'escape') would give "cl\303\251").
        args := '{}';
        rest := g.tgargs;
        FOR i IN 1 .. g.tgnargs LOOP
            nul := pg_catalog.position(rest, '\x00'::pg_catalog.bytea);
            args := pg_catalog.array_append(args,
                pg_catalog.convert_from(pg_catalog.substr(rest, 1, nul OPERATOR(pg_catalog.-) 1),
                                        pg_catalog.getdatabaseencoding()));
            rest := pg_catalog.substr(rest, nul OPERATOR(pg_catalog.+) 1);
        END LOOP;
        g.resource := coalesce(args[1], '');
        g.token_column := coalesce(args[2], '');
        g.key_column := coalesce(args[3], '');

        IF g.key_column OPERATOR(pg_catalog.<>) '' AND pg_catalog.strpos(g.resource, ':') OPERATOR(pg_catalog.>) 0 THEN
            RAISE WARNING 'guard of table % uses resource "%" with a key column', g.tbl, g.resource
                USING DETAIL = 'Since 0.2.0 a key-mode resource may not contain ":", so that row names are unambiguous; writes to this table are refused until it is protected again.',
                      HINT = 'Call fence.unprotect() and fence.protect() with a resource without ":".';
        ELSIF g.table_mode AND EXISTS (SELECT FROM pg_catalog.pg_inherits i WHERE i.inhrelid OPERATOR(pg_catalog.=) g.relid) THEN
            RAISE WARNING 'table % is protected without a token or key column but has a parent', g.tbl
                USING DETAIL = 'Rows written through the parent do not fire its statement-level guard.',
                      HINT = 'Detach it, or protect it again with a token or key column.';
        END IF;

        IF NOT g.table_mode AND EXISTS (
            SELECT FROM pg_catalog.pg_trigger o
             WHERE o.tgrelid OPERATOR(pg_catalog.=) g.relid
               AND o.tgname::pg_catalog.text OPERATOR(pg_catalog.>) g.tgname::pg_catalog.text COLLATE "C"
               AND o.tgenabled OPERATOR(pg_catalog.<>) 'D'
               AND (o.tgtype OPERATOR(pg_catalog.&) 3) OPERATOR(pg_catalog.=) 3      -- ROW, BEFORE
               AND (o.tgtype OPERATOR(pg_catalog.&) g.tgtype OPERATOR(pg_catalog.&) 20) OPERATOR(pg_catalog.<>) 0) THEN  -- INSERT, UPDATE
            RAISE WARNING 'table % has a BEFORE ROW trigger that fires after its fence guard "%"', g.tbl, g.tgname
                USING DETAIL = 'Since 0.2.0 the guard refuses INSERT and UPDATE while such a trigger exists, since it could change the key or token column after the check.',
                      HINT = 'Rename the trigger so that its name sorts before the guard''s.';
        END IF;

        -- a key-mode resource with ':' was warned about: it is protected anew
        CONTINUE WHEN g.key_column OPERATOR(pg_catalog.=) ''
                   OR pg_catalog.strpos(g.resource, ':') OPERATOR(pg_catalog.>) 0;
        SELECT a.atttypid INTO key_type FROM pg_catalog.pg_attribute a
         WHERE a.attrelid OPERATOR(pg_catalog.=) g.relid AND a.attname OPERATOR(pg_catalog.=) g.key_column
           AND NOT a.attisdropped;
        IF key_type IS NULL THEN
            RAISE WARNING 'key column "%" of protected table % does not exist', g.key_column, g.tbl
                USING DETAIL = 'Its guard refuses every write until the table is protected again.',
                      HINT = 'Call fence.unprotect() and fence.protect() with an existing key column.';
            CONTINUE;
        END IF;
        base_type := key_type;
        WHILE (SELECT y.typtype FROM pg_catalog.pg_type y WHERE y.oid OPERATOR(pg_catalog.=) base_type) OPERATOR(pg_catalog.=) 'd' LOOP
            SELECT y.typbasetype INTO base_type FROM pg_catalog.pg_type y WHERE y.oid OPERATOR(pg_catalog.=) base_type;
        END LOOP;
        IF base_type NOT IN ('pg_catalog.bool'::pg_catalog.regtype, 'pg_catalog.int2'::pg_catalog.regtype,
                             'pg_catalog.int4'::pg_catalog.regtype, 'pg_catalog.int8'::pg_catalog.regtype,
                             'pg_catalog.numeric'::pg_catalog.regtype, 'pg_catalog.text'::pg_catalog.regtype,
                             'pg_catalog.varchar'::pg_catalog.regtype, 'pg_catalog.bpchar'::pg_catalog.regtype,
                             'pg_catalog.name'::pg_catalog.regtype, 'pg_catalog.uuid'::pg_catalog.regtype) THEN
            RAISE WARNING 'key column "%" of protected table % has type %, which cannot name a resource',
                          g.key_column, g.tbl, pg_catalog.format_type(key_type, NULL)
                USING DETAIL = 'Since 0.2.0 a key''s text form must not depend on settings: the key must be of type boolean, smallint, integer, bigint, numeric, text, character varying, character, name or uuid, or of a domain over one of them; writes to this table are refused until it is protected again.',
                      HINT = 'Call fence.unprotect() and fence.protect() with a key column of one of these types.';
            CONTINUE;
        END IF;

        -- 0.1.0 named a row resource:key; 0.2.0 escapes ':' and '\' in the key
        EXECUTE pg_catalog.format(
            'SELECT pg_catalog.count(*), pg_catalog.min(%1$I::pg_catalog.text) FROM %2$s'
            ' WHERE pg_catalog.strpos(%1$I::pg_catalog.text, '':'') OPERATOR(pg_catalog.>) 0'
            '    OR pg_catalog.strpos(%1$I::pg_catalog.text, ''\'') OPERATOR(pg_catalog.>) 0',
            g.key_column, g.tbl)
            INTO escaped, example;
        IF escaped OPERATOR(pg_catalog.>) 0 THEN
            RAISE WARNING '% rows of protected table % have a key with ":" or "\"', escaped, g.tbl
                USING DETAIL = pg_catalog.format('Since 0.2.0 these characters are escaped in the resource of a row, so these rows are fenced under new names, which do not have the marks of the old ones: the row with key %s is now %s, not %s.',
                                                 example, fence.key_resource(g.resource, example),
                                                 g.resource OPERATOR(pg_catalog.||) ':' OPERATOR(pg_catalog.||) example),
                      HINT = 'Have workers lease the names that fence.key_resource() gives, and raise each new name to the mark of its old one with fence.advance() before old holders could write again.';
        END IF;
    END LOOP;
END
$$;
