\echo Use "CREATE EXTENSION fence" to load this file. \quit

-- Functions are granted one by one below; the schema itself is visible, so
-- that tables owned by anybody can use the guard trigger.
GRANT USAGE ON SCHEMA fence TO PUBLIC;

-- The high-water mark of each resource: the highest token accepted so far.
-- Only the extension's own functions write it, running as its owner.
CREATE TABLE fence.fences (
    resource    text PRIMARY KEY,
    token       bigint NOT NULL CHECK (token > 0),
    owner       text,
    updated_at  timestamptz NOT NULL DEFAULT pg_catalog.now()
);
REVOKE ALL ON fence.fences FROM PUBLIC;
COMMENT ON TABLE fence.fences IS
    'Highest accepted fencing token per resource; written only by fence functions';
COMMENT ON COLUMN fence.fences.owner IS
    'Lease owner id that presented the token, if it gave one';

-- Keep the marks in pg_dump output: losing them would re-admit old tokens.
SELECT pg_catalog.pg_extension_config_dump('fence.fences', '');

CREATE FUNCTION fence.advance(resource text, token bigint, owner text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fence_advance'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.advance(text, bigint, text) FROM PUBLIC;
COMMENT ON FUNCTION fence.advance(text, bigint, text) IS
    'Accept token for resource in this transaction or raise LF001/LF002/LF003; returns the previous mark';

CREATE FUNCTION fence.fenced_update(resource text, token bigint, query text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fence_fenced_update'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.fenced_update(text, bigint, text) FROM PUBLIC;
COMMENT ON FUNCTION fence.fenced_update(text, bigint, text) IS
    'Accept token for resource, then run query; returns rows processed';

CREATE FUNCTION fence.fenced_update(resource text, token bigint, query text,
                                    VARIADIC params "any")
RETURNS bigint
AS 'MODULE_PATHNAME', 'fence_fenced_update'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.fenced_update(text, bigint, text, "any") FROM PUBLIC;
COMMENT ON FUNCTION fence.fenced_update(text, bigint, text, "any") IS
    'Accept token for resource, then run query with params bound to $1..$n; returns rows processed';

-- Parameters that arrive without a type (node-postgres and pgbench -M
-- prepared send them so) cannot resolve against "any"; an unknown argument
-- prefers the string category, so they pick this overload, and a call with
-- any non-string argument still picks the one above.  Both take untyped,
-- text and varchar arguments with the type the statement gives them.
CREATE FUNCTION fence.fenced_update(resource text, token bigint, query text,
                                    VARIADIC params text[])
RETURNS bigint
AS 'MODULE_PATHNAME', 'fence_fenced_update'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.fenced_update(text, bigint, text, text[]) FROM PUBLIC;
COMMENT ON FUNCTION fence.fenced_update(text, bigint, text, text[]) IS
    'Accept token for resource, then run query with params, typed as the query types $1..$n; returns rows processed';

CREATE FUNCTION fence.reset(resource text, token bigint DEFAULT 0)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fence_reset'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.reset(text, bigint) FROM PUBLIC;
COMMENT ON FUNCTION fence.reset(text, bigint) IS
    'Administrators only: set the mark of resource to token, or remove it (0); logged';

-- Guard trigger ---------------------------------------------------------------
-- fence.guard() fences plain SQL writes to a table; fence.protect() and
-- fence.unprotect() install and remove it (extension/guard.c, protect.c).
-- Writers of a protected table need no grant: a trigger function is not
-- checked for EXECUTE when it fires, and the check runs as the owner of
-- fence.fences.  Installing a guard, on the other hand, chooses a resource
-- that the table's writers may then advance, so like fence.advance it is
-- not open to PUBLIC.

CREATE FUNCTION fence.guard()
RETURNS trigger
AS 'MODULE_PATHNAME', 'fence_guard'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.guard() FROM PUBLIC;
COMMENT ON FUNCTION fence.guard() IS
    'Trigger that refuses writes without a valid fencing token; install it with fence.protect';

CREATE FUNCTION fence.protect(tbl regclass, resource text,
                              token_column name DEFAULT NULL,
                              key_column name DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'fence_protect'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.protect(regclass, text, name, name) FROM PUBLIC;
COMMENT ON FUNCTION fence.protect(regclass, text, name, name) IS
    'Install the guard on a table you own: one check per statement, or per row with key_column (see fence.key_resource) and token_column (stamped, never lowered)';

-- The resource of a row of a key-mode table, as the guard names it: what a
-- worker leases to write that row.  Open to everybody: it only computes a
-- name.
CREATE FUNCTION fence.key_resource(resource text, key anycompatible)
RETURNS text
AS 'MODULE_PATHNAME', 'fence_key_resource'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION fence.key_resource(text, anycompatible) IS
    'Resource of the row with this key in a table protected with this resource and key_column: resource:key, with ":" and "\" in the key escaped by "\"';

CREATE FUNCTION fence.unprotect(tbl regclass)
RETURNS void
AS 'MODULE_PATHNAME', 'fence_unprotect'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.unprotect(regclass) FROM PUBLIC;
COMMENT ON FUNCTION fence.unprotect(regclass) IS
    'Remove the guard from a table you own';

-- Statistics --------------------------------------------------------------
-- Counts of accepted and refused tokens per resource, in shared memory
-- (extension/stats.c): they need fence in shared_preload_libraries, and
-- without it the functions below raise an error that says so.  Refusals
-- abort their transactions, which is why they are not kept in a table.
-- Resource names and marks are not for everybody: reading is granted to
-- pg_monitor, resetting to nobody but administrators.

CREATE FUNCTION fence.stats_counts(
    OUT resource text, OUT accepted bigint, OUT stale bigint,
    OUT missing bigint, OUT invalid bigint,
    OUT last_refusal timestamptz, OUT last_refused_token bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'fence_stats_counts'
LANGUAGE C VOLATILE PARALLEL SAFE;
REVOKE ALL ON FUNCTION fence.stats_counts() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fence.stats_counts() TO pg_monitor;
COMMENT ON FUNCTION fence.stats_counts() IS
    'Counts of accepted and refused tokens per resource since start or fence.stats_reset(), from shared memory; read them through fence.stats';

CREATE VIEW fence.stats AS
    SELECT s.resource, s.accepted, s.stale, s.missing, s.invalid,
           s.last_refusal, s.last_refused_token, f.token AS mark
      FROM fence.stats_counts() s
      LEFT JOIN fence.fences f ON f.resource OPERATOR(pg_catalog.=) s.resource;
REVOKE ALL ON fence.stats FROM PUBLIC;
GRANT SELECT ON fence.stats TO pg_monitor;
COMMENT ON VIEW fence.stats IS
    'Per resource: accepted checks, refusals by kind (stale LF001, missing LF002, invalid LF003), the last refusal and its token, and the committed mark; resource NULL counts the resources that found the table full (fence.stats_max_resources) and invalid names';

CREATE FUNCTION fence.stats_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'fence_stats_reset'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.stats_reset() FROM PUBLIC;
COMMENT ON FUNCTION fence.stats_reset() IS
    'Administrators only: forget every count in fence.stats';

-- DDL guard -------------------------------------------------------------------
-- A table protected in table mode must not get a parent: statement-level
-- triggers do not fire for rows written through a partitioned table or an
-- inheritance parent; and a row guard must be the last BEFORE ROW trigger
-- of its table (extension/guard_ddl.c).  CREATE SCHEMA is among the tags
-- because its elements run under it.  ENABLE ALWAYS, so that
-- session_replication_role does not skip it; only superusers can alter or
-- drop an event trigger.

CREATE FUNCTION fence.guard_ddl()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'fence_guard_ddl'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.guard_ddl() FROM PUBLIC;
COMMENT ON FUNCTION fence.guard_ddl() IS
    'Event trigger that refuses DDL giving a table-mode protected table a parent (ATTACH PARTITION, INHERIT, hand-made guards) or a row guard a BEFORE ROW trigger that fires after it';

CREATE EVENT TRIGGER fence_guard_ddl ON ddl_command_end
    WHEN TAG IN ('ALTER TABLE', 'CREATE TABLE', 'CREATE TRIGGER', 'ALTER TRIGGER',
                 'CREATE SCHEMA')
    EXECUTE FUNCTION fence.guard_ddl();
ALTER EVENT TRIGGER fence_guard_ddl ENABLE ALWAYS;
COMMENT ON EVENT TRIGGER fence_guard_ddl IS
    'Keeps tables protected without a token or key column from becoming partitions or inheritance children, and row guards last among BEFORE ROW triggers';
