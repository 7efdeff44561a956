\echo Use "ALTER EXTENSION fence UPDATE TO '0.3.0'" to load this file. \quit

-- fence 0.2.0 -> 0.3.0: no mark, guard or grant of 0.2.0 changes, so
-- fence.fences keeps every row it had.  What each object is for is said
-- where sql/fence.sql creates it.

-- fence.stats counts per database since 0.3.0; its reset is the server's.
COMMENT ON FUNCTION fence.stats_reset() IS
    'Administrators only: forget every count in fence.stats, in every database of the server';
