-- Protected tables and their parents.  Statement-level triggers fire only
-- on the table a statement names, so a table protected in table mode must
-- never get a parent: fence.protect refuses it for a child, and the event
-- trigger fence_guard_ddl refuses every ALTER TABLE (ATTACH PARTITION,
-- INHERIT) or hand-made CREATE TRIGGER that would make one, for any role
-- and whatever session_replication_role says.  Row-level guards (key or
-- token column) fire for rows written through a parent: routed INSERTs,
-- COPY and MERGE, UPDATE and DELETE through the parent, rows moving between
-- partitions; and a parent's TRUNCATE fires its children's TRUNCATE guards.

CREATE ROLE regress_fence_parent_owner;
GRANT CREATE ON SCHEMA public TO regress_fence_parent_owner;
GRANT EXECUTE ON FUNCTION fence.protect(regclass, text, name, name),
                          fence.unprotect(regclass), fence.guard(),
                          fence.advance(text, bigint, text)
    TO regress_fence_parent_owner;
SET ROLE regress_fence_parent_owner;

-- ATTACH PARTITION and INHERIT of a table-mode protected table are refused
CREATE TABLE gpa_parts (id int, k int, tok bigint) PARTITION BY RANGE (id);
CREATE TABLE gpa_t (id int, k int, tok bigint);
SELECT fence.protect('gpa_t', 'gpa');
ALTER TABLE gpa_parts ATTACH PARTITION gpa_t FOR VALUES FROM (0) TO (100);
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE gpa_base (id int, k int, tok bigint);
ALTER TABLE gpa_t INHERIT gpa_base;
\echo :LAST_ERROR_SQLSTATE
-- ... also one level up: a partitioned table that would become a partition
-- is fine, its partitions were checked when they were attached
CREATE TABLE gpa_top (id int, k int, tok bigint) PARTITION BY RANGE (id);
ALTER TABLE gpa_top ATTACH PARTITION gpa_parts FOR VALUES FROM (0) TO (1000);
-- nothing was attached or inherited
SELECT count(*) FROM pg_inherits WHERE inhrelid = 'gpa_t'::regclass;
-- a guard made by hand on a child is refused the same way, unless it is a
-- row-level one
CREATE TABLE gpa_child () INHERITS (gpa_base);
CREATE TRIGGER gpa_hand BEFORE INSERT ON gpa_child FOR EACH STATEMENT
    EXECUTE FUNCTION fence.guard('gpa', '', '');
\echo :LAST_ERROR_SQLSTATE
CREATE TRIGGER gpa_hand BEFORE INSERT ON gpa_child FOR EACH ROW
    EXECUTE FUNCTION fence.guard('gpa', 'tok', '');
DROP TRIGGER gpa_hand ON gpa_child;
-- other ALTER TABLE commands on the table and its would-be parents go on
ALTER TABLE gpa_t ADD COLUMN note text;
ALTER TABLE gpa_base ADD COLUMN note text;
-- the way that works: protect with a token column, then attach
SELECT fence.unprotect('gpa_t');
SELECT fence.protect('gpa_t', 'gpa', token_column => 'tok');
ALTER TABLE gpa_t DROP COLUMN note;
ALTER TABLE gpa_parts ATTACH PARTITION gpa_t FOR VALUES FROM (0) TO (100);
-- ... and going back to table mode while it is a partition is refused too
SELECT fence.unprotect('gpa_t');
SELECT fence.protect('gpa_t', 'gpa');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.protect('gpa_t', 'gpa', token_column => 'tok');

-- The owner cannot switch the event trigger off
ALTER EVENT TRIGGER fence_guard_ddl DISABLE;
\echo :LAST_ERROR_SQLSTATE
DROP EVENT TRIGGER fence_guard_ddl;
\echo :LAST_ERROR_SQLSTATE
SET session_replication_role = replica;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT evtname, evtevent, evtenabled, evttags FROM pg_event_trigger
 WHERE evtname = 'fence_guard_ddl';
-- and replica mode does not skip it, even for a superuser
CREATE TABLE gpa_t2 (id int, k int, tok bigint);
SELECT fence.protect('gpa_t2', 'gpa');
SET session_replication_role = replica;
ALTER TABLE gpa_parts ATTACH PARTITION gpa_t2 FOR VALUES FROM (100) TO (200);
\echo :LAST_ERROR_SQLSTATE
RESET session_replication_role;
DROP TABLE gpa_t2;
SET ROLE regress_fence_parent_owner;

-- Rows written through the partitioned parent fire the partition's row guard
CREATE TABLE gpa_p2 PARTITION OF gpa_parts FOR VALUES FROM (100) TO (200);
SELECT fence.protect('gpa_p2', 'gpa', token_column => 'tok');
INSERT INTO gpa_parts VALUES (1, 1, NULL);
\echo :LAST_ERROR_SQLSTATE
COPY gpa_parts FROM STDIN;
2	1	\N
\.
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fence.advance('gpa', 5);
INSERT INTO gpa_parts VALUES (1, 1, NULL), (101, 1, NULL);
COPY gpa_parts FROM STDIN;
2	1	\N
\.
MERGE INTO gpa_parts p USING (VALUES (3), (102)) v(id) ON p.id = v.id
    WHEN NOT MATCHED THEN INSERT VALUES (v.id, 1, NULL);
