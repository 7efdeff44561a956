-- The token rule: a token is accepted when it is above the resource's mark,
-- or equal to it from the same (or an unknown) owner; refused otherwise.
-- Every error case sits next to the case that works.

-- The seed case: worker B (token 42) takes over from worker A (token 41).
CREATE TABLE inventory (sku text PRIMARY KEY, qty int NOT NULL);
INSERT INTO inventory VALUES ('widget', 10);

SELECT fence.advance('inventory', 41, 'worker-a');    -- A announces: no previous mark
SELECT fence.advance('inventory', 42, 'worker-b');    -- B takes over: previous mark 41
SELECT fence.fenced_update('inventory', 42,
    'UPDATE inventory SET qty = qty - 1 WHERE sku = $1', 'widget');
-- A wakes up and writes with its old token: LF001, and nothing changes
SELECT fence.fenced_update('inventory', 41,
    'UPDATE inventory SET qty = qty - 1 WHERE sku = $1', 'widget');
\echo :LAST_ERROR_SQLSTATE
SELECT sku, qty FROM inventory;
SELECT resource, token, owner FROM fence.fences WHERE resource = 'inventory';

-- Equal token: the same owner, or no owner on either side, is accepted ...
SELECT fence.advance('inventory', 42, 'worker-b');
SELECT fence.advance('inventory', 42);
-- ... a different owner is the same token issued twice: LF001
SELECT fence.advance('inventory', 42, 'worker-c');
\echo :LAST_ERROR_SQLSTATE

-- A mark without owner records the first owner that shows up with its token
SELECT fence.advance('unowned', 7);
SELECT fence.advance('unowned', 7, 'worker-a');
SELECT fence.advance('unowned', 7, 'worker-b');
\echo :LAST_ERROR_SQLSTATE
SELECT resource, token, owner FROM fence.fences WHERE resource = 'unowned';

-- Higher tokens move the mark and replace the owner
SELECT fence.advance('unowned', 8);
SELECT resource, token, owner FROM fence.fences WHERE resource = 'unowned';

-- Missing token: LF002; resource must not be NULL
SELECT fence.advance('inventory', 43);
SELECT fence.advance('inventory', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance(NULL, 43);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance('inventory', 44, NULL);

-- Invalid tokens: LF003 for zero and negatives, 1 is the smallest token
SELECT fence.advance('small', 1);
SELECT fence.advance('small', 0);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance('small', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance('small', -9223372036854775808);
\echo :LAST_ERROR_SQLSTATE

-- The largest token is accepted, and nothing above it can be written
SELECT fence.advance('huge', 9223372036854775806);
SELECT fence.advance('huge', 9223372036854775807);
SELECT fence.advance('huge', 9223372036854775806);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance('huge', '9223372036854775808');
\echo :LAST_ERROR_SQLSTATE

-- fence.max_step: a jump larger than the step is LF003, one equal to it works
SET fence.max_step = 100;
SELECT fence.advance('stepped', 101);    -- the first mark counts from 0
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance('stepped', 100);
SELECT fence.advance('stepped', 101);
SELECT fence.advance('stepped', 200);
SELECT fence.advance('stepped', 301);
\echo :LAST_ERROR_SQLSTATE
-- no overflow in the distance between a small mark and a huge token
SELECT fence.advance('stepped', 9223372036854775807);
\echo :LAST_ERROR_SQLSTATE
-- at the top of the range an equal token is still accepted
SELECT fence.advance('huge', 9223372036854775807);
SELECT resource, token FROM fence.fences WHERE resource IN ('stepped', 'huge') ORDER BY 1;
RESET fence.max_step;
SELECT fence.advance('stepped', 9223372036854775807);

-- fence.max_step is for superusers only
CREATE ROLE regress_fence_rule_user;
SET ROLE regress_fence_rule_user;
SET fence.max_step = 5;
RESET ROLE;
DROP ROLE regress_fence_rule_user;

-- A rolled-back advance leaves no trace
BEGIN;
SELECT fence.advance('rolled', 5);
SELECT fence.advance('inventory', 50);
ROLLBACK;
SELECT resource, token FROM fence.fences WHERE resource IN ('rolled', 'inventory') ORDER BY 1;

-- Inside one transaction the mark holds: a lower token after a higher one fails
BEGIN;
SELECT fence.advance('inventory', 60);
SELECT fence.advance('inventory', 60);
SELECT fence.advance('inventory', 59);
ROLLBACK;

-- A savepoint rolled back takes its advance with it; a released one keeps it
BEGIN;
SELECT fence.advance('sub', 10);
SAVEPOINT s1;
SELECT fence.advance('sub', 20);
ROLLBACK TO SAVEPOINT s1;
SELECT fence.advance('sub', 15);
SAVEPOINT s2;
SELECT fence.advance('sub', 16);
RELEASE SAVEPOINT s2;
SELECT fence.advance('sub', 15);
COMMIT;
\echo :LAST_ERROR_SQLSTATE
SELECT resource, token FROM fence.fences WHERE resource = 'sub';
BEGIN;
SELECT fence.advance('sub', 10);
SAVEPOINT s1;
SELECT fence.advance('sub', 20);
ROLLBACK TO SAVEPOINT s1;
SELECT fence.advance('sub', 15);
SAVEPOINT s2;
SELECT fence.advance('sub', 16);
RELEASE SAVEPOINT s2;
COMMIT;
SELECT resource, token FROM fence.fences WHERE resource = 'sub';

-- An error caught in PL/pgSQL does not leave a half-advanced mark
DO $$
BEGIN
    PERFORM fence.advance('caught', 5);
    BEGIN
        PERFORM fence.advance('caught', 9);
        PERFORM fence.advance('caught', 3);
    EXCEPTION WHEN SQLSTATE 'LF001' THEN
        RAISE NOTICE 'refused: %', SQLERRM;
    END;
END
$$;
SELECT resource, token FROM fence.fences WHERE resource = 'caught';

-- fence.reset lowers or clears a mark, returns the previous one, and logs it
SET client_min_messages = log;
SELECT fence.reset('inventory', 10);
RESET client_min_messages;
SELECT fence.advance('inventory', 11);
SELECT fence.reset('inventory');
SELECT fence.reset('never-seen', 0);
SELECT fence.reset('inventory', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.reset('inventory', NULL);
SELECT resource, token FROM fence.fences WHERE resource = 'inventory';
-- after a reset in the same transaction, the old token is checked again
BEGIN;
SELECT fence.advance('inventory', 20);
SELECT fence.reset('inventory', 30);
SELECT fence.advance('inventory', 20);
ROLLBACK;

-- Applications cannot write fence.fences directly: its CHECK also guards
-- against a superuser writing nonsense
INSERT INTO fence.fences (resource, token, updated_at)
    VALUES ('direct', 0, '2000-01-01 00:00:00+00');

DROP TABLE inventory;
DELETE FROM fence.fences;
