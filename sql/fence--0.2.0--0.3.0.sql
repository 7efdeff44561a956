\echo Use "ALTER EXTENSION fence UPDATE TO '0.3.0'" to load this file. \quit

-- fence 0.2.0 -> 0.3.0: no mark, guard or grant of 0.2.0 changes, so
-- fence.fences keeps every row it had (only its storage parameters
-- change); fence.forget() and the floors it leaves are new, and
-- fence.mark() reports a floor for a resource without a mark.  What each object is for is said where sql/fence.sql creates
-- it.

-- The functions below are in 0.3.0's library.  With fence in
-- shared_preload_libraries, the server keeps the library it started with
-- until it restarts, so an update run after the 0.3.0 files were
-- installed and before the restart would find 0.2.0's library, which has
-- none of them: refuse it, before anything changes, with what to do.
DO $probe$
BEGIN
    CREATE FUNCTION fence.fence_library_probe() RETURNS bigint
        AS 'MODULE_PATHNAME', 'fence_reprotect_all' LANGUAGE C;
    DROP FUNCTION fence.fence_library_probe();
EXCEPTION WHEN undefined_function THEN
    RAISE EXCEPTION USING
        ERRCODE = 'object_not_in_prerequisite_state',
        MESSAGE = 'this server still runs the library of fence 0.2.0: restart PostgreSQL first',
        DETAIL = 'fence is in shared_preload_libraries, and a server keeps the library it started with until it restarts; the update to 0.3.0 needs the 0.3.0 library.',
        HINT = 'Restart PostgreSQL, then run ALTER EXTENSION fence UPDATE again.';
END
$probe$;

-- Room on each page of fence.fences for the marks to move without index
-- entries, and VACUUM sooner (sql/fence.sql says why).  Pages written
-- before keep their fill until their rows move or VACUUM FULL rewrites
-- them (docs/maintenance.md).
ALTER TABLE fence.fences SET (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.02);

-- fence.stats counts per database since 0.3.0; its reset is the server's.
COMMENT ON FUNCTION fence.stats_reset() IS
    'Administrators only: forget every count in fence.stats, in every database of the server';

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

-- The mark of one resource, for whoever may see marks without reading
-- fence.fences: the client heals a Redis counter that fell behind with it
-- (announce, fence show).  A resource without a mark reports the floor of
-- its prefix, which its tokens must be above.  It runs as the owner of
-- fence.fences, with the search path pinned so that the caller's cannot
-- redirect it; granted like fence.advance, and to pg_monitor, which reads
-- the marks in fence.stats.
CREATE OR REPLACE FUNCTION fence.mark(resource text)
RETURNS bigint
LANGUAGE sql STABLE STRICT PARALLEL SAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE((SELECT f.token FROM fence.fences f
                      WHERE f.resource OPERATOR(pg_catalog.=) $1),
                    (SELECT l.token FROM fence.floors l
                      WHERE l.prefix OPERATOR(pg_catalog.=) fence.floor_prefix($1)), 0)
$$;
COMMENT ON FUNCTION fence.mark(text) IS
    'Highest accepted token of resource, else the floor of its prefix, 0 if neither, for roles that may not read fence.fences';

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

-- After a failover to an asynchronous standby: raise every mark to its
-- Redis counter (sql/fence.sql).
CREATE FUNCTION fence.resync(resources text[], counters bigint[])
RETURNS bigint
AS 'MODULE_PATHNAME', 'fence_resync'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.resync(text[], bigint[]) FROM PUBLIC;
COMMENT ON FUNCTION fence.resync(text[], bigint[]) IS
    'Administrators only: raise the mark of each resource to its Redis token counter (never lowering, making missing marks); returns how many marks changed; logged';

-- The objects made above get the ALTER DEFAULT PRIVILEGES of the role
-- running the update, which could hand them out behind the REVOKEs: take
-- every privilege on them from everybody but their owner.  (Grants on the
-- objects of 0.2.0 are the administrator's and stay.)
DO $$
DECLARE
    g record;
BEGIN
    FOR g IN
        SELECT 'FUNCTION' AS kind, p.oid::pg_catalog.regprocedure::pg_catalog.text AS object, a.grantee
          FROM pg_catalog.pg_proc p, pg_catalog.aclexplode(p.proacl) a
         WHERE (p.oid OPERATOR(pg_catalog.=) ANY (ARRAY['fence.reprotect_all()',
                                                        'fence.floor_prefix(text)',
                                                        'fence.forget(interval)',
                                                        'fence.edition()',
                                                        'fence.resync(text[],bigint[])']::pg_catalog.regprocedure[])
                OR p.proname OPERATOR(pg_catalog.=) ANY (ARRAY['advance_many', 'fenced_update_many']::pg_catalog.name[]))
           AND p.pronamespace OPERATOR(pg_catalog.=) 'fence'::pg_catalog.regnamespace
           AND a.grantee OPERATOR(pg_catalog.<>) p.proowner
        UNION
        SELECT 'TABLE', 'fence.floors', a.grantee
          FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) a
         WHERE c.oid OPERATOR(pg_catalog.=) 'fence.floors'::pg_catalog.regclass
           AND a.grantee OPERATOR(pg_catalog.<>) c.relowner
    LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON %s %s FROM %s', g.kind, g.object,
            CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                 ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(g.grantee)) END);
    END LOOP;
END
$$;
GRANT EXECUTE ON FUNCTION fence.floor_prefix(text) TO PUBLIC;
GRANT EXECUTE ON FUNCTION fence.edition() TO PUBLIC;