COMMIT;
SELECT tableoid::regclass, id, tok FROM gpa_parts ORDER BY id;
SELECT fence.advance('gpa', 6);
UPDATE gpa_parts SET k = 2;
\echo :LAST_ERROR_SQLSTATE
DELETE FROM gpa_parts WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
MERGE INTO gpa_parts p USING (VALUES (1)) v(id) ON p.id = v.id
    WHEN MATCHED THEN UPDATE SET k = 3;
\echo :LAST_ERROR_SQLSTATE
-- a row moving to another partition fires the source's UPDATE and DELETE
-- guards and the destination's INSERT guard: the new holder's token (6)
-- ends up in the moved row, a stale token (5) moves nothing
BEGIN;
SET LOCAL fence.resource = 'gpa';
SET LOCAL fence.token = '5';
UPDATE gpa_parts SET id = 150 WHERE id = 1;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fence.advance('gpa', 6);
UPDATE gpa_parts SET id = 150 WHERE id = 1;
UPDATE gpa_parts SET k = 4 WHERE id = 2;
COMMIT;
SELECT tableoid::regclass, id, k, tok FROM gpa_parts ORDER BY id;
-- TRUNCATE of the parent fires each partition's TRUNCATE guard
TRUNCATE gpa_parts;
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM gpa_parts;

-- Key mode across partitions: the key decides the partition, and moving a
-- row to another key (and partition) needs the tokens of both keys
CREATE TABLE gpa_kparts (k int, v int) PARTITION BY LIST (k);
CREATE TABLE gpa_k1 PARTITION OF gpa_kparts FOR VALUES IN (1);
CREATE TABLE gpa_k2 PARTITION OF gpa_kparts FOR VALUES IN (2);
SELECT fence.protect('gpa_k1', 'gpk', key_column => 'k');
SELECT fence.protect('gpa_k2', 'gpk', key_column => 'k');
BEGIN;
SELECT fence.advance('gpk:1', 1);
INSERT INTO gpa_kparts VALUES (1, 0);
INSERT INTO gpa_kparts VALUES (2, 0);
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fence.advance('gpk:1', 1);
INSERT INTO gpa_kparts VALUES (1, 0);
UPDATE gpa_kparts SET k = 2;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fence.advance('gpk:1', 1);
SELECT fence.advance('gpk:2', 1);
INSERT INTO gpa_kparts VALUES (1, 0);
UPDATE gpa_kparts SET k = 2;
COMMIT;
SELECT tableoid::regclass, k, v FROM gpa_kparts;
-- a TRUNCATE of the parent needs the token of the bare resource
BEGIN;
SELECT fence.advance('gpk:2', 1);
TRUNCATE gpa_kparts;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE

-- Inheritance: UPDATE and DELETE through the parent fire the child's row
-- guard, TRUNCATE of the parent its TRUNCATE guard; TRUNCATE ONLY leaves
-- the child alone
SELECT fence.protect('gpa_child', 'gpc', token_column => 'tok');
BEGIN;
SELECT fence.advance('gpc', 1);
INSERT INTO gpa_child VALUES (1, 1, NULL, NULL);
COMMIT;
UPDATE gpa_base SET k = 2;
\echo :LAST_ERROR_SQLSTATE
DELETE FROM gpa_base;
\echo :LAST_ERROR_SQLSTATE
TRUNCATE gpa_base;
\echo :LAST_ERROR_SQLSTATE
TRUNCATE ONLY gpa_base;
SELECT count(*) FROM gpa_base;

-- CREATE SCHEMA runs its elements under its own command tag: they are
-- checked all the same.  A hand-made statement-level guard on a child ...
RESET ROLE;
CREATE SCHEMA gpa_s
    CREATE TABLE child () INHERITS (public.gpa_base)
    CREATE TRIGGER hand BEFORE INSERT ON child FOR EACH STATEMENT
        EXECUTE FUNCTION fence.guard('gpa', '', '');
\echo :LAST_ERROR_SQLSTATE
-- ... or a trigger that fires after a hand-made row guard
CREATE SCHEMA gpa_s
    CREATE TABLE t (id int)
    CREATE TRIGGER guard BEFORE INSERT ON t FOR EACH ROW
        EXECUTE FUNCTION fence.guard('gps', '', 'id')
    CREATE TRIGGER later BEFORE INSERT ON t FOR EACH ROW
        EXECUTE FUNCTION fence.guard('gps', '', 'id');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM pg_namespace WHERE nspname = 'gpa_s';
-- A protected table cannot become a parent by PARTITION OF: it is not
-- partitioned, and protect refuses partitioned tables
CREATE TABLE gpa_sub PARTITION OF gpa_child FOR VALUES FROM (0) TO (1);
\echo :LAST_ERROR_SQLSTATE

DROP TABLE gpa_top, gpa_base, gpa_kparts, gpa_child CASCADE;
DROP TABLE IF EXISTS gpa_t;
REVOKE CREATE ON SCHEMA public FROM regress_fence_parent_owner;
REVOKE EXECUTE ON FUNCTION fence.protect(regclass, text, name, name),
                           fence.unprotect(regclass), fence.guard(),
                           fence.advance(text, bigint, text)
    FROM regress_fence_parent_owner;
DROP ROLE regress_fence_parent_owner;
SELECT count(fence.reset(resource)) FROM fence.fences WHERE resource ~ '^gp[akc](:|$)';
