-- Every function of the SQL edition pins its search path, pg_catalog
-- first and pg_temp last (test/sql/hostile_path.sql runs
-- them all under a hostile path), but the public fenced_update and
-- fenced_update_many, which run the caller's query under the caller's
-- path, and fence.protect, whose messages name types as that path shows
-- them, with every name in them qualified (operators too); and the
-- helpers that only fence's owner may call (no grant to PUBLIC), from the
-- functions that pin their path and run as that owner, whose path they
-- inherit (a path of their own would cost every call a settings save).
SELECT p.oid::regprocedure AS function, l.lanname, p.proconfig,
       EXISTS (SELECT FROM aclexplode(COALESCE(p.proacl, acldefault('f', p.proowner))) a
                WHERE a.grantee = 0) AS public
  FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
 WHERE p.pronamespace = 'fence'::regnamespace
   AND p.proconfig IS DISTINCT FROM '{"search_path=pg_catalog, pg_temp"}'
 ORDER BY p.oid::regprocedure::text COLLATE "C";
-- the names the public ones call without a schema: none but keywords and
-- an alias (test/sql/hostile_path.sql calls them all under a hostile path)
SELECT DISTINCT m[1] AS unqualified
  FROM pg_proc p, regexp_matches(p.prosrc, '(?:^|[^.\w])([a-z_]\w*)\s*\(', 'gi') AS m
 WHERE p.pronamespace = 'fence'::regnamespace AND p.proconfig IS NULL AND p.proname !~ '^_'
 ORDER BY 1;
