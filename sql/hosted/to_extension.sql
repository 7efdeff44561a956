-- sql/hosted/to_extension.sql
--	  Move a database from the SQL edition of fence to the C extension
--	  without losing a mark: in one transaction (psql -1), as a superuser,
--	  once the extension is installed on the server:
--
--	    psql -v ON_ERROR_STOP=1 -1 -f to_extension.sql
--
--	  The marks, the floors that fence.forget() left and the guards (table,
--	  resource, token and key columns) are kept aside, schema fence is
--	  dropped with the edition's triggers, the extension is created, and
--	  all are put back: a floor lost would re-admit the old tokens of every
--	  resource forgotten under its prefix.  Until the transaction
--	  commits, DROP SCHEMA's locks hold off every check and every write to
--	  a guarded table, so no write lands unfenced in between and no token
--	  older than a mark is accepted after it.

\set ON_ERROR_STOP 1

DO $$
BEGIN
    IF pg_catalog.to_regprocedure('fence.edition()') IS NULL
       OR fence.edition() OPERATOR(pg_catalog.<>) 'sql' THEN
        RAISE EXCEPTION 'this database does not run the SQL edition of fence'
            USING ERRCODE = 'object_not_in_prerequisite_state';
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
