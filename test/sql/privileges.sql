-- Privileges, run as roles that are not superusers.  Out of the box an
-- application role that may write a protected table writes it with a valid
-- token through the guard, and can do nothing else with fences: not call
-- fence.advance or fence.fenced_update (until granted, as docs/install.md shows),
-- not touch fence.fences or fence.floors, not call fence.reset or
-- fence.forget, not disable or remove the
-- guard of a table it does not own, not switch triggers off with
-- session_replication_role.

CREATE ROLE regress_fence_owner;	-- owns the tables (the migration role)
CREATE ROLE regress_fence_app;		-- the application: may write them
CREATE ROLE regress_fence_other;	-- another table owner
GRANT CREATE ON SCHEMA public TO regress_fence_owner, regress_fence_other;

-- Nothing in the extension is open to PUBLIC but what must be, and the
-- functions that run as their owner (fence.mark, which reads one mark,
-- and fence.forget) pin their search_path
SELECT p.oid::regprocedure AS function,
       has_function_privilege('regress_fence_app', p.oid, 'EXECUTE') AS app_may_execute,
       p.prosecdef AS security_definer, p.proconfig
  FROM pg_proc p WHERE p.pronamespace = 'fence'::regnamespace ORDER BY 1;
SELECT has_schema_privilege('regress_fence_app', 'fence', 'USAGE') AS schema_usage,
       has_table_privilege('regress_fence_app', 'fence.fences', 'SELECT') AS fences_select,
       has_table_privilege('regress_fence_app', 'fence.fences', 'INSERT, UPDATE, DELETE, TRUNCATE') AS fences_write,
       has_table_privilege('regress_fence_app', 'fence.floors', 'SELECT') AS floors_select,
       has_table_privilege('regress_fence_app', 'fence.floors', 'INSERT, UPDATE, DELETE, TRUNCATE') AS floors_write;

-- Installing a guard is granted like fence.advance: it chooses a resource
-- that the table's writers may then advance
SET ROLE regress_fence_other;
CREATE TABLE pv_other (id int);
SELECT fence.protect('pv_other', 'pv');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT EXECUTE ON FUNCTION fence.protect(regclass, text, name, name),
                          fence.unprotect(regclass), fence.guard()
   TO regress_fence_owner, regress_fence_other;

-- The owner protects its table and lets the application write it
SET ROLE regress_fence_owner;
CREATE TABLE pv_stock (id int PRIMARY KEY, qty int NOT NULL);
INSERT INTO pv_stock VALUES (1, 100), (2, 100);
SELECT fence.protect('pv_stock', 'pv');
CREATE TABLE pv_jobs (id int PRIMARY KEY, state text, fence_token bigint);
SELECT fence.protect('pv_jobs', 'pvj', 'fence_token');
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON pv_stock, pv_jobs TO regress_fence_app;
RESET ROLE;

-- The application writes with a token and no grant on anything in fence
SET ROLE regress_fence_app;
BEGIN;
SET LOCAL fence.resource = 'pv';
SET LOCAL fence.token = '5';
UPDATE pv_stock SET qty = qty - 1 WHERE id = 1;
INSERT INTO pv_stock VALUES (3, 100);
DELETE FROM pv_stock WHERE id = 3;
COMMIT;
BEGIN;
SET LOCAL fence.resource = 'pvj';
SET LOCAL fence.token = '5';
INSERT INTO pv_jobs VALUES (1, 'new', NULL);
COMMIT;
SELECT * FROM pv_jobs;
-- ... and the guard still refuses what it must: no token, a stale token
UPDATE pv_stock SET qty = 0;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SET LOCAL fence.resource = 'pv';
SET LOCAL fence.token = '4';
UPDATE pv_stock SET qty = 0;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SET LOCAL fence.resource = 'pv';
SET LOCAL fence.token = '5';
TRUNCATE pv_stock;
ROLLBACK;

