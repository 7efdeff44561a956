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
    'Install the guard on a table you own: one check per statement, or per row with key_column (resource:key) and token_column (stamped, never lowered)';

CREATE FUNCTION fence.unprotect(tbl regclass)
RETURNS void
AS 'MODULE_PATHNAME', 'fence_unprotect'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fence.unprotect(regclass) FROM PUBLIC;
COMMENT ON FUNCTION fence.unprotect(regclass) IS
    'Remove the guard from a table you own';
