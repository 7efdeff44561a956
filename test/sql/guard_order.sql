-- A row guard checks the row it is handed, so it must be the last BEFORE
-- ROW trigger to see it: triggers fire in name order, and one that fires
-- later could move the row to a key whose fence was never checked, or
-- change its stamped token.  fence.protect refuses a table that has such a
-- trigger, the event trigger fence_guard_ddl refuses CREATE TRIGGER and
-- ALTER TRIGGER ... RENAME that would make one, and the guard itself
-- refuses to fire while one exists, which covers whatever the first two
-- did not see.

CREATE ROLE regress_fence_order_owner;
CREATE ROLE regress_fence_order_trigger;	-- may only add triggers
GRANT CREATE ON SCHEMA public TO regress_fence_order_owner;
GRANT EXECUTE ON FUNCTION fence.protect(regclass, text, name, name),
                          fence.unprotect(regclass), fence.guard(),
                          fence.advance(text, bigint, text)
    TO regress_fence_order_owner, regress_fence_order_trigger;

SET ROLE regress_fence_order_owner;
CREATE TABLE go_t (id int PRIMARY KEY, v int, tok bigint);
SELECT fence.protect('go_t', 'go', 'tok', 'id');
GRANT SELECT, INSERT, UPDATE, DELETE, TRIGGER ON go_t TO regress_fence_order_trigger;
RESET ROLE;

-- What a later trigger would do: move every row to key 2, and lower the
-- stamped token.
CREATE FUNCTION go_rewrite() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.id := 2;
    NEW.tok := 1;
    RETURN NEW;
END
$$;

-- A role with the TRIGGER privilege cannot put it after the guard ...
SET ROLE regress_fence_order_trigger;
CREATE TRIGGER zz_rewrite BEFORE INSERT OR UPDATE ON go_t
    FOR EACH ROW EXECUTE FUNCTION go_rewrite();
\echo :LAST_ERROR_SQLSTATE
-- ... on UPDATE alone either ...
CREATE TRIGGER zz_rewrite BEFORE UPDATE OF v ON go_t
    FOR EACH ROW EXECUTE FUNCTION go_rewrite();
\echo :LAST_ERROR_SQLSTATE
-- before the guard, a trigger is fine: the guard checks the row it made
CREATE TRIGGER a_rewrite BEFORE INSERT ON go_t
    FOR EACH ROW EXECUTE FUNCTION go_rewrite();
BEGIN;
SELECT fence.advance('go:2', 5);
INSERT INTO go_t VALUES (1, 10, NULL);
SELECT * FROM go_t;
ROLLBACK;
BEGIN;
SELECT fence.advance('go:1', 5);
INSERT INTO go_t VALUES (1, 10, NULL);
ROLLBACK;
-- after the guard: triggers that cannot change the row are fine
CREATE TRIGGER zz_delete BEFORE DELETE ON go_t
    FOR EACH ROW EXECUTE FUNCTION go_rewrite();
CREATE TRIGGER zz_after AFTER INSERT OR UPDATE ON go_t
    FOR EACH ROW EXECUTE FUNCTION go_rewrite();
CREATE TRIGGER zz_statement BEFORE INSERT OR UPDATE ON go_t
    FOR EACH STATEMENT EXECUTE FUNCTION go_rewrite();
RESET ROLE;
-- The owner cannot rename a trigger to fire after the guard either
SET ROLE regress_fence_order_owner;
ALTER TRIGGER a_rewrite ON go_t RENAME TO zz_rewrite;
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER a_rewrite ON go_t;
DROP TRIGGER zz_after ON go_t;
DROP TRIGGER zz_statement ON go_t;
RESET ROLE;

-- A trigger made while the event trigger is off: the guard refuses to fire
-- for INSERT and UPDATE, and nothing is written under key 2.
ALTER EVENT TRIGGER fence_guard_ddl DISABLE;
CREATE TRIGGER zz_rewrite BEFORE INSERT OR UPDATE ON go_t
    FOR EACH ROW EXECUTE FUNCTION go_rewrite();
