-- fence.fenced_update called again while it runs: directly, from a
-- function, from a trigger, and failing in between.  The inner calls fill
-- the 32-slot plan cache; no plan that an outer call still runs may be
-- evicted, and a call that fails gives its slot back.

-- The statement calls fenced_update with 32 other statements
SELECT fence.fenced_update('fu', 1,
    'SELECT fence.fenced_update(''fu'', 1, ''SELECT '' || i) FROM generate_series(1, 32) i');
-- ... and with 40, nested two deep
SELECT fence.fenced_update('fu', 1,
    'SELECT fence.fenced_update(''fu'', 1,
         ''SELECT fence.fenced_update(''''fu'''', 1, ''''SELECT '''' || j || '''' + '' || i || '''''')
             FROM generate_series(1, 2) j'')
       FROM generate_series(1, 40) i');

-- From a function that the statement calls
CREATE FUNCTION fu_many(n int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. n LOOP
        PERFORM fence.fenced_update('fu', 1, 'SELECT ' || i || ' AS from_function');
    END LOOP;
    RETURN n;
END $$;
SELECT fence.fenced_update('fu', 1, 'SELECT fu_many($1)', 40);

-- From a trigger on the table that the statement writes
CREATE TABLE fu_t (id int, n int);
INSERT INTO fu_t VALUES (1, 0), (2, 0);
CREATE FUNCTION fu_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM fu_many(33);
    RETURN NEW;
END $$;
CREATE TRIGGER fu_t_many BEFORE UPDATE ON fu_t FOR EACH ROW EXECUTE FUNCTION fu_trigger();
SELECT fence.fenced_update('fu', 1, 'UPDATE fu_t SET n = n + $1', 1);
SELECT * FROM fu_t ORDER BY id;
DROP TRIGGER fu_t_many ON fu_t;

-- An inner call fails while the outer one runs; the error is caught and the
-- outer statement goes on filling the cache
CREATE FUNCTION fu_fail_then_many(n int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        PERFORM fence.fenced_update('fu', 1, 'SELECT 1 / $1 AS inner_failure', 0);
    EXCEPTION WHEN division_by_zero THEN
        RAISE NOTICE 'inner call failed: %', SQLERRM;
    END;
    BEGIN
        PERFORM fence.fenced_update('fu', 0, 'SELECT 1 AS refused_token');
    EXCEPTION WHEN SQLSTATE 'LF003' THEN
        RAISE NOTICE 'inner call refused: %', SQLSTATE;
    END;
    RETURN fu_many(n);
END $$;
SELECT fence.fenced_update('fu', 1, 'SELECT fu_fail_then_many($1)', 40);

-- A failed call gives its slot back: its plan is evicted like any other once
-- 32 newer statements have been cached (a plan's memory context is named
-- after its statement)
SELECT fence.fenced_update('fu', 1, 'SELECT 1 / $1 AS evict_me', 0);
SELECT count(*) FROM pg_backend_memory_contexts
 WHERE name = 'CachedPlanSource' AND ident = 'SELECT 1 / $1 AS evict_me';
SELECT count(fence.fenced_update('fu', 1, 'SELECT ' || i || ' AS filler'))
  FROM generate_series(1, 32) i;
SELECT count(*) FROM pg_backend_memory_contexts
 WHERE name = 'CachedPlanSource' AND ident = 'SELECT 1 / $1 AS evict_me';
-- while a plan that a call is running stays, whatever the inner calls do
CREATE FUNCTION fu_evict_and_count() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    kept bigint;
BEGIN
    PERFORM fu_many(40);
    kept := (SELECT count(*) FROM pg_backend_memory_contexts
              WHERE name = 'CachedPlanSource'
                AND ident = 'SELECT fu_evict_and_count() AS keep_me');
    RAISE NOTICE 'plans of the running statement: %', kept;
    RETURN kept;
END $$;
SELECT fence.fenced_update('fu', 1, 'SELECT fu_evict_and_count() AS keep_me');

-- ... also while its parameters are read: a domain's check runs user code
CREATE FUNCTION fu_evict_for_domain(v int) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    PERFORM fu_many(40);
    RAISE NOTICE 'plans of the statement being bound: %',
        (SELECT count(*) FROM pg_backend_memory_contexts
          WHERE name = 'CachedPlanSource' AND ident = 'SELECT $1::fu_checked AS via_domain');
    RETURN v > 0;
END $$;
CREATE DOMAIN fu_checked AS int CHECK (fu_evict_for_domain(VALUE));
SELECT fence.fenced_update('fu', 1, 'SELECT $1::fu_checked AS via_domain', '5');

DROP TABLE fu_t;
DROP DOMAIN fu_checked;
DROP FUNCTION fu_evict_for_domain(int), fu_evict_and_count(), fu_fail_then_many(int), fu_trigger(), fu_many(int);
SELECT fence.reset('fu');
