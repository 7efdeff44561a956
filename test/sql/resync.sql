-- fence.resync(resources, counters): the repair after a failover to a
-- standby that missed acknowledged announces.  Each mark is raised to its
-- resource's Redis counter and never lowered; a missing mark is made; a
-- raised mark has no owner, so the newest holder's token (equal to the
-- counter) still writes and records its owner, and every token below it
-- is refused.

-- After the failover: A's mark 1 came back, B had announced 2 (counter 2)
SELECT fence.advance('rs:a', 1, 'A');
SELECT fence.advance('rs:high', 10, 'H');
SELECT fence.resync(ARRAY['rs:a', 'rs:high', 'rs:new', 'rs:a'], ARRAY[2, 3, 4, 1]::bigint[]);
SELECT resource, token, owner FROM fence.fences WHERE resource LIKE 'rs:%' ORDER BY resource;
-- A's stale token is refused, B's still writes, and records B as owner
SELECT fence.advance('rs:a', 1, 'A');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance('rs:a', 2, 'B');
SELECT fence.advance('rs:a', 2, 'C');
\echo :LAST_ERROR_SQLSTATE
SELECT resource, token, owner FROM fence.fences WHERE resource = 'rs:a';
-- nothing to raise: nothing changes
SELECT fence.resync(ARRAY['rs:a', 'rs:high'], ARRAY[2, 10]::bigint[]);
SELECT fence.resync('{}', '{}');

-- A token this transaction accepted below the raised mark no longer passes
BEGIN;
SELECT fence.advance('rs:tx', 2, 'A');
SELECT fence.resync(ARRAY['rs:tx'], ARRAY[5]::bigint[]);
SELECT fence.advance('rs:tx', 2, 'A');
ROLLBACK;

-- Bad input: nothing changes
SELECT fence.resync(ARRAY['rs:bad'], ARRAY[0]::bigint[]);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.resync(ARRAY['rs:bad', 'rs:bad2'], ARRAY[3]::bigint[]);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.resync(NULL, ARRAY[3]::bigint[]);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.resync(ARRAY[''], ARRAY[3]::bigint[]);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM fence.fences WHERE resource LIKE 'rs:bad%';

-- Administrators only
CREATE ROLE rs_app;
SET ROLE rs_app;
SELECT fence.resync(ARRAY['rs:a'], ARRAY[100]::bigint[]);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DROP ROLE rs_app;
SELECT fence.reset(r) FROM unnest(ARRAY['rs:a', 'rs:high', 'rs:new']) r;
