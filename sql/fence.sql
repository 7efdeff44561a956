\echo Use "CREATE EXTENSION fence" to load this file. \quit

-- CREATE EXTENSION installs into schema fence whether it created it or
-- found it there.  A schema that another role owns or may create objects
-- in, or that holds objects already, would let that role replace or shadow
-- what the guard and the functions that write fence.fences rely on:
-- refuse it before anything is created.
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

-- Functions are granted one by one below; the schema itself is visible, so
-- that tables owned by anybody can use the guard trigger.
GRANT USAGE ON SCHEMA fence TO PUBLIC;

-- The high-water mark of each resource: the highest token accepted so far.
-- Only the extension's own functions write it, directly (extension/marks.c).
--
-- Every accepted token that moves a mark updates its row, and no indexed
-- column changes, so the update can stay on the row's page (HOT) and add
-- no index entry, if the page has room: fillfactor 70 leaves it, enough
-- for a third of a page's marks to move in one transaction, or for many
-- transactions to move them one at a time between two prunings.  Dead
-- versions that pruning cannot reach (index entries of rows that moved
-- off their page, rows of fence.reset) wait for VACUUM: 2% of the rows
-- rather than the default 20% start it (docs/maintenance.md).
CREATE TABLE fence.fences (
    resource    text PRIMARY KEY,
    token       bigint NOT NULL CHECK (token > 0),
    owner       text,
    updated_at  timestamptz NOT NULL DEFAULT pg_catalog.now()
) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.02);
REVOKE ALL ON fence.fences FROM PUBLIC;
COMMENT ON TABLE fence.fences IS
    'Highest accepted fencing token per resource; written only by fence functions';
COMMENT ON COLUMN fence.fences.owner IS
    'Lease owner id that presented the token, if it gave one';

-- Keep the marks in pg_dump output: losing them would re-admit old tokens.
SELECT pg_catalog.pg_extension_config_dump('fence.fences', '');

-- What fence.forget() leaves of the marks it deletes: per prefix of their
-- names (fence.floor_prefix), the highest of them, never lowered.  A
-- resource without a mark accepts only a token above its prefix's floor
-- (extension/floors.c).  Written only by fence.forget(); read like
-- fence.fences, and dumped like it: losing a floor would re-admit the
-- old tokens of every resource forgotten under it.
CREATE TABLE fence.floors (
    prefix      text PRIMARY KEY,
    token       bigint NOT NULL CHECK (token > 0),
    updated_at  timestamptz NOT NULL DEFAULT pg_catalog.now()
);
REVOKE ALL ON fence.floors FROM PUBLIC;
COMMENT ON TABLE fence.floors IS
    'Per name prefix, the highest mark that fence.forget deleted: a resource without a mark accepts only tokens above it; written only by fence.forget';
SELECT pg_catalog.pg_extension_config_dump('fence.floors', '');

-- The prefix of a resource's name, whose floor it falls back to once its
-- mark is forgotten: up to its last ':' that no backslash escapes, '' if
-- none (a key-mode row's prefix is its table's resource).  Open to
-- everybody: it only computes a name.
CREATE FUNCTION fence.floor_prefix(resource text)
RETURNS text
AS 'MODULE_PATHNAME', 'fence_floor_prefix'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION fence.floor_prefix(text) IS
    'Prefix of resource whose floor (fence.floors) applies once its mark is forgotten: up to its last unescaped ":", or empty';

-- Which edition of fence a database runs: this extension ('c'), or the
-- SQL edition for hosted PostgreSQL ('sql', sql/hosted/), whose
-- differences the client and docs/hosted.md tell apart by it.  Open to
-- everybody: it says nothing about any resource.
CREATE FUNCTION fence.edition()
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 'c'::pg_catalog.text $$;
COMMENT ON FUNCTION fence.edition() IS
    'Which edition of fence this database runs: c (the extension) or sql (the SQL edition for hosted PostgreSQL)';

