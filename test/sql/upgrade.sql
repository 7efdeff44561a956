-- ALTER EXTENSION fence UPDATE from 0.1.0 (through 0.2.0) and from 0.2.0:
-- every mark and guard is kept, and the upgraded extension has exactly the
-- objects, definitions and grants of a fresh install.
\set regress_db :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS fence_upgrade_old;
DROP DATABASE IF EXISTS fence_upgrade_new;
DROP DATABASE IF EXISTS fence_upgrade_mid;
CREATE DATABASE fence_upgrade_old;
CREATE DATABASE fence_upgrade_new;
CREATE DATABASE fence_upgrade_mid;
RESET client_min_messages;

-- What an installation of fence consists of: every member object with its
-- definition, privileges (as a set: the order of an ACL's entries depends on
-- the order of the grants) and comment, digested so that two databases can
-- be compared.  Kept in a psql variable, to be created in each database.
SELECT $def$CREATE FUNCTION pg_temp.fence_fingerprint() RETURNS TABLE (members bigint, digest text)
LANGUAGE sql AS $$
  WITH m AS (
    SELECT d.classid, d.objid, d.objsubid,
           pg_describe_object(d.classid, d.objid, d.objsubid) AS what
      FROM pg_depend d JOIN pg_extension e ON d.refobjid = e.oid
     WHERE d.refclassid = 'pg_extension'::regclass AND e.extname = 'fence'
       AND d.deptype = 'e'),
  defs AS (
    SELECT m.what || ' | ' || coalesce(obj_description(m.objid, m.classid::regclass::text), '') || ' | ' ||
           CASE m.classid
             WHEN 'pg_proc'::regclass THEN
               (SELECT pg_get_functiondef(p.oid) ||
                       (SELECT string_agg(a.grantee::regrole || ':' || a.privilege_type, ',' ORDER BY a.grantee::regrole::text, a.privilege_type)
                          FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a)
                  FROM pg_proc p WHERE p.oid = m.objid)
             WHEN 'pg_class'::regclass THEN
               (SELECT c.relkind::text || coalesce(c.reloptions::text, '') ||
                       (SELECT string_agg(a.grantee::regrole || ':' || a.privilege_type, ',' ORDER BY a.grantee::regrole::text, a.privilege_type)
                          FROM aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a) ||
                       coalesce(pg_get_viewdef(c.oid), '') ||
                       (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod) ||
                                          CASE WHEN a.attnotnull THEN ' not null' ELSE '' END ||
                                          coalesce(' ' || col_description(c.oid, a.attnum), ''), ', ' ORDER BY a.attnum)
                          FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) ||
                       coalesce((SELECT string_agg(pg_get_constraintdef(k.oid), ', ' ORDER BY k.conname)
                                   FROM pg_constraint k WHERE k.conrelid = c.oid), '') ||
                       coalesce((SELECT string_agg(pg_get_indexdef(i.indexrelid), ', ' ORDER BY i.indexrelid::regclass::text)
                                   FROM pg_index i WHERE i.indrelid = c.oid), '')
                  FROM pg_class c WHERE c.oid = m.objid)
             WHEN 'pg_event_trigger'::regclass THEN
               (SELECT t.evtevent || ' ' || t.evtenabled::text || ' ' || t.evtfoid::regproc || ' ' || t.evttags::text
                  FROM pg_event_trigger t WHERE t.oid = m.objid)
             ELSE '' END AS def
      FROM m)
  SELECT count(*), md5(string_agg(def, E'\n' ORDER BY def)) FROM defs
$$$def$ AS fingerprint_def \gset

