-- fence.stats: accepted and refused tokens per resource, counted in shared
-- memory (test/run.sh preloads the library), so that refusals count
-- although their transactions abort.  test/e2e/features/stats_preload.sh
-- covers a server without preloading, and fence.log_refusals.

-- its capacity: 1000 resources by default (test/run.sh sets more)
SELECT boot_val FROM pg_settings WHERE name = 'fence.stats_max_resources';
SELECT fence.stats_reset();
SELECT count(*) FROM fence.stats;

-- Accepted checks count, also in a transaction that rolls back; a check
-- answered again inside one transaction does not
SELECT fence.advance('st', 5);
BEGIN;
SELECT fence.advance('st', 6);
SELECT fence.advance('st', 6);
ROLLBACK;
SELECT resource, accepted, stale, missing, invalid, last_refusal, last_refused_token, mark
  FROM fence.stats WHERE resource = 'st';

-- Each kind of refusal counts, with the refused token and when; the mark
-- is the committed one
SELECT clock_timestamp() AS before_refusals \gset
SELECT fence.advance('st', 4);                                  -- stale
BEGIN;
SELECT fence.fenced_update('st', 3, 'SELECT 1');                -- stale, in a transaction
ROLLBACK;
SELECT fence.fenced_update('st', NULL, 'SELECT 1');             -- missing
SELECT fence.advance('st', NULL);                               -- missing
SELECT fence.advance('st', 0);                                  -- invalid
SET fence.max_step = 10;
SELECT fence.advance('st', 100);                                -- invalid
RESET fence.max_step;
SELECT resource, accepted, stale, missing, invalid,
       last_refusal BETWEEN :'before_refusals' AND clock_timestamp() AS last_refusal_now,
       last_refused_token, mark
  FROM fence.stats WHERE resource = 'st';

-- Refusals by the guard: no token, an unparsable one, a stale one, a row
-- holding a higher token than the writer's
CREATE TABLE st_jobs (id int PRIMARY KEY, fence_token bigint);
INSERT INTO st_jobs VALUES (1, 9);
SELECT fence.protect('st_jobs', 'st:jobs', 'fence_token');
UPDATE st_jobs SET id = 1;
BEGIN;
SET LOCAL fence.resource = 'st:jobs';
SET LOCAL fence.token = 'abc';
UPDATE st_jobs SET id = 1;
ROLLBACK;
BEGIN;
SET LOCAL fence.resource = 'st:jobs';
SET LOCAL fence.token = '8';
UPDATE st_jobs SET id = 1;
ROLLBACK;
SELECT fence.advance('st:jobs', 7);
BEGIN;
SET LOCAL fence.resource = 'st:jobs';
SET LOCAL fence.token = '6';
UPDATE st_jobs SET id = 1;
ROLLBACK;
SELECT resource, accepted, stale, missing, invalid, last_refused_token, mark
  FROM fence.stats WHERE resource = 'st:jobs';
DROP TABLE st_jobs;

-- A resource refused before it ever had a mark gets a row too
SELECT fence.advance('st:new', -1);
SELECT resource, accepted, invalid, last_refused_token, mark
  FROM fence.stats WHERE resource = 'st:new';

-- A name the rule refuses gets no row of its own
SELECT fence.advance('', NULL);
SELECT resource, missing FROM fence.stats WHERE resource IS NULL OR resource = '';

-- When the table is full, new resources count together in the row whose
-- resource is NULL; those already in keep counting one by one
SELECT fence.stats_reset();
SELECT count(fence.advance('st:fill:' || i, 1)) = current_setting('fence.stats_max_resources')::int AS filled
  FROM generate_series(1, current_setting('fence.stats_max_resources')::int) i;
SELECT fence.advance('st:over', 1);
SELECT fence.advance('st:over', 1);
SELECT fence.advance('st:over2', 1);
SELECT fence.advance('st:fill:1', 2);
SELECT resource, accepted, stale FROM fence.stats
 WHERE resource IS NULL OR resource IN ('st:fill:1', 'st:over') ORDER BY resource;
SELECT count(*) - current_setting('fence.stats_max_resources')::int AS rows_beyond_capacity FROM fence.stats;

-- stats_reset empties it
SELECT fence.stats_reset();
SELECT count(*) FROM fence.stats;

-- Each database counts its own resources: another database's refusals of
-- a resource of the same name are not shown next to this one's mark
-- (0.2.0 kept them by name alone); the capacity and stats_reset() are the server's
\set regress_db :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS fence_stats_other;
CREATE DATABASE fence_stats_other;
RESET client_min_messages;
SELECT fence.advance('st:db', 7);
\c fence_stats_other
CREATE EXTENSION fence;
SELECT fence.advance('st:db', 3);
SELECT fence.advance('st:db', 2);
SELECT fence.advance('st:db', 1);
SELECT resource, accepted, stale, last_refused_token, mark FROM fence.stats;
\c :regress_db
SELECT resource, accepted, stale, last_refused_token, mark FROM fence.stats;
SELECT fence.stats_reset();
\c fence_stats_other
SELECT count(*) FROM fence.stats;
\c :regress_db
DROP DATABASE fence_stats_other;
DELETE FROM fence.fences WHERE resource = 'st:db';

-- Reading is for pg_monitor, resetting and fence.log_refusals for
-- administrators
CREATE ROLE regress_fence_stats_app;
CREATE ROLE regress_fence_stats_mon IN ROLE pg_monitor;
SET ROLE regress_fence_stats_app;
SELECT count(*) FROM fence.stats;
\echo :LAST_ERROR_SQLSTATE
SELECT fence.stats_reset();
\echo :LAST_ERROR_SQLSTATE
SET fence.log_refusals = on;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT fence.advance('st:mon', 3);
SET ROLE regress_fence_stats_mon;
SELECT resource, accepted, mark FROM fence.stats;
SELECT fence.stats_reset();
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DROP ROLE regress_fence_stats_app, regress_fence_stats_mon;

SELECT fence.stats_reset();
DELETE FROM fence.fences WHERE resource LIKE 'st%';
