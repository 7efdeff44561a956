-- A check whose token leaves the mark unchanged holds the mark in the lock
-- manager (an advisory ShareLock keyed by the resource, objsubid 26213,
-- with fence.floors in ROW SHARE mode) and writes no row lock into the
-- mark's tuple; a check that moves the mark locks the row and keeps no
-- mark lock; past 16 unchanged marks in one transaction, the row lock
-- again (extension/marks.c, "Unchanged marks").  The concurrency is
-- test/specs: advance, shared-token, forget-race and the others.
SELECT count(fence.advance('ml:' || g, 5)) FROM generate_series(1, 20) g;

CREATE FUNCTION ml_row_locked(r text) RETURNS boolean
LANGUAGE sql AS $$ SELECT xmax <> '0' FROM fence.fences WHERE resource = r $$;
CREATE FUNCTION ml_mark_locks() RETURNS TABLE (mode text, n bigint)
LANGUAGE sql AS $$
    SELECT mode, count(*) FROM pg_locks
     WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND objsubid = 26213
     GROUP BY mode ORDER BY mode
$$;

-- an unchanged mark: no row lock, one mark lock, fence.floors in ROW SHARE
BEGIN;
SELECT fence.advance('ml:1', 5);
SELECT ml_row_locked('ml:1') AS row_locked;
SELECT * FROM ml_mark_locks();
SELECT mode FROM pg_locks WHERE pid = pg_backend_pid() AND relation = 'fence.floors'::regclass;
COMMIT;

-- a move: the row, and no mark lock kept
BEGIN;
SELECT fence.advance('ml:2', 6);
SELECT ml_row_locked('ml:2') AS row_locked;
SELECT * FROM ml_mark_locks();
COMMIT;

-- an unchanged mark, then a move in the same transaction: the mark lock
-- taken exclusively without waiting, and the row
BEGIN;
SELECT fence.advance('ml:3', 5);
SELECT fence.advance('ml:3', 7);
SELECT ml_row_locked('ml:3') AS row_locked;
SELECT * FROM ml_mark_locks();
COMMIT;

-- 16 unchanged marks aside, the 17th and later take their row locks
BEGIN;
SELECT count(fence.advance('ml:' || g, 5)) FROM generate_series(4, 20) g;
SELECT * FROM ml_mark_locks();
SELECT g AS resource, ml_row_locked('ml:' || g) AS row_locked
  FROM generate_series(18, 20) g ORDER BY g;
COMMIT;

-- a savepoint rolled back gives its mark lock back with its registration
BEGIN;
SAVEPOINT s;
SELECT fence.advance('ml:1', 5);
SELECT * FROM ml_mark_locks();
ROLLBACK TO s;
SELECT * FROM ml_mark_locks();
COMMIT;

SELECT fence.reset('ml:' || g) FROM generate_series(1, 20) g \g /dev/null
DROP FUNCTION ml_row_locked(text), ml_mark_locks();
