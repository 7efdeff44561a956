-- A guard reads only its key and token columns, with their types' own
-- output functions, and runs no code a table's owner can define (a cast
-- of the owner's would run as fence's owner).  The SQL edition's guard runs as fence's owner; it once
-- converted the whole row with to_jsonb(), which calls a cast to json
-- that the owner of an enum may create: here such a cast tries to lower
-- another resource's mark from 100 to 1 (as fence's owner it would have
-- succeeded, and token 50 would then have been accepted).

SELECT fence.advance('cast_victim', 100);

CREATE ROLE regress_fence_caster;
GRANT CREATE ON SCHEMA public TO regress_fence_caster;
-- the README's grant of a migration role
GRANT EXECUTE ON FUNCTION fence.protect(regclass, text, name, name),
                          fence.unprotect(regclass), fence.guard()
    TO regress_fence_caster;

SET ROLE regress_fence_caster;
CREATE TYPE cast_mood AS ENUM ('calm', 'angry');
CREATE TABLE cast_tries (who text, tried text);
CREATE FUNCTION cast_mood_json(m cast_mood) RETURNS json
LANGUAGE plpgsql SET search_path = public, pg_catalog AS $$
BEGIN
    BEGIN
        UPDATE fence.fences SET token = 1 WHERE resource = 'cast_victim';
        INSERT INTO cast_tries VALUES (current_user, 'lowered the mark');
    EXCEPTION WHEN insufficient_privilege THEN
        INSERT INTO cast_tries VALUES (current_user, 'refused');
    END;
    RETURN to_json(m::text);
END
$$;
CREATE CAST (cast_mood AS json) WITH FUNCTION cast_mood_json(cast_mood);
-- the cast works, as its owner
SELECT to_jsonb(ROW(1, 'calm'::cast_mood));
SELECT who, tried FROM cast_tries;
DELETE FROM cast_tries;

-- key and token columns, and a column of the enum type
CREATE TABLE cast_rows (id int PRIMARY KEY, mood cast_mood, fence_token bigint);
SELECT fence.protect('cast_rows', 'castr', 'fence_token', 'id');
CREATE TABLE cast_jobs (id int PRIMARY KEY, mood cast_mood, fence_token bigint);
SELECT fence.protect('cast_jobs', 'castj', 'fence_token');
SET fence.tokens = 'castr:1=3, castj=4';
INSERT INTO cast_rows VALUES (1, 'calm');
UPDATE cast_rows SET mood = 'angry';
INSERT INTO cast_jobs VALUES (1, 'calm');
UPDATE cast_jobs SET mood = 'angry';
DELETE FROM cast_jobs;
DELETE FROM cast_rows;
RESET fence.tokens;
-- the guard never called the cast
SELECT who, tried FROM cast_tries;
RESET ROLE;

SELECT fence.mark('cast_victim');
SELECT fence.advance('cast_victim', 50);
\echo :LAST_ERROR_SQLSTATE

DROP TABLE cast_rows, cast_jobs, cast_tries;
DROP CAST (cast_mood AS json);
DROP FUNCTION cast_mood_json(cast_mood);
DROP TYPE cast_mood;
REVOKE CREATE ON SCHEMA public FROM regress_fence_caster;
REVOKE EXECUTE ON FUNCTION fence.protect(regclass, text, name, name),
                           fence.unprotect(regclass), fence.guard()
    FROM regress_fence_caster;
DROP ROLE regress_fence_caster;
SELECT fence.reset(resource) FROM fence.fences
 WHERE resource IN ('cast_victim', 'castr:1', 'castj') ORDER BY resource;