-- A database on 0.1.0, with a mark, a guarded table and a grant.
\c fence_upgrade_old
CREATE EXTENSION fence VERSION '0.1.0';
:fingerprint_def;
SELECT extversion FROM pg_extension WHERE extname = 'fence';
SELECT fence.advance('inv', 41, 'worker-a');
SELECT fence.advance('jobs', 7);
CREATE TABLE inv (sku text PRIMARY KEY, qty int NOT NULL);
INSERT INTO inv VALUES ('widget', 10);
SELECT fence.protect('inv', 'inv');
CREATE ROLE fence_upgrade_app;
GRANT EXECUTE ON FUNCTION fence.advance(text, bigint, text) TO fence_upgrade_app;
-- Two guards that 0.1.0 allowed and 0.2.0 refuses, made as 0.1.0's
-- fence.protect() made them (the library loaded here is already 0.2.0's):
-- the upgrade warns about both.
CREATE TABLE rows_by_key (id int PRIMARY KEY, n int);
CREATE TRIGGER fence_guard BEFORE INSERT OR UPDATE OR DELETE ON rows_by_key
    FOR EACH ROW EXECUTE FUNCTION fence.guard('app:rows', '', 'id');
CREATE TABLE stock_parent (sku text, qty int);
CREATE TABLE stock_child (sku text, qty int);
SELECT fence.protect('stock_child', 'stock');
ALTER TABLE stock_child INHERIT stock_parent;
-- ... and three more: a key whose type 0.2.0 refuses (also through a
-- domain), keys whose names 0.2.0 escapes, and a BEFORE ROW trigger that
-- fires after the guard
CREATE TABLE events (at timestamptz PRIMARY KEY, n int);
CREATE TRIGGER fence_guard BEFORE INSERT OR UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION fence.guard('events', '', 'at');
CREATE DOMAIN stamp AS timestamp;
CREATE TABLE stamped (at stamp PRIMARY KEY, n int);
CREATE TRIGGER fence_guard BEFORE INSERT OR UPDATE OR DELETE ON stamped
    FOR EACH ROW EXECUTE FUNCTION fence.guard('stamped', '', 'at');
CREATE TABLE docs (path text PRIMARY KEY, body text);
INSERT INTO docs VALUES ('a:b', ''), ('c\d', ''), ('plain', '');
CREATE TRIGGER fence_guard BEFORE INSERT OR UPDATE OR DELETE ON docs
    FOR EACH ROW EXECUTE FUNCTION fence.guard('docs', '', 'path');
CREATE TABLE jobs (id int PRIMARY KEY, state text, tok bigint);
CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END';
CREATE TRIGGER set_state BEFORE UPDATE ON jobs FOR EACH ROW EXECUTE FUNCTION touch();
CREATE TRIGGER fence_guard BEFORE INSERT OR UPDATE OR DELETE ON jobs
    FOR EACH ROW EXECUTE FUNCTION fence.guard('jobs', 'tok', '');
-- ... and keys whose column name is not plain ASCII: the update must find
-- the column (it read the trigger's arguments byte-escaped and skipped the
-- table without a word), and a guard naming a column that is gone
CREATE TABLE "clés" ("clé" text PRIMARY KEY);
INSERT INTO "clés" VALUES ('x:1'), ('y');
CREATE TRIGGER fence_guard BEFORE INSERT OR UPDATE OR DELETE ON "clés"
    FOR EACH ROW EXECUTE FUNCTION fence.guard('clés', '', 'clé');
CREATE TABLE gone (id int PRIMARY KEY);
CREATE TRIGGER fence_guard BEFORE INSERT OR UPDATE OR DELETE ON gone
    FOR EACH ROW EXECUTE FUNCTION fence.guard('gone', '', 'was_here');
-- (fine: a domain over an allowed type, a key without ':' or '\')
CREATE DOMAIN sku AS text;
CREATE TABLE skus (id sku PRIMARY KEY);
INSERT INTO skus VALUES ('plain');
CREATE TRIGGER fence_guard BEFORE INSERT OR UPDATE OR DELETE ON skus
    FOR EACH ROW EXECUTE FUNCTION fence.guard('skus', '', 'id');

-- 0.2.0 checks schema fence as CREATE EXTENSION does: another role that
-- may create objects in it makes the upgrade fail, and change nothing
GRANT CREATE ON SCHEMA fence TO fence_upgrade_app;
ALTER EXTENSION fence UPDATE TO '0.2.0';
\echo :LAST_ERROR_SQLSTATE
REVOKE CREATE ON SCHEMA fence FROM fence_upgrade_app;
SELECT extversion FROM pg_extension WHERE extname = 'fence';
-- Default privileges of the role that updates apply to the objects the
-- updates make: the scripts take them back (the fingerprint below
-- compares grants)
ALTER DEFAULT PRIVILEGES GRANT ALL ON TABLES TO fence_upgrade_app;
ALTER DEFAULT PRIVILEGES GRANT EXECUTE ON FUNCTIONS TO fence_upgrade_app;
ALTER EXTENSION fence UPDATE TO '0.2.0';
SELECT extversion FROM pg_extension WHERE extname = 'fence';
ALTER EXTENSION fence UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'fence';
ALTER DEFAULT PRIVILEGES REVOKE ALL ON TABLES FROM fence_upgrade_app;
ALTER DEFAULT PRIVILEGES REVOKE EXECUTE ON FUNCTIONS FROM fence_upgrade_app;

-- The marks are the ones 0.1.0 accepted: nothing older gets in.
SELECT resource, token, owner FROM fence.fences ORDER BY resource;
BEGIN;
SELECT fence.advance('inv', 40);
ROLLBACK;
-- The guard installed by 0.1.0 still fences, and the grant is kept.
BEGIN;
UPDATE inv SET qty = qty - 1;
ROLLBACK;
BEGIN;
SELECT fence.advance('inv', 42, 'worker-b');
UPDATE inv SET qty = qty - 1;
COMMIT;
SELECT qty FROM inv;
SELECT has_function_privilege('fence_upgrade_app', 'fence.advance(text, bigint, text)', 'EXECUTE');
REVOKE EXECUTE ON FUNCTION fence.advance(text, bigint, text) FROM fence_upgrade_app;
-- What 0.2.0 added works.
SELECT fence.key_resource('inv', 'a:b');
SELECT fence.fenced_update('inv', 42, 'UPDATE inv SET qty = qty + $1 WHERE sku = $2', '1', 'widget');
SELECT qty FROM inv;
SELECT * FROM pg_temp.fence_fingerprint() \gset old_
-- The event trigger refuses what 0.1.0 let through.
CREATE TABLE inv_parent (sku text, qty int);
ALTER TABLE inv INHERIT inv_parent;

-- A database made on 0.2.0 and updated ...
\c fence_upgrade_mid
CREATE EXTENSION fence VERSION '0.2.0';
ALTER DEFAULT PRIVILEGES GRANT ALL ON TABLES TO fence_upgrade_app;
ALTER DEFAULT PRIVILEGES GRANT EXECUTE ON FUNCTIONS TO fence_upgrade_app;
ALTER EXTENSION fence UPDATE;
ALTER DEFAULT PRIVILEGES REVOKE ALL ON TABLES FROM fence_upgrade_app;
ALTER DEFAULT PRIVILEGES REVOKE EXECUTE ON FUNCTIONS FROM fence_upgrade_app;
:fingerprint_def;
SELECT extversion FROM pg_extension WHERE extname = 'fence';
SELECT * FROM pg_temp.fence_fingerprint() \gset mid_

-- ... and a fresh install of 0.3.0 have exactly the same objects.
\c fence_upgrade_new
CREATE EXTENSION fence;
:fingerprint_def;
SELECT extversion FROM pg_extension WHERE extname = 'fence';
SELECT * FROM pg_temp.fence_fingerprint() \gset new_
SELECT :old_members AS members, :old_members = :new_members AS same_members,
       :'old_digest' = :'new_digest' AS same_definitions,
       :mid_members = :new_members AS mid_same_members,
       :'mid_digest' = :'new_digest' AS mid_same_definitions;

\c :regress_db
DROP DATABASE fence_upgrade_old;
DROP DATABASE fence_upgrade_new;
DROP DATABASE fence_upgrade_mid;
DROP ROLE fence_upgrade_app;