CREATE FUNCTION fence.advance(resource text, token bigint, owner text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fence_advance'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.advance(text, bigint, text) FROM PUBLIC;
COMMENT ON FUNCTION fence.advance(text, bigint, text) IS
    'Accept token for resource in this transaction or raise LF001/LF002/LF003; returns the previous mark';

-- The mark of one resource, for whoever may see marks without reading
-- fence.fences: the client heals a Redis counter that fell behind with it
-- (announce, fence show).  A resource without a mark reports the floor of
-- its prefix, which its tokens must be above.  It runs as the owner of
-- fence.fences, with the search path pinned so that the caller's cannot
-- redirect it; granted like fence.advance, and to pg_monitor, which reads
-- the marks in fence.stats.
CREATE FUNCTION fence.mark(resource text)
RETURNS bigint
LANGUAGE sql STABLE STRICT PARALLEL SAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE((SELECT f.token FROM fence.fences f
                      WHERE f.resource OPERATOR(pg_catalog.=) $1),
                    (SELECT l.token FROM fence.floors l
                      WHERE l.prefix OPERATOR(pg_catalog.=) fence.floor_prefix($1)), 0)
$$;
REVOKE ALL ON FUNCTION fence.mark(text) FROM PUBLIC;
COMMENT ON FUNCTION fence.mark(text) IS
    'Highest accepted token of resource, else the floor of its prefix, 0 if neither, for roles that may not read fence.fences';

CREATE FUNCTION fence.fenced_update(resource text, token bigint, query text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fence_fenced_update'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.fenced_update(text, bigint, text) FROM PUBLIC;
COMMENT ON FUNCTION fence.fenced_update(text, bigint, text) IS
    'Accept token for resource, then run query; returns rows processed';

CREATE FUNCTION fence.fenced_update(resource text, token bigint, query text,
                                    VARIADIC params "any")
RETURNS bigint
AS 'MODULE_PATHNAME', 'fence_fenced_update'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.fenced_update(text, bigint, text, "any") FROM PUBLIC;
COMMENT ON FUNCTION fence.fenced_update(text, bigint, text, "any") IS
    'Accept token for resource, then run query with params bound to $1..$n; returns rows processed';

-- Parameters that arrive without a type (node-postgres and pgbench -M
-- prepared send them so) cannot resolve against "any"; an unknown argument
-- prefers the string category, so they pick this overload, and a call with
-- any non-string argument still picks the one above.  Both take untyped,
-- text and varchar arguments with the type the statement gives them.
CREATE FUNCTION fence.fenced_update(resource text, token bigint, query text,
                                    VARIADIC params text[])
RETURNS bigint
AS 'MODULE_PATHNAME', 'fence_fenced_update'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.fenced_update(text, bigint, text, text[]) FROM PUBLIC;
COMMENT ON FUNCTION fence.fenced_update(text, bigint, text, text[]) IS
    'Accept token for resource, then run query with params, typed as the query types $1..$n; returns rows processed';

-- Several resources in one call (a transfer between two accounts, each its
-- own lease): the fence rows are taken in the bytewise order of the names
-- whatever the order given, so that two calls naming the same resources in
-- opposite orders cannot deadlock; all or nothing.  Granted like
-- fence.advance and fence.fenced_update.
CREATE FUNCTION fence.advance_many(resources text[], tokens bigint[], owners text[] DEFAULT NULL)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'fence_advance_many'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.advance_many(text[], bigint[], text[]) FROM PUBLIC;
COMMENT ON FUNCTION fence.advance_many(text[], bigint[], text[]) IS
    'Accept each token for its resource (in name order, all or none) or raise LF001/LF002/LF003; returns the previous marks in the order given';

CREATE FUNCTION fence.fenced_update_many(resources text[], tokens bigint[], query text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fence_fenced_update_many'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.fenced_update_many(text[], bigint[], text) FROM PUBLIC;
COMMENT ON FUNCTION fence.fenced_update_many(text[], bigint[], text) IS
    'Accept each token for its resource (in name order, all or none), then run query; returns rows processed';

CREATE FUNCTION fence.fenced_update_many(resources text[], tokens bigint[], query text,
                                         VARIADIC params "any")
RETURNS bigint
AS 'MODULE_PATHNAME', 'fence_fenced_update_many'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.fenced_update_many(text[], bigint[], text, "any") FROM PUBLIC;
COMMENT ON FUNCTION fence.fenced_update_many(text[], bigint[], text, "any") IS
    'Accept each token for its resource (in name order, all or none), then run query with params bound to $1..$n; returns rows processed';

-- For untyped parameters, as the text[] overload of fence.fenced_update.
CREATE FUNCTION fence.fenced_update_many(resources text[], tokens bigint[], query text,
                                         VARIADIC params text[])
RETURNS bigint
AS 'MODULE_PATHNAME', 'fence_fenced_update_many'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.fenced_update_many(text[], bigint[], text, text[]) FROM PUBLIC;
COMMENT ON FUNCTION fence.fenced_update_many(text[], bigint[], text, text[]) IS
    'Accept each token for its resource (in name order, all or none), then run query with params, typed as the query types $1..$n; returns rows processed';

CREATE FUNCTION fence.reset(resource text, token bigint DEFAULT 0)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fence_reset'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.reset(text, bigint) FROM PUBLIC;
COMMENT ON FUNCTION fence.reset(text, bigint) IS
    'Administrators only: set the mark of resource to token, or remove it (0); logged';

-- After a failover to a standby that missed acknowledged announces: raise
-- each mark to its resource's token counter in Redis (never lowering one),
-- making the marks that are missing; "fence resync" reads the counters and
-- calls it (README: What it promises).  Administrators only, like
-- fence.reset(), and logged.
CREATE FUNCTION fence.resync(resources text[], counters bigint[])
RETURNS bigint
AS 'MODULE_PATHNAME', 'fence_resync'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.resync(text[], bigint[]) FROM PUBLIC;
COMMENT ON FUNCTION fence.resync(text[], bigint[]) IS
    'Administrators only: raise the mark of each resource to its Redis token counter (never lowering, making missing marks); returns how many marks changed; logged';

-- Delete the marks that have not moved for longer than older_than, and
-- raise the floor of each one's prefix to it in the same transaction, so
-- that no token at or below a forgotten mark is accepted again
-- (docs/maintenance.md).  A DELETE waits for the writers that hold a mark's row and
-- checks the row again once they are done: a mark that moved meanwhile is
-- kept (READ COMMITTED), or the call fails with 40001 (REPEATABLE READ,
-- SERIALIZABLE).  Administrators only, like fence.reset(), and logged; it
-- runs as the owner of the tables with the search path pinned.
CREATE FUNCTION fence.forget(older_than interval)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    forgotten bigint;
BEGIN
    IF older_than IS NULL THEN
        RAISE EXCEPTION 'older_than must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    ELSIF older_than < interval '0' THEN
        RAISE EXCEPTION 'older_than must not be negative'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = pg_catalog.format('The interval is %s.', older_than);
    END IF;
    -- wait for the checks that hold an unchanged mark without a row lock,
    -- and send those that come meanwhile to the row lock, which the DELETE
    -- waits for (extension/marks.c, "Unchanged marks")
    LOCK TABLE fence.floors IN EXCLUSIVE MODE;
    WITH gone AS (
        DELETE FROM fence.fences f
         WHERE f.updated_at < pg_catalog.now() - older_than
        RETURNING f.resource, f.token
    ), raised AS (
        INSERT INTO fence.floors AS l (prefix, token)
        SELECT fence.floor_prefix(g.resource), pg_catalog.max(g.token)
          FROM gone g GROUP BY 1
        ON CONFLICT (prefix) DO UPDATE
           SET token = GREATEST(l.token, EXCLUDED.token), updated_at = pg_catalog.now()
    )
    SELECT pg_catalog.count(*) INTO forgotten FROM gone;
    RAISE LOG 'fence forgot % marks not moved for %, by role "%"',
        forgotten, older_than, SESSION_USER;
    RETURN forgotten;
END
$$;
REVOKE ALL ON FUNCTION fence.forget(interval) FROM PUBLIC;
COMMENT ON FUNCTION fence.forget(interval) IS
    'Administrators only: delete the marks not moved for longer than older_than, raising the floor of their prefixes (fence.floors) to them; returns how many; logged';

-- Guard trigger ---------------------------------------------------------------
-- fence.guard() fences plain SQL writes to a table; fence.protect() and
-- fence.unprotect() install and remove it (extension/guard.c, protect.c).
-- Writers of a protected table need no grant: a trigger function is not
-- checked for EXECUTE when it fires, and the check reads and writes
-- fence.fences directly, below privilege checks.  Installing a guard, on the other hand, chooses a resource
-- that the table's writers may then advance, so like fence.advance it is
-- not open to PUBLIC.

CREATE FUNCTION fence.guard()
RETURNS trigger
AS 'MODULE_PATHNAME', 'fence_guard'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.guard() FROM PUBLIC;
COMMENT ON FUNCTION fence.guard() IS
    'Trigger that refuses writes without a valid fencing token; install it with fence.protect';

CREATE FUNCTION fence.protect(tbl regclass, resource text,
                              token_column name DEFAULT NULL,
                              key_column name DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'fence_protect'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.protect(regclass, text, name, name) FROM PUBLIC;
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

CREATE FUNCTION fence.unprotect(tbl regclass)
RETURNS void
AS 'MODULE_PATHNAME', 'fence_unprotect'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.unprotect(regclass) FROM PUBLIC;
COMMENT ON FUNCTION fence.unprotect(regclass) IS
    'Remove the guard from a table you own';

-- A data-only pg_restore into protected tables needs --disable-triggers,
-- which ends with ENABLE TRIGGER ALL and leaves the guards at plain ENABLE,
-- where session_replication_role = replica skips them: this sets them all
-- back.  With the caller's privileges, like fence.protect().
CREATE FUNCTION fence.reprotect_all()
RETURNS bigint
AS 'MODULE_PATHNAME', 'fence_reprotect_all'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.reprotect_all() FROM PUBLIC;
COMMENT ON FUNCTION fence.reprotect_all() IS
    'Set every fence guard of this database back to ENABLE ALWAYS (after pg_restore --disable-triggers or ENABLE TRIGGER ALL); returns how many tables it changed';

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
    'Administrators only: forget every count in fence.stats, in every database of the server';

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

-- Privileges ------------------------------------------------------------------
-- ALTER DEFAULT PRIVILEGES of the installing role (or for all roles in
-- schema fence) apply to what this script creates, and would hand out
-- fence.fences, fence.reset() or fence.advance() behind the REVOKEs
-- above: take every privilege on the extension's tables, views and
-- functions from everybody but their owner, then grant exactly what
-- docs/install.md says.
DO $$
DECLARE
    g record;
BEGIN
    FOR g IN
        SELECT 'TABLE' AS kind, c.oid::pg_catalog.regclass::pg_catalog.text AS object, a.grantee
          FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) a
         WHERE c.relnamespace OPERATOR(pg_catalog.=) 'fence'::pg_catalog.regnamespace
           AND a.grantee OPERATOR(pg_catalog.<>) c.relowner
        UNION
        SELECT 'FUNCTION', p.oid::pg_catalog.regprocedure::pg_catalog.text, a.grantee
          FROM pg_catalog.pg_proc p, pg_catalog.aclexplode(p.proacl) a
         WHERE p.pronamespace OPERATOR(pg_catalog.=) 'fence'::pg_catalog.regnamespace
           AND a.grantee OPERATOR(pg_catalog.<>) p.proowner
    LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON %s %s FROM %s', g.kind, g.object,
            CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                 ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(g.grantee)) END);
    END LOOP;
END
$$;
GRANT EXECUTE ON FUNCTION fence.key_resource(text, anycompatible) TO PUBLIC;
GRANT EXECUTE ON FUNCTION fence.floor_prefix(text) TO PUBLIC;
GRANT EXECUTE ON FUNCTION fence.edition() TO PUBLIC;
GRANT EXECUTE ON FUNCTION fence.mark(text) TO pg_monitor;
GRANT EXECUTE ON FUNCTION fence.stats_counts() TO pg_monitor;
GRANT SELECT ON fence.stats TO pg_monitor;
