-- sql/hosted/to_extension.sql
--	  Move a database from the SQL edition of fence to the C extension
--	  without losing a mark: in one transaction (psql -1), as a superuser,
--	  once the extension is installed on the server:
--
--	    psql -v ON_ERROR_STOP=1 -1 -f to_extension.sql
--
--	  Its first statement locks fence's tables against every check and
--	  every write (a check locks a row of fence.fences, so every write to a
--	  guarded table waits too) until the transaction ends: a check that
--	  committed before the lock is in the marks it copies, and none can
--	  commit after it.  Then it refuses, listing them, if any object of
--	  yours depends on schema fence (a generated column computed with
--	  fence.key_resource, a view over fence.mark()): DROP SCHEMA ...
--	  CASCADE would drop it, data and all.  The marks, the floors that
--	  fence.forget() left and the guards (table, resource, token and key
--	  columns) are kept aside, schema fence is dropped with the edition's
--	  triggers, the extension is created, and all are put back: a floor
--	  lost would re-admit the old tokens of every resource forgotten under
--	  its prefix.

\set ON_ERROR_STOP 1

DO $$
BEGIN
    IF pg_catalog.to_regprocedure('fence.edition()') IS NULL
       OR fence.edition() OPERATOR(pg_catalog.<>) 'sql' THEN
        RAISE EXCEPTION 'this database does not run the SQL edition of fence'
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    -- before anything is read: an advance that commits while the move
    -- waits for DROP SCHEMA's locks would be lost with its mark
    EXECUTE 'LOCK TABLE fence.fences'
            OPERATOR(pg_catalog.||) CASE WHEN pg_catalog.to_regclass('fence.floors') IS NOT NULL
                                         THEN ', fence.floors' ELSE '' END
            OPERATOR(pg_catalog.||) CASE WHEN pg_catalog.to_regclass('fence._forgets') IS NOT NULL
                                         THEN ', fence._forgets' ELSE '' END
            OPERATOR(pg_catalog.||) ' IN ACCESS EXCLUSIVE MODE';
END
$$;

-- Never drop an object of yours: what depends on schema fence's objects
-- but is not one of them (they are the schema's members and, through
-- automatic and internal dependencies, their columns, indexes,
-- constraints, triggers and types), but the guards, which are carried over.
-- A column is never one of them: before PostgreSQL 14 a generated column
-- depends automatically on the functions of its expression, and DROP
-- SCHEMA would drop that column of your table (and, followed as a whole
-- table, everything on it would have passed for fence's).
DO $$
DECLARE
    n bigint;
    objects text;
BEGIN
    WITH RECURSIVE own(classid, objid) AS (
        SELECT 'pg_catalog.pg_namespace'::pg_catalog.regclass::pg_catalog.oid,
               'fence'::pg_catalog.regnamespace::pg_catalog.oid
        UNION
        SELECT d.classid, d.objid
          FROM pg_catalog.pg_depend d JOIN own o
            ON d.refclassid OPERATOR(pg_catalog.=) o.classid AND d.refobjid OPERATOR(pg_catalog.=) o.objid
         WHERE ((o.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
                 AND d.deptype OPERATOR(pg_catalog.=) 'n')
                OR d.deptype OPERATOR(pg_catalog.=) ANY ('{a,i}'::"char"[]))
           AND d.objsubid OPERATOR(pg_catalog.=) 0
    ), theirs AS (
        SELECT DISTINCT d.classid, d.objid, d.objsubid
          FROM pg_catalog.pg_depend d JOIN own o
            ON d.refclassid OPERATOR(pg_catalog.=) o.classid AND d.refobjid OPERATOR(pg_catalog.=) o.objid
         WHERE NOT EXISTS (SELECT FROM own x WHERE x.classid OPERATOR(pg_catalog.=) d.classid
                                               AND x.objid OPERATOR(pg_catalog.=) d.objid)
           AND d.deptype OPERATOR(pg_catalog.<>) 'e'
           AND NOT EXISTS (SELECT FROM pg_catalog.pg_trigger t
                            WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_trigger'::pg_catalog.regclass
                              AND t.oid OPERATOR(pg_catalog.=) d.objid
                              AND t.tgfoid OPERATOR(pg_catalog.=) 'fence.guard()'::pg_catalog.regprocedure
                              AND t.tgname OPERATOR(pg_catalog.=) ANY ('{fence_guard,fence_guard_truncate}'::pg_catalog.name[]))
    )
    SELECT pg_catalog.count(*),
           pg_catalog.string_agg(pg_catalog.pg_describe_object(classid, objid, objsubid), E'\n'
                                 ORDER BY pg_catalog.pg_describe_object(classid, objid, objsubid))
      INTO n, objects FROM theirs;
    IF n OPERATOR(pg_catalog.>) 0 THEN
        RAISE EXCEPTION 'cannot move to the extension: % objects outside schema fence depend on it', n
            USING ERRCODE = 'dependent_objects_still_exist', DETAIL = objects,
                  HINT = 'Drop them, move, and create them again: DROP SCHEMA fence CASCADE would drop them, and their data with them. Nothing was changed.';
    END IF;
END
$$;

CREATE TEMPORARY TABLE fence_moved_marks ON COMMIT DROP AS
    SELECT resource, token, owner, updated_at FROM fence.fences;
-- an edition installed before fence.forget() existed has no floors
CREATE TEMPORARY TABLE fence_moved_floors (prefix text, token bigint, updated_at timestamptz)
    ON COMMIT DROP;
DO $$
BEGIN
    IF pg_catalog.to_regclass('fence.floors') IS NOT NULL THEN
        INSERT INTO fence_moved_floors SELECT prefix, token, updated_at FROM fence.floors;
    END IF;
END
$$;
-- each guard's three arguments: resource, token column, key column
CREATE TEMPORARY TABLE fence_moved_guards (tbl regclass, argv text[]) ON COMMIT DROP;
DO $$
DECLARE
    t record;
    argv text[];
    start int;
    i int;
BEGIN
    FOR t IN SELECT tgrelid, tgargs FROM pg_catalog.pg_trigger
              WHERE tgfoid OPERATOR(pg_catalog.=) 'fence.guard()'::pg_catalog.regprocedure
                AND tgname OPERATOR(pg_catalog.=) 'fence_guard'
    LOOP
        argv := '{}';
        start := 0;
        FOR i IN 0 .. pg_catalog.length(t.tgargs) - 1 LOOP
            IF pg_catalog.get_byte(t.tgargs, i) OPERATOR(pg_catalog.=) 0 THEN
                argv := argv || pg_catalog.convert_from(
                    pg_catalog.substr(t.tgargs, start + 1, i - start), 'UTF8');
                start := i + 1;
            END IF;
        END LOOP;
        INSERT INTO fence_moved_guards VALUES (t.tgrelid, argv);
    END LOOP;
END
$$;

SET LOCAL client_min_messages = warning;
DROP SCHEMA fence CASCADE;
CREATE EXTENSION fence;
INSERT INTO fence.fences (resource, token, owner, updated_at)
    SELECT resource, token, owner, updated_at FROM fence_moved_marks;
INSERT INTO fence.floors (prefix, token, updated_at)
    SELECT prefix, token, updated_at FROM fence_moved_floors;
SELECT fence.protect(tbl, argv[1], NULLIF(argv[2], '')::name,
                     NULLIF(argv[3], '')::name)
  FROM fence_moved_guards;
