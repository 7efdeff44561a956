-- Savepoints and the tokens a transaction holds.  Rolling back a
-- subtransaction undoes what it registered and nothing more: the parent's
-- token (and the fence row lock PostgreSQL keeps for it) is in force again.
-- The token column shows which token a write carried.

CREATE TABLE sx (id int PRIMARY KEY, qty int NOT NULL, tok bigint);
INSERT INTO sx VALUES (1, 0, NULL), (2, 0, NULL);
SELECT fence.protect('sx', 'sx', token_column => 'tok');

-- The parent's token survives a savepoint that advanced and rolled back
BEGIN;
SELECT fence.advance('sx', 11);
SAVEPOINT s;
SELECT fence.advance('sx', 12);
ROLLBACK TO s;
UPDATE sx SET qty = qty + 1 WHERE id = 1;
COMMIT;
SELECT id, qty, tok FROM sx ORDER BY id;
SELECT token FROM fence.fences WHERE resource = 'sx';

-- Nested savepoints: each rollback goes back one level
BEGIN;
SELECT fence.advance('sx', 13);
SAVEPOINT a;
SELECT fence.advance('sx', 14);
SAVEPOINT b;
SELECT fence.advance('sx', 15);
ROLLBACK TO b;
UPDATE sx SET qty = qty + 1 WHERE id = 1;
ROLLBACK TO a;
UPDATE sx SET qty = qty + 1 WHERE id = 2;
COMMIT;
SELECT id, qty, tok FROM sx ORDER BY id;
SELECT token FROM fence.fences WHERE resource = 'sx';

-- RELEASE hands the child's token to its parent; rolling the parent back
-- then undoes both
BEGIN;
SELECT fence.advance('sx', 16);
SAVEPOINT a;
SAVEPOINT b;
SELECT fence.advance('sx', 17);
RELEASE b;
UPDATE sx SET qty = qty + 1 WHERE id = 1;
ROLLBACK TO a;
UPDATE sx SET qty = qty + 1 WHERE id = 2;
COMMIT;
SELECT id, qty, tok FROM sx ORDER BY id;
SELECT token FROM fence.fences WHERE resource = 'sx';

-- A token accepted by a guarded write inside a savepoint that rolls back is
-- forgotten with it: the parent has none
BEGIN;
SAVEPOINT a;
SET LOCAL fence.resource = 'sx';
SET LOCAL fence.token = '18';
UPDATE sx SET qty = qty + 1 WHERE id = 1;
ROLLBACK TO a;
UPDATE sx SET qty = qty + 1 WHERE id = 1;
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE

-- fence.reset forgets the token only as long as its savepoint lives
BEGIN;
SELECT fence.advance('sx', 18);
SAVEPOINT a;
SELECT fence.reset('sx', 5);
ROLLBACK TO a;
UPDATE sx SET qty = qty + 1 WHERE id = 1;
COMMIT;
SELECT id, qty, tok FROM sx ORDER BY id;
SELECT token FROM fence.fences WHERE resource = 'sx';

-- PL/pgSQL exception blocks are subtransactions too
CREATE FUNCTION sx_try_advance(t bigint, fail boolean) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        PERFORM fence.advance('sx', t);
        IF fail THEN
            RAISE EXCEPTION 'give up';
        END IF;
    EXCEPTION WHEN raise_exception THEN
        RETURN 'rolled back';
    END;
    RETURN 'kept';
END $$;
BEGIN;
SELECT fence.advance('sx', 19);
SELECT sx_try_advance(20, true);
UPDATE sx SET qty = qty + 1 WHERE id = 1;
SELECT sx_try_advance(21, false);
UPDATE sx SET qty = qty + 1 WHERE id = 2;
COMMIT;
SELECT id, qty, tok FROM sx ORDER BY id;
SELECT token FROM fence.fences WHERE resource = 'sx';

-- Within one statement: another trigger on the same table advances the
-- token in an exception block once the first row was checked (it fires
-- before the guard, which must be the last BEFORE ROW trigger, so it
-- waits for the second row); the guard sees the change for that row if
-- the block committed, and not if it rolled back
CREATE FUNCTION sx_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(current_setting('sx.rows', true), '') = '' THEN
        PERFORM set_config('sx.rows', 'one', true);
    ELSIF current_setting('sx.rows') = 'one' THEN
        PERFORM set_config('sx.rows', 'more', true);
        PERFORM sx_try_advance(TG_ARGV[0]::bigint, TG_ARGV[1]::boolean);
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER a_bump BEFORE UPDATE ON sx FOR EACH ROW EXECUTE FUNCTION sx_bump(23, false);
BEGIN;
SELECT fence.advance('sx', 22);
UPDATE sx SET qty = qty + 1;
COMMIT;
SELECT tok, count(*) FROM sx GROUP BY tok ORDER BY tok;
DROP TRIGGER a_bump ON sx;
CREATE TRIGGER a_bump BEFORE UPDATE ON sx FOR EACH ROW EXECUTE FUNCTION sx_bump(25, true);
BEGIN;
SELECT fence.advance('sx', 24);
UPDATE sx SET qty = qty + 1;
COMMIT;
SELECT tok, count(*) FROM sx GROUP BY tok ORDER BY tok;
SELECT token FROM fence.fences WHERE resource = 'sx';

DROP TABLE sx;
DROP FUNCTION sx_bump(), sx_try_advance(bigint, boolean);
SELECT fence.reset('sx');
