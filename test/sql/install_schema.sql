-- CREATE EXTENSION fence into a schema "fence" that was there before: only
-- when a superuser (or the installing role) owns it, nobody else may create
-- objects in it, and it holds none.  Otherwise another role could replace
-- or shadow what the extension relies on.  Nothing is created when it is
-- refused.
\set regress_db :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS fence_install_schema;
CREATE DATABASE fence_install_schema;
RESET client_min_messages;
CREATE ROLE regress_fence_squatter;
GRANT CREATE ON DATABASE fence_install_schema TO regress_fence_squatter;
\c fence_install_schema

-- A role that is not a superuser made the schema first, with a function
-- that the extension's would-be search path could find
SET ROLE regress_fence_squatter;
CREATE SCHEMA fence;
CREATE FUNCTION fence.now() RETURNS timestamptz LANGUAGE sql AS 'SELECT now()';
RESET ROLE;
CREATE EXTENSION fence;
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS extensions FROM pg_extension WHERE extname = 'fence';
SELECT count(*) AS tables FROM pg_class WHERE relnamespace = 'fence'::regnamespace;
-- a superuser owns it now, but the function is still there
ALTER SCHEMA fence OWNER TO CURRENT_USER;
CREATE EXTENSION fence;
\echo :LAST_ERROR_SQLSTATE
DROP FUNCTION fence.now();
-- another role may create objects in it
GRANT CREATE ON SCHEMA fence TO regress_fence_squatter;
CREATE EXTENSION fence;
\echo :LAST_ERROR_SQLSTATE
GRANT CREATE ON SCHEMA fence TO PUBLIC;
REVOKE CREATE ON SCHEMA fence FROM regress_fence_squatter;
CREATE EXTENSION fence;
\echo :LAST_ERROR_SQLSTATE
REVOKE CREATE ON SCHEMA fence FROM PUBLIC;
SELECT count(*) AS extensions FROM pg_extension WHERE extname = 'fence';
-- an empty schema of a superuser, only USAGE for others: fine
GRANT USAGE ON SCHEMA fence TO regress_fence_squatter;
CREATE EXTENSION fence;
SELECT extversion FROM pg_extension WHERE extname = 'fence';
DROP EXTENSION fence;
-- a schema that CREATE EXTENSION makes itself is fine too
DROP SCHEMA fence;
CREATE EXTENSION fence;
SELECT extversion, nspowner = (SELECT oid FROM pg_roles WHERE rolname = CURRENT_USER) AS ours
  FROM pg_extension JOIN pg_namespace ON nspname = 'fence' WHERE extname = 'fence';


-- Default privileges of the installing role apply to what the script
-- creates: the script takes them back, and grants only what it means to
-- (0.2.0 did not).  Without that, the squatter could write fence.fences
-- and lower a mark with fence.reset.
DROP EXTENSION fence;
ALTER DEFAULT PRIVILEGES GRANT ALL ON TABLES TO regress_fence_squatter;
ALTER DEFAULT PRIVILEGES GRANT EXECUTE ON FUNCTIONS TO regress_fence_squatter;
ALTER DEFAULT PRIVILEGES GRANT ALL ON TABLES TO pg_monitor;
CREATE EXTENSION fence;
SELECT c.oid::regclass::text AS object, a.privilege_type, r.rolname AS grantee
  FROM pg_class c, aclexplode(c.relacl) a JOIN pg_roles r ON r.oid = a.grantee
 WHERE c.relnamespace = 'fence'::regnamespace AND a.grantee <> c.relowner
UNION ALL
SELECT p.oid::regprocedure::text, a.privilege_type, coalesce(r.rolname, 'PUBLIC')
  FROM pg_proc p, aclexplode(p.proacl) a LEFT JOIN pg_roles r ON r.oid = a.grantee
 WHERE p.pronamespace = 'fence'::regnamespace AND a.grantee <> p.proowner
 ORDER BY 1, 2, 3;
SELECT fence.advance('dp', 50);
SET ROLE regress_fence_squatter;
SELECT fence.reset('dp', 1);
\echo :LAST_ERROR_SQLSTATE
UPDATE fence.fences SET token = 1;
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance('dp', 51);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.key_resource('dp', 1);
RESET ROLE;
SELECT resource, token FROM fence.fences;
ALTER DEFAULT PRIVILEGES REVOKE ALL ON TABLES FROM regress_fence_squatter, pg_monitor;
ALTER DEFAULT PRIVILEGES REVOKE EXECUTE ON FUNCTIONS FROM regress_fence_squatter;
-- default privileges on schemas would let the squatter create objects in
-- the schema CREATE EXTENSION makes: that is refused, as above
DROP EXTENSION fence;
DROP SCHEMA fence;
ALTER DEFAULT PRIVILEGES GRANT CREATE ON SCHEMAS TO regress_fence_squatter;
CREATE EXTENSION fence;
\echo :LAST_ERROR_SQLSTATE
ALTER DEFAULT PRIVILEGES REVOKE CREATE ON SCHEMAS FROM regress_fence_squatter;
SELECT count(*) AS extensions FROM pg_extension WHERE extname = 'fence';

\c :regress_db
DROP DATABASE fence_install_schema;
DROP ROLE regress_fence_squatter;
