\echo Use "ALTER EXTENSION fence UPDATE TO '0.3.0'" to load this file. \quit

-- fence 0.2.0 -> 0.3.0: no mark, guard or grant of 0.2.0 changes, so
-- fence.fences keeps every row it had (only its storage parameters
-- change).  What each object is for is said where sql/fence.sql creates
-- it.

-- Room on each page of fence.fences for the marks to move without index
-- entries, and VACUUM sooner (sql/fence.sql says why).  Pages written
-- before keep their fill until their rows move or VACUUM FULL rewrites
-- them (README: Maintenance).
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

-- The objects made above get the ALTER DEFAULT PRIVILEGES of the role
-- running the update, which could hand them out behind the REVOKEs: take
-- every privilege on them from everybody but their owner.  (Grants on the
-- objects of 0.2.0 are the administrator's and stay.)
DO $$
DECLARE
    g record;
BEGIN
    FOR g IN
        SELECT p.oid::pg_catalog.regprocedure::pg_catalog.text AS object, a.grantee
          FROM pg_catalog.pg_proc p, pg_catalog.aclexplode(p.proacl) a
         WHERE (p.oid OPERATOR(pg_catalog.=) 'fence.reprotect_all()'::pg_catalog.regprocedure
                OR p.proname OPERATOR(pg_catalog.=) ANY (ARRAY['advance_many', 'fenced_update_many']::pg_catalog.name[]))
           AND p.pronamespace OPERATOR(pg_catalog.=) 'fence'::pg_catalog.regnamespace
           AND a.grantee OPERATOR(pg_catalog.<>) p.proowner
    LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON FUNCTION %s FROM %s', g.object,
            CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                 ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(g.grantee)) END);
    END LOOP;
END
$$;
