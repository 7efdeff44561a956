-- A transaction that moves a mark commits durably in the SQL edition,
-- whatever synchronous_commit its session or a later SET LOCAL asks for
-- (a mark lost in a crash would let a stale token through): a deferred
-- trigger of fence.fences raises it to "on" at commit.  What this sees: a deferred trigger of the test's own, whose
-- event is queued after the mark moved, so that it fires at commit after
-- fence's, records synchronous_commit as the commit will use it.
CREATE TABLE durable_seen (n serial, what text, sync text);
CREATE TABLE durable_probe (what text);
CREATE FUNCTION durable_record() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO durable_seen (what, sync) VALUES (NEW.what, current_setting('synchronous_commit'));
    RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER durable_probe AFTER INSERT ON durable_probe
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION durable_record();
CREATE TABLE durable_stock (id int PRIMARY KEY, qty int);
INSERT INTO durable_stock VALUES (1, 10);
SELECT fence.protect('durable_stock', 'dur');

SET synchronous_commit = off;
-- an announce that moves the mark, then a SET LOCAL that asks for less
BEGIN;
SELECT fence.advance('dur', 5);
SHOW synchronous_commit;
SET LOCAL synchronous_commit = off;
INSERT INTO durable_probe VALUES ('announce, then SET LOCAL off');
COMMIT;
SHOW synchronous_commit;
-- a first mark, then a session-wide SET
BEGIN;
SELECT fence.advance('dur:first', 1);
SET synchronous_commit = local;
INSERT INTO durable_probe VALUES ('first mark, then SET local');
COMMIT;
SET synchronous_commit = off;
-- a guarded write whose token moves the mark
BEGIN;
SET LOCAL fence.resource = 'dur';
SET LOCAL fence.token = 6;
UPDATE durable_stock SET qty = qty - 1;
SET LOCAL synchronous_commit = remote_write;
INSERT INTO durable_probe VALUES ('guarded write moving the mark');
COMMIT;
-- fenced_update moving it
BEGIN;
SELECT fence.fenced_update('dur', 7, 'UPDATE durable_stock SET qty = qty - 1');
SET LOCAL synchronous_commit = off;
INSERT INTO durable_probe VALUES ('fenced_update moving the mark');
COMMIT;
-- advance_many moving one of two
BEGIN;
SELECT fence.advance_many(ARRAY['dur', 'dur:first'], ARRAY[7, 2]::bigint[]);
SET LOCAL synchronous_commit = off;
INSERT INTO durable_probe VALUES ('advance_many moving one mark');
COMMIT;
-- a stronger setting is kept
BEGIN;
SET LOCAL synchronous_commit = remote_apply;
SELECT fence.advance('dur', 8);
INSERT INTO durable_probe VALUES ('remote_apply kept');
COMMIT;
-- checks of an unchanged mark keep the session's setting
BEGIN;
SELECT fence.advance('dur', 8);
SET LOCAL fence.resource = 'dur';
SET LOCAL fence.token = 8;
UPDATE durable_stock SET qty = qty - 1;
INSERT INTO durable_probe VALUES ('unchanged mark');
COMMIT;
-- a refusal moves nothing
BEGIN;
SELECT fence.advance('dur', 3);
ROLLBACK;
-- what SQL cannot enforce (README, table of differences): SET CONSTRAINTS
-- ... IMMEDIATE fires the deferred trigger before the commit, and a later
-- SET LOCAL lowers the setting again
BEGIN;
SET CONSTRAINTS ALL IMMEDIATE;
SELECT fence.advance('dur', 9);
SET LOCAL synchronous_commit = off;
INSERT INTO durable_probe VALUES ('known limit: SET CONSTRAINTS ALL IMMEDIATE, then SET LOCAL off');
COMMIT;
RESET synchronous_commit;
SELECT what, sync FROM durable_seen ORDER BY n;
SELECT resource, token FROM fence.fences WHERE resource LIKE 'dur%' ORDER BY resource;

SELECT fence.unprotect('durable_stock');
DROP TABLE durable_seen, durable_probe, durable_stock;
DROP FUNCTION durable_record();
SELECT fence.reset(resource) FROM fence.fences WHERE resource LIKE 'dur%' ORDER BY resource;