ALTER EVENT TRIGGER fence_guard_ddl ENABLE ALWAYS;
SET ROLE regress_fence_order_trigger;
BEGIN;
SELECT fence.advance('go:1', 5);
INSERT INTO go_t VALUES (1, 10, NULL);
ROLLBACK;
RESET ROLE;
SELECT count(*) FROM go_t;
SELECT resource FROM fence.fences WHERE resource LIKE 'go:%' ORDER BY 1;
-- ... a disabled trigger does not fire and is not refused; DELETE is not
-- refused, a trigger cannot change what it deletes
ALTER TABLE go_t DISABLE TRIGGER zz_rewrite;
BEGIN;
SELECT fence.advance('go:1', 5);
INSERT INTO go_t VALUES (1, 10, NULL);
COMMIT;
ALTER EVENT TRIGGER fence_guard_ddl DISABLE;
ALTER TABLE go_t ENABLE TRIGGER zz_rewrite;
ALTER EVENT TRIGGER fence_guard_ddl ENABLE ALWAYS;
BEGIN;
SELECT fence.advance('go:1', 5);
UPDATE go_t SET v = 11;
ROLLBACK;
BEGIN;
SELECT fence.advance('go:1', 5);
DELETE FROM go_t;
ROLLBACK;
SELECT * FROM go_t;
ALTER TABLE go_t DISABLE TRIGGER zz_rewrite;
-- ... but enabling it again is refused, for the owner too
ALTER TABLE go_t ENABLE TRIGGER zz_rewrite;
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE go_t ENABLE REPLICA TRIGGER zz_rewrite;
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER zz_rewrite ON go_t;
-- A trigger made and disabled in one transaction is fine: that is how
-- pg_dump writes a disabled trigger, and pg_restore runs it (0.2.0
-- refused it: such a dump could not be restored).  The check waits for the commit, so one left enabled is still
-- refused, there.
BEGIN;
CREATE TRIGGER zz_rewrite BEFORE INSERT OR UPDATE ON go_t
    FOR EACH ROW EXECUTE FUNCTION go_rewrite();
ALTER TABLE go_t DISABLE TRIGGER zz_rewrite;
COMMIT;
SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = 'go_t'::regclass ORDER BY 1;
DROP TRIGGER zz_rewrite ON go_t;
BEGIN;
CREATE TRIGGER zz_rewrite BEFORE INSERT OR UPDATE ON go_t
    FOR EACH ROW EXECUTE FUNCTION go_rewrite();
COMMIT;
\echo :LAST_ERROR_SQLSTATE
-- ENABLE TRIGGER ALL, which pg_restore --disable-triggers runs after the
-- data, only warns: refused, it would leave the guard disabled too; the
-- guard refuses writes while the trigger fires after it
ALTER TABLE go_t DISABLE TRIGGER ALL;
ALTER EVENT TRIGGER fence_guard_ddl DISABLE;
CREATE TRIGGER zz_rewrite BEFORE INSERT OR UPDATE ON go_t
    FOR EACH ROW EXECUTE FUNCTION go_rewrite();
ALTER EVENT TRIGGER fence_guard_ddl ENABLE ALWAYS;
ALTER TABLE go_t DISABLE TRIGGER zz_rewrite;
ALTER TABLE go_t ENABLE TRIGGER ALL;
SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = 'go_t'::regclass ORDER BY 1;
BEGIN;
SELECT fence.advance('go:1', 5);
UPDATE go_t SET v = 12;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER zz_rewrite ON go_t;
ALTER TABLE go_t ENABLE ALWAYS TRIGGER fence_guard, ENABLE ALWAYS TRIGGER fence_guard_truncate;
DROP TRIGGER zz_delete ON go_t;

-- A trigger older than the guard: fence.protect refuses the table in row
-- mode (table mode has no row to rewrite)
SET ROLE regress_fence_order_owner;
CREATE TABLE go_old (id int PRIMARY KEY, v int, tok bigint);
RESET ROLE;
CREATE TRIGGER set_v BEFORE INSERT OR UPDATE ON go_old
    FOR EACH ROW EXECUTE FUNCTION go_rewrite();
SET ROLE regress_fence_order_owner;
SELECT fence.protect('go_old', 'go_old', key_column => 'id');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('go_old', 'go_old', token_column => 'tok');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('go_old', 'go_old');
SELECT fence.unprotect('go_old');
-- renamed to fire first, it is fine
ALTER TRIGGER set_v ON go_old RENAME TO a_set_v;
SELECT fence.protect('go_old', 'go_old', key_column => 'id');

-- A trigger created on a partitioned table is cloned to its partitions
CREATE TABLE go_parts (id int, v int, tok bigint) PARTITION BY RANGE (id);
CREATE TABLE go_p1 PARTITION OF go_parts FOR VALUES FROM (0) TO (100);
SELECT fence.protect('go_p1', 'go_p1', key_column => 'id');
RESET ROLE;
CREATE TRIGGER zz_rewrite BEFORE INSERT ON go_parts
    FOR EACH ROW EXECUTE FUNCTION go_rewrite();
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM pg_trigger WHERE tgname = 'zz_rewrite';

DROP TABLE go_t, go_old, go_parts;
DROP FUNCTION go_rewrite();
SELECT fence.reset(resource) FROM fence.fences WHERE resource LIKE 'go%';
REVOKE CREATE ON SCHEMA public FROM regress_fence_order_owner;
REVOKE EXECUTE ON FUNCTION fence.protect(regclass, text, name, name),
                           fence.unprotect(regclass), fence.guard(),
                           fence.advance(text, bigint, text)
    FROM regress_fence_order_owner, regress_fence_order_trigger;
DROP ROLE regress_fence_order_owner;
DROP ROLE regress_fence_order_trigger;
