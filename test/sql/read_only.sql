-- Every fence check locks the fence row and may write it: none is made in
-- a read-only transaction (nor on a standby, which is one), where each
-- function refuses with 25006 before it reads or locks anything.
SELECT fence.advance('ro', 5);

BEGIN READ ONLY;
SELECT fence.advance('ro', 5);
ROLLBACK;
BEGIN READ ONLY;
SELECT fence.advance('ro', 6);
ROLLBACK;
BEGIN READ ONLY;
SELECT fence.fenced_update('ro', 5, 'SELECT 1');
ROLLBACK;
BEGIN READ ONLY;
SELECT fence.reset('ro', 3);
ROLLBACK;
-- also when the transaction turned read-only after it accepted the token
BEGIN;
SELECT fence.advance('ro', 5);
SET TRANSACTION READ ONLY;
SELECT fence.advance('ro', 5);
ROLLBACK;

-- the same by default_transaction_read_only, for a new resource too
SET default_transaction_read_only = on;
SELECT fence.advance('ro', 5);
SELECT fence.advance('ro_new', 1);
SELECT fence.fenced_update('ro_new', 1, 'SELECT $1', 'x');
RESET default_transaction_read_only;

-- a read-only transaction may write a temporary table, but not pass its guard
CREATE TEMP TABLE ro_t (id int);
SELECT fence.protect('ro_t', 'ro');
BEGIN READ ONLY;
SET LOCAL fence.resource = 'ro';
SET LOCAL fence.token = '5';
INSERT INTO ro_t VALUES (1);
ROLLBACK;
BEGIN;
SET LOCAL fence.resource = 'ro';
SET LOCAL fence.token = '5';
INSERT INTO ro_t VALUES (1);
COMMIT;

-- nothing was written
SELECT resource, token FROM fence.fences WHERE resource LIKE 'ro%' ORDER BY 1;
SELECT count(*) FROM ro_t;

DROP TABLE ro_t;
SELECT fence.reset('ro');
