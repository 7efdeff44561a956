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

-- Which edition of fence a database runs: this extension ('c'), or the
-- SQL edition for hosted PostgreSQL ('sql', sql/hosted/), whose
-- differences the client and the README tell apart by it.  Open to
-- everybody: it says nothing about any resource.
CREATE FUNCTION fence.edition()
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 'c'::pg_catalog.text $$;
COMMENT ON FUNCTION fence.edition() IS
    'Which edition of fence this database runs: c (the extension) or sql (the SQL edition for hosted PostgreSQL)';

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
         WHERE p.oid OPERATOR(pg_catalog.=) ANY (ARRAY['fence.reprotect_all()'::pg_catalog.regprocedure,
                                                       'fence.edition()'::pg_catalog.regprocedure])
           AND a.grantee OPERATOR(pg_catalog.<>) p.proowner
    LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON FUNCTION %s FROM %s', g.object,
            CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                 ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(g.grantee)) END);
    END LOOP;
END
$$;
GRANT EXECUTE ON FUNCTION fence.edition() TO PUBLIC;