-- It cannot call fence.advance, fence.fenced_update or fence.mark without
-- a grant ...
SELECT fence.advance('pv', 6);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.mark('pv');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.fenced_update('pv', 6, 'UPDATE pv_stock SET qty = 0');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.fenced_update('pv', 6, 'UPDATE pv_stock SET qty = $1', 0);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.fenced_update('pv', 6, 'UPDATE pv_stock SET qty = $1', '0');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance_many(ARRAY['pv'], ARRAY[6]);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.fenced_update_many(ARRAY['pv'], ARRAY[6], 'UPDATE pv_stock SET qty = 0');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.fenced_update_many(ARRAY['pv'], ARRAY[6], 'UPDATE pv_stock SET qty = $1', 0);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.fenced_update_many(ARRAY['pv'], ARRAY[6], 'UPDATE pv_stock SET qty = $1', '0');
\echo :LAST_ERROR_SQLSTATE
-- ... but it may carry several tokens in fence.tokens to the guard
BEGIN;
SET LOCAL fence.tokens = 'pv=5,pvj=5';
UPDATE pv_stock SET qty = qty + 1 WHERE id = 1;
UPDATE pv_jobs SET state = 'seen';
COMMIT;
-- ... nor lower a fence, nor read or write the fence table directly
SELECT fence.reset('pv');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.reset('pv', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fence.fences;
\echo :LAST_ERROR_SQLSTATE
INSERT INTO fence.fences (resource, token) VALUES ('pv2', 1);
\echo :LAST_ERROR_SQLSTATE
UPDATE fence.fences SET token = 1 WHERE resource = 'pv';
\echo :LAST_ERROR_SQLSTATE
DELETE FROM fence.fences WHERE resource = 'pv';
\echo :LAST_ERROR_SQLSTATE
TRUNCATE fence.fences;
\echo :LAST_ERROR_SQLSTATE
-- ... nor forget marks, nor read or write the floors they leave
SELECT fence.forget('0');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fence.floors;
\echo :LAST_ERROR_SQLSTATE
INSERT INTO fence.floors (prefix, token) VALUES ('pv', 1);
\echo :LAST_ERROR_SQLSTATE
DELETE FROM fence.floors;
\echo :LAST_ERROR_SQLSTATE
-- ... nor switch the guard off: not by disabling, dropping or replacing the
-- trigger, not through fence.unprotect or fence.protect, not with
-- session_replication_role
ALTER TABLE pv_stock DISABLE TRIGGER fence_guard;
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE pv_stock DISABLE TRIGGER ALL;
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE pv_stock ENABLE REPLICA TRIGGER fence_guard;
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER fence_guard ON pv_stock;
\echo :LAST_ERROR_SQLSTATE
CREATE OR REPLACE TRIGGER fence_guard BEFORE UPDATE ON pv_stock
    FOR EACH STATEMENT EXECUTE FUNCTION fence.guard('mine', '', '');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.unprotect('pv_stock');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('pv_stock', 'mine');
\echo :LAST_ERROR_SQLSTATE
SET session_replication_role = replica;
\echo :LAST_ERROR_SQLSTATE
-- ... nor raise the step limit
SET fence.max_step = 0;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- A role granted ALL on a protected table (TRIGGER is part of it) may make
-- triggers there, but not replace the guard with one of its own: CREATE OR
-- REPLACE TRIGGER fence_guard would also drop ENABLE ALWAYS.  Nor through
-- a partitioned parent, whose row trigger replaces the partitions' triggers
-- of that name.  Only the table's owner may (0.2.0 let any such role).
SET ROLE regress_fence_owner;
CREATE TABLE pv_all (id int PRIMARY KEY, qty int);
INSERT INTO pv_all VALUES (1, 100);
SELECT fence.protect('pv_all', 'pva');
CREATE TABLE pv_parts (id int, qty int) PARTITION BY LIST (id);
CREATE TABLE pv_part1 PARTITION OF pv_parts FOR VALUES IN (1);
SELECT fence.protect('pv_part1', 'pvp', key_column => 'id');
GRANT ALL ON pv_all, pv_parts, pv_part1 TO regress_fence_app;
RESET ROLE;
SELECT fence.advance('pva', 50);
SET ROLE regress_fence_app;
CREATE FUNCTION pg_temp.nothing() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NULL; END';
CREATE OR REPLACE TRIGGER fence_guard BEFORE INSERT OR UPDATE OR DELETE ON pv_all
    FOR EACH STATEMENT EXECUTE FUNCTION pg_temp.nothing();
\echo :LAST_ERROR_SQLSTATE
CREATE OR REPLACE TRIGGER fence_guard_truncate BEFORE TRUNCATE ON pv_all
    FOR EACH STATEMENT EXECUTE FUNCTION pg_temp.nothing();
\echo :LAST_ERROR_SQLSTATE
CREATE OR REPLACE TRIGGER fence_guard BEFORE INSERT OR UPDATE OR DELETE ON pv_parts
    FOR EACH ROW EXECUTE FUNCTION pg_temp.nothing();
\echo :LAST_ERROR_SQLSTATE
-- ... so the guards still fence: a stale token is refused
BEGIN;
SET LOCAL fence.resource = 'pva';
SET LOCAL fence.token = '2';
UPDATE pv_all SET qty = 0;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
INSERT INTO pv_parts VALUES (1, 0);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT tgrelid::regclass AS tbl, tgname, tgfoid::regproc AS function, tgenabled
  FROM pg_trigger
 WHERE tgrelid IN ('pv_all'::regclass, 'pv_parts'::regclass, 'pv_part1'::regclass)
 ORDER BY 1, 2;
SELECT qty FROM pv_all;
DROP FUNCTION pg_temp.nothing();
-- the owner itself may (it may unprotect the table anyway)
SET ROLE regress_fence_owner;
CREATE OR REPLACE TRIGGER fence_guard_truncate BEFORE TRUNCATE ON pv_all
    FOR EACH STATEMENT EXECUTE FUNCTION fence.guard('pva', '', '');
RESET ROLE;

-- Another owner, even one allowed to protect its own tables, cannot
-- protect, unprotect or disable the guard of a table it does not own
SET ROLE regress_fence_other;
SELECT fence.protect('pv_other', 'pv');
SELECT fence.unprotect('pv_stock');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('pv_stock', 'mine');
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE pv_stock DISABLE TRIGGER fence_guard;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- The grant an application role needs to announce tokens and use
-- fence.fenced_update and the functions for several resources, as
-- docs/install.md shows
GRANT EXECUTE ON FUNCTION fence.advance(text, bigint, text),
                          fence.fenced_update(text, bigint, text),
                          fence.fenced_update(text, bigint, text, "any"),
                          fence.fenced_update(text, bigint, text, text[]),
                          fence.advance_many(text[], bigint[], text[]),
                          fence.fenced_update_many(text[], bigint[], text),
                          fence.fenced_update_many(text[], bigint[], text, "any"),
                          fence.fenced_update_many(text[], bigint[], text, text[]),
                          fence.mark(text)
   TO regress_fence_app;
SET ROLE regress_fence_app;
-- fence.mark reads one mark, 0 for none, whatever the caller's search_path
-- holds: a table or an operator of its own cannot stand in
CREATE TEMP TABLE fences (resource text, token bigint);
INSERT INTO fences VALUES ('pv', 1000);
SET search_path = pg_temp, public;
SELECT fence.mark('pv') AS mark, fence.mark('pv-none') AS none, fence.mark(NULL) AS null_resource;
RESET search_path;
DROP TABLE pg_temp.fences;
BEGIN;
SELECT fence.advance('pv', 6);
UPDATE pv_stock SET qty = qty - 1 WHERE id = 2;
COMMIT;
SELECT fence.fenced_update('pv', 7, 'UPDATE pv_stock SET qty = qty - $1 WHERE id = 1', 10);
SELECT fence.fenced_update('pv', 6, 'UPDATE pv_stock SET qty = qty - $1 WHERE id = 1', 10);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.fenced_update('pv', 7, 'UPDATE pv_stock SET qty = qty - $1 WHERE id = $2', '1', '1');
SELECT fence.advance_many(ARRAY['pvj', 'pv'], ARRAY[6, 7]);
SELECT fence.fenced_update_many(ARRAY['pv', 'pvj'], ARRAY[7, 6],
    'UPDATE pv_stock SET qty = qty - $1 WHERE id = $2', 1, 2);
SELECT fence.fenced_update_many(ARRAY['pv', 'pvj'], ARRAY[7, 6],
    'UPDATE pv_stock SET qty = qty - $1 WHERE id = $2', '1', '2');
SELECT fence.fenced_update_many(ARRAY['pv', 'pvj'], ARRAY[7, 6],
    'UPDATE pv_stock SET qty = qty - 1 WHERE id = 2');
SELECT fence.fenced_update_many(ARRAY['pv', 'pvj'], ARRAY[7, 5],
    'UPDATE pv_stock SET qty = 0');
\echo :LAST_ERROR_SQLSTATE
SELECT id, qty FROM pv_stock ORDER BY id;
-- the grant opens nothing else
SELECT * FROM fence.fences;
\echo :LAST_ERROR_SQLSTATE
SELECT fence.reset('pv', 1);
\echo :LAST_ERROR_SQLSTATE
UPDATE fence.fences SET token = 1 WHERE resource = 'pv';
\echo :LAST_ERROR_SQLSTATE
SELECT fence.forget('0');
\echo :LAST_ERROR_SQLSTATE
UPDATE fence.floors SET token = 1;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT resource, token FROM fence.fences WHERE resource IN ('pv', 'pvj', 'mine') ORDER BY 1;

-- The owner may remove its own guard (the bypass that separate owner and
-- application roles close)
SET ROLE regress_fence_owner;
SELECT fence.unprotect('pv_stock');
RESET ROLE;

DROP TABLE pv_stock, pv_jobs, pv_other, pv_all, pv_parts;
REVOKE CREATE ON SCHEMA public FROM regress_fence_owner, regress_fence_other;
REVOKE EXECUTE ON FUNCTION fence.protect(regclass, text, name, name),
                           fence.unprotect(regclass), fence.guard()
    FROM regress_fence_owner, regress_fence_other;
REVOKE EXECUTE ON FUNCTION fence.advance(text, bigint, text),
                           fence.fenced_update(text, bigint, text),
                           fence.fenced_update(text, bigint, text, "any"),
                           fence.fenced_update(text, bigint, text, text[]),
                           fence.advance_many(text[], bigint[], text[]),
                           fence.fenced_update_many(text[], bigint[], text),
                           fence.fenced_update_many(text[], bigint[], text, "any"),
                           fence.fenced_update_many(text[], bigint[], text, text[]),
                           fence.mark(text)
    FROM regress_fence_app;
DROP ROLE regress_fence_owner, regress_fence_app, regress_fence_other;
SELECT fence.reset(resource) FROM fence.fences
 WHERE resource IN ('pv', 'pvj', 'pva') ORDER BY resource;
