-- bench/handwritten.sql: what users write by hand today instead of pgfence,
-- the baselines of scenarios 1 and 3.  Loaded by the bench into schema
-- "bench"; nothing here belongs to the extension.
--
-- A fence table of their own, checked and advanced in the writing
-- transaction by INSERT ... ON CONFLICT ... WHERE token <= $t: the upsert
-- locks the resource's row until commit, and touches no row when the token
-- is stale (the caller sees 0 rows and rolls back).  The plain-SQL form of
-- the same, four statements in one transaction, is update_handwritten.pgbench.

CREATE SCHEMA IF NOT EXISTS bench;

CREATE TABLE IF NOT EXISTS bench.fences (
    resource  text PRIMARY KEY,
    token     bigint NOT NULL
);

-- Scenario 1: a fenced single-row write as one PL/pgSQL call.
CREATE OR REPLACE FUNCTION bench.fenced_deposit(p_resource text, p_token bigint,
                                                p_aid int, p_delta int)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO bench.fences AS f (resource, token) VALUES (p_resource, p_token)
    ON CONFLICT (resource) DO UPDATE SET token = excluded.token
    WHERE f.token <= excluded.token;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'stale fencing token % for resource "%"', p_token, p_resource
            USING ERRCODE = 'LF001';
    END IF;
    UPDATE pgbench_accounts SET abalance = abalance + p_delta WHERE aid = p_aid;
END
$$;

-- Scenario 3: a guard written in PL/pgSQL, doing what fence.protect() with
-- a token column does: check the token from the session's settings once
-- per statement, then stamp it into every row and refuse to lower a row's
-- token.
CREATE OR REPLACE FUNCTION bench.guard_statement() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    r text := current_setting('fence.resource', true);
    t bigint := nullif(current_setting('fence.token', true), '')::bigint;
BEGIN
    IF t IS NULL OR r IS DISTINCT FROM TG_ARGV[0] THEN
        RAISE EXCEPTION 'missing fencing token for resource "%"', TG_ARGV[0]
            USING ERRCODE = 'LF002';
    END IF;
    INSERT INTO bench.fences AS f (resource, token) VALUES (r, t)
    ON CONFLICT (resource) DO UPDATE SET token = excluded.token
    WHERE f.token <= excluded.token;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'stale fencing token % for resource "%"', t, r
            USING ERRCODE = 'LF001';
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION bench.guard_row() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    t bigint := current_setting('fence.token')::bigint;
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.token > t THEN
        RAISE EXCEPTION 'stale fencing token % for a row stamped with %', t, OLD.token
            USING ERRCODE = 'LF001';
    END IF;
    NEW.token := t;
    RETURN NEW;
END
$$;
