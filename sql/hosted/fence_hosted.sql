-- sql/hosted/fence_hosted.sql
--	  The SQL edition of fence: the same rule, schema, names, SQLSTATEs and
--	  privileges as the C extension, in SQL and PL/pgSQL only, for hosted
--	  PostgreSQL (RDS, Aurora, Cloud SQL, Azure, Supabase, Neon) where an
--	  untrusted C extension cannot be installed.  Install it as a plain
--	  script, in one transaction, as a role with CREATE on the database:
--
--	    psql -v ON_ERROR_STOP=1 -1 -f fence_hosted.sql
--
--	  or as a pg_tle extension (sql/hosted/pg_tle_install.sql).  What it
--	  cannot do without C is listed in the README, "Hosted PostgreSQL".
--
--	  Invariant (as extension/rule.c): for each resource R, the tokens under
--	  which transactions commit writes never go down in commit order, and
--	  one token is never accepted for two owners.  Every check locks R's row
--	  of fence.fences with SELECT ... FOR UPDATE in the caller's transaction
--	  and holds it until the transaction ends; the data write happens inside
--	  that window.  Under READ COMMITTED a waiter re-reads the newest
--	  committed version when the lock is granted (what PL/pgSQL's SELECT FOR
--	  UPDATE does), under REPEATABLE READ and SERIALIZABLE the wait ends in
--	  40001.  A missing row is made by INSERT ... ON CONFLICT DO NOTHING, and
--	  a lost race goes back to locking the winner's row.  The C extension
--	  takes the shared lock for a token that does not move the mark; this
--	  edition always takes the exclusive one, so that no transaction ever
--	  upgrades a lock and no fairness trick is needed: writers of one
--	  resource queue one after the other (README: the table of differences).
--
--	  The registry.  fence.advance() registers its token for R in a
--	  transaction-local setting (set_config(..., true)), which PostgreSQL
--	  reverts when the transaction or the subtransaction that set it rolls
--	  back, as the C registry does.  A setting can be written by any role,
--	  so the guard never trusts it as proof of a check: it only supplies the
--	  token, which the guard checks again under the row lock (re-locking a
--	  row this transaction holds costs no wait).  A forged entry is thus no
--	  more than SET fence.token.

\set ON_ERROR_STOP 1

CREATE SCHEMA fence;
REVOKE ALL ON SCHEMA fence FROM PUBLIC;
GRANT USAGE ON SCHEMA fence TO PUBLIC;

CREATE TABLE fence.fences (
    resource    text PRIMARY KEY,
    token       bigint NOT NULL CHECK (token > 0),
    owner       text,
    updated_at  timestamptz NOT NULL DEFAULT pg_catalog.now()
) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.02);
REVOKE ALL ON fence.fences FROM PUBLIC;
COMMENT ON TABLE fence.fences IS
    'Highest accepted fencing token per resource; written only by fence functions';
COMMENT ON COLUMN fence.fences.owner IS
    'Lease owner id that presented the token, if it gave one';

CREATE FUNCTION fence.edition()
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 'sql'::pg_catalog.text $$;
COMMENT ON FUNCTION fence.edition() IS
    'Which edition of fence this database runs: c (the extension) or sql (the SQL edition for hosted PostgreSQL)';

-- Internal helpers ----------------------------------------------------------

-- Refuse a check in a read-only transaction with 25006, as
-- PreventCommandIfReadOnly() does in the C extension.
CREATE FUNCTION fence._refuse_read_only(what text)
RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF current_setting('transaction_read_only') = 'on' THEN
        RAISE EXCEPTION 'cannot execute % in a read-only transaction', what
            USING ERRCODE = 'read_only_sql_transaction';
    END IF;
END
$$;

CREATE FUNCTION fence._check_resource_name(resource text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF resource = '' THEN
        RAISE EXCEPTION 'resource name must not be empty'
            USING ERRCODE = 'invalid_parameter_value';
    ELSIF octet_length(resource) > 1024 THEN
        RAISE EXCEPTION 'resource name is too long'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('The name has %s bytes; the limit is %s.',
                                  octet_length(resource), 1024);
    END IF;
END
$$;

-- The registry: fence.advance()'s tokens in 4096 transaction-local
-- settings, fence_registry.bXXX, XXX the first three hex digits of the
-- md5 of the resource; each holds ";<md5 of the resource><token>/<owner in
-- hex>" for each of its resources.  Few settings whatever the number of
-- resources: PostgreSQL keeps every setting a session ever named until
-- the session ends.  Not under "fence.": a server that loads the C
-- extension's library (as during a move to it) reserves that prefix.
CREATE FUNCTION fence._registry_find(resource text)
RETURNS text
LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT NULLIF(substring(current_setting('fence_registry.b' || left(h, 3), true)
                            FROM ';' || h || '([^;]*)'), '')
      FROM (SELECT md5($1) AS h) m
$$;

-- Register "token" (and "owner") for "resource", or forget it (token NULL).
CREATE FUNCTION fence._registry_set(resource text, token bigint, owner text)
RETURNS void
LANGUAGE sql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT set_config('fence_registry.b' || left(h, 3),
                      regexp_replace(COALESCE(current_setting('fence_registry.b' || left(h, 3), true), ''),
                                     ';' || h || '[^;]*', '')
                      || CASE WHEN $2 IS NULL THEN ''
                              ELSE ';' || h || $2 || '/' || encode(convert_to(COALESCE($3, ''), 'UTF8'), 'hex') END,
                      true)
      FROM (SELECT md5($1) AS h) m
$$;

-- The rule: accept "token" from "owner" for "resource" in this transaction
-- or raise LF001/LF003; returns the previous mark (0 if none).  On return
-- this transaction holds the fence row's lock.  It runs as the owner of
-- fence.fences, which nobody else may write.
CREATE FUNCTION fence._check(resource text, token bigint, owner text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    max_step bigint := COALESCE(NULLIF(current_setting('fence.max_step', true), ''), '0')::bigint;
    hw bigint;
    hw_owner text;
BEGIN
    PERFORM fence._check_resource_name(resource);
    IF token <= 0 THEN
        RAISE EXCEPTION 'invalid fencing token for resource "%"', resource
            USING ERRCODE = 'LF003',
                  DETAIL = format('Token %s is not a positive number.', token);
    END IF;
    LOOP
        SELECT f.token, f.owner INTO hw, hw_owner
          FROM fence.fences f WHERE f.resource = _check.resource FOR UPDATE;
        EXIT WHEN FOUND;
        hw := 0;
        hw_owner := NULL;
        EXIT WHEN max_step > 0 AND token > max_step;   -- refused below, no row
        INSERT INTO fence.fences AS f (resource, token, owner)
            VALUES (_check.resource, _check.token, _check.owner)
            ON CONFLICT ON CONSTRAINT fences_pkey DO NOTHING;
        IF FOUND THEN
            RETURN 0;
        END IF;
        -- lost the race to create the row: lock the winner's version
    END LOOP;

    IF token < hw THEN
        RAISE EXCEPTION 'stale fencing token for resource "%"', resource
            USING ERRCODE = 'LF001',
                  DETAIL = format('Token %s is lower than the highest accepted token %s.', token, hw),
                  HINT = 'Acquire a new lease and retry with its token.';
    ELSIF token = hw AND owner IS NOT NULL AND hw_owner IS NOT NULL AND owner <> hw_owner THEN
        RAISE EXCEPTION 'stale fencing token for resource "%"', resource
            USING ERRCODE = 'LF001',
                  DETAIL = format('Token %s was already accepted for another owner.', token),
                  HINT = 'The lock service issued this token twice; acquire a new lease.';
    END IF;
    IF max_step > 0 AND token > hw AND token::numeric - hw > max_step THEN
        RAISE EXCEPTION 'invalid fencing token for resource "%"', resource
            USING ERRCODE = 'LF003',
                  DETAIL = format('Token %s is more than fence.max_step (%s) above the highest accepted token %s.',
                                  token, max_step, hw);
    END IF;
    IF token > hw OR (hw_owner IS NULL AND owner IS NOT NULL) THEN
        UPDATE fence.fences f SET token = _check.token, owner = _check.owner,
                                  updated_at = now()
         WHERE f.resource = _check.resource;
    END IF;
    RETURN hw;
END
$$;
REVOKE ALL ON FUNCTION fence._check(text, bigint, text) FROM PUBLIC;

-- The rule's SQL functions ---------------------------------------------------

CREATE FUNCTION fence.advance(resource text, token bigint, owner text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    hw bigint;
    hw_owner text;
BEGIN
    IF resource IS NULL THEN
        RAISE EXCEPTION 'resource name must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM fence._refuse_read_only('fence.advance()');
    IF token IS NULL THEN
        RAISE EXCEPTION 'missing fencing token for resource "%"', resource
            USING ERRCODE = 'LF002',
                  HINT = 'Pass the token that came with the lease.';
    END IF;
    hw := fence._check(resource, token, owner);
    -- the owner the guard presents later: ours, or the mark's for an equal token
    IF owner IS NULL AND token = hw THEN
        SELECT f.owner INTO hw_owner FROM fence.fences f WHERE f.resource = advance.resource;
    END IF;
    PERFORM fence._registry_set(resource, token, COALESCE(owner, hw_owner));
    RETURN hw;
END
$$;
REVOKE ALL ON FUNCTION fence.advance(text, bigint, text) FROM PUBLIC;
COMMENT ON FUNCTION fence.advance(text, bigint, text) IS
    'Accept token for resource in this transaction or raise LF001/LF002/LF003; returns the previous mark';

CREATE FUNCTION fence.mark(resource text)
RETURNS bigint
LANGUAGE sql STABLE STRICT PARALLEL SAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE((SELECT f.token FROM fence.fences f
                      WHERE f.resource OPERATOR(pg_catalog.=) $1), 0)
$$;
REVOKE ALL ON FUNCTION fence.mark(text) FROM PUBLIC;
COMMENT ON FUNCTION fence.mark(text) IS
    'Highest accepted token of resource, 0 if none, for roles that may not read fence.fences';

-- fenced_update: PL/pgSQL cannot take VARIADIC "any", so parameters come as
-- text and take the types the query gives $1..$n, as the text[] overload of
-- the C extension does: the query is prepared (PREPARE infers the types),
-- and the rows of an INSERT, UPDATE or DELETE without RETURNING are
-- counted by a WITH around it, because PL/pgSQL cannot read the row count
-- of an EXECUTE of a prepared statement that returns no rows (a MERGE's,
-- which PostgreSQL 15 cannot put in a WITH, is returned as NULL).  It runs with
-- the caller's privileges, and checks the token through fence.advance(),
-- which the caller must therefore be granted too.
CREATE FUNCTION fence.fenced_update(resource text, token bigint, query text,
                                    VARIADIC params text[])
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
AS $$
DECLARE
    depth int := COALESCE(NULLIF(current_setting('fence_registry.fenced_update_depth', true), ''), '0')::int + 1;
    stmt text := 'fence_fenced_update_' || depth;
    body text;
    nargs int;
    args text;
    owner text;
    counted boolean := false;
    merge boolean := false;
    n bigint;
BEGIN
    IF resource IS NULL THEN
        RAISE EXCEPTION 'resource name must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM fence._refuse_read_only('fence.fenced_update()');
    IF token IS NULL THEN
        RAISE EXCEPTION 'missing fencing token for resource "%"', resource
            USING ERRCODE = 'LF002',
                  HINT = 'Pass the token that came with the lease.';
    END IF;
    IF query IS NULL THEN
        RAISE EXCEPTION 'query must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;

    -- statements left by a call at this depth that failed in a savepoint
    IF EXISTS (SELECT FROM pg_prepared_statements p WHERE p.name = stmt) THEN
        EXECUTE format('DEALLOCATE %I', stmt);
    END IF;
    body := regexp_replace(query, '[\s;]+$', '');
    -- A query that cannot run must fail before the mark moves.  It is
    -- prepared inside a WITH, whose parentheses also refuse a second
    -- statement: an INSERT, UPDATE or DELETE without RETURNING gets one, to
    -- count its rows; a SELECT or a statement with RETURNING is counted as
    -- it is.  What no WITH can hold (a MERGE, a WITH with a data-modifying
    -- statement) is prepared on its own, and only when it holds no ";".
    IF body ~ '^\s*$' THEN
        RAISE EXCEPTION 'query must be exactly one SQL statement'
            USING ERRCODE = 'invalid_parameter_value', DETAIL = 'The query has 0 statements.';
    END IF;
    BEGIN
        EXECUTE format('PREPARE %I AS WITH fence_rows AS (%s%sRETURNING 1) SELECT count(*) FROM fence_rows',
                       stmt, body, E'\n');
        counted := true;
    EXCEPTION WHEN feature_not_supported OR syntax_error THEN
        BEGIN
            -- MATERIALIZED: every output column is computed, as the query
            -- alone would compute it (side effects and errors included)
            EXECUTE format('PREPARE %I AS WITH fence_rows AS MATERIALIZED (%s%s) SELECT count(*) FROM fence_rows',
                           stmt, body, E'\n');
            counted := true;
        EXCEPTION WHEN feature_not_supported OR syntax_error THEN
            IF strpos(body, ';') > 0 THEN
                RAISE EXCEPTION 'query must be exactly one SQL statement'
                    USING ERRCODE = 'invalid_parameter_value',
                          DETAIL = 'The SQL edition refuses a ";" in a statement that cannot be put in a WITH (a MERGE, a WITH with a data-modifying statement).';
            END IF;
            merge := body ~* '^\s*merge\M';
            EXECUTE format('PREPARE %I AS %s', stmt, body);
        END;
    END;
    SELECT COALESCE(array_length(p.parameter_types, 1), 0) INTO nargs
      FROM pg_prepared_statements p WHERE p.name = stmt;
    IF nargs <> COALESCE(array_length(params, 1), 0) THEN
        EXECUTE format('DEALLOCATE %I', stmt);
        RAISE EXCEPTION 'query has % parameters but % values were given',
                        nargs, COALESCE(array_length(params, 1), 0)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT string_agg(CASE WHEN v IS NULL THEN 'NULL' ELSE quote_literal(v) END, ', ' ORDER BY i)
      INTO args FROM unnest(params) WITH ORDINALITY AS u(v, i);

    IF current_setting('fence.resource', true) = resource THEN
        owner := NULLIF(current_setting('fence.owner', true), '');
    END IF;
    PERFORM fence.advance(resource, token, owner);
    PERFORM set_config('fence_registry.fenced_update_depth', depth::text, true);
    IF counted THEN
        EXECUTE format('EXECUTE %I%s', stmt, CASE WHEN nargs > 0 THEN '(' || args || ')' ELSE '' END)
            INTO n;
    ELSE
        EXECUTE format('EXECUTE %I%s', stmt, CASE WHEN nargs > 0 THEN '(' || args || ')' ELSE '' END);
        GET DIAGNOSTICS n = ROW_COUNT;
        IF merge THEN
            n := NULL;
        END IF;
    END IF;
    PERFORM set_config('fence_registry.fenced_update_depth', (depth - 1)::text, true);
    EXECUTE format('DEALLOCATE %I', stmt);
    RETURN n;
END
$$;
REVOKE ALL ON FUNCTION fence.fenced_update(text, bigint, text, text[]) FROM PUBLIC;
COMMENT ON FUNCTION fence.fenced_update(text, bigint, text, text[]) IS
    'Accept token for resource, then run query with params, typed as the query types $1..$n; returns rows processed';

CREATE FUNCTION fence.fenced_update(resource text, token bigint, query text)
RETURNS bigint
LANGUAGE sql VOLATILE PARALLEL UNSAFE
AS $$ SELECT fence.fenced_update($1, $2, $3, VARIADIC '{}'::pg_catalog.text[]) $$;
REVOKE ALL ON FUNCTION fence.fenced_update(text, bigint, text) FROM PUBLIC;
COMMENT ON FUNCTION fence.fenced_update(text, bigint, text) IS
    'Accept token for resource, then run query; returns rows processed';

-- Typed parameters of one common type (fenced_update(r, t, q, 10)): PL/pgSQL
-- has no VARIADIC "any", so this takes them as an array of their common
-- type, and passes their text forms on, which the query types again.
-- Parameters of types with no common type (an integer and a timestamp)
-- find no function: pass them as text, or cast them to text.
CREATE FUNCTION fence.fenced_update(resource text, token bigint, query text,
                                    VARIADIC params anycompatiblearray)
RETURNS bigint
LANGUAGE sql VOLATILE PARALLEL UNSAFE
AS $$
    SELECT fence.fenced_update($1, $2, $3, VARIADIC
        COALESCE((SELECT pg_catalog.array_agg(CASE WHEN v IS NOT NULL THEN pg_catalog.format('%s', v) END ORDER BY i)
                    FROM pg_catalog.unnest($4) WITH ORDINALITY AS u(v, i)), '{}'))
$$;
REVOKE ALL ON FUNCTION fence.fenced_update(text, bigint, text, anycompatiblearray) FROM PUBLIC;
COMMENT ON FUNCTION fence.fenced_update(text, bigint, text, anycompatiblearray) IS
    'Accept token for resource, then run query with params (of one common type) bound to $1..$n; returns rows processed';

CREATE FUNCTION fence.reset(resource text, token bigint DEFAULT 0)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    hw bigint;
BEGIN
    IF resource IS NULL OR token IS NULL THEN
        RAISE EXCEPTION 'resource name and token must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM fence._refuse_read_only('fence.reset()');
    PERFORM fence._check_resource_name(resource);
    IF token < 0 THEN
        RAISE EXCEPTION 'invalid fencing token for resource "%"', resource
            USING ERRCODE = 'LF003',
                  DETAIL = format('Token %s is not a positive number.', token);
    END IF;
    LOOP
        SELECT f.token INTO hw FROM fence.fences f WHERE f.resource = reset.resource FOR UPDATE;
        IF FOUND THEN
            IF token = 0 THEN
                DELETE FROM fence.fences f WHERE f.resource = reset.resource;
            ELSE
                UPDATE fence.fences f SET token = reset.token, owner = NULL, updated_at = now()
                 WHERE f.resource = reset.resource;
            END IF;
            EXIT;
        END IF;
        hw := 0;
        EXIT WHEN token = 0;
        INSERT INTO fence.fences (resource, token) VALUES (reset.resource, reset.token)
            ON CONFLICT ON CONSTRAINT fences_pkey DO NOTHING;
        EXIT WHEN FOUND;
    END LOOP;
    PERFORM fence._registry_set(resource, NULL, NULL);
    RAISE LOG 'fence for resource "%" reset from % to % by role "%"',
        resource, hw, token, session_user;
    RETURN hw;
END
$$;
REVOKE ALL ON FUNCTION fence.reset(text, bigint) FROM PUBLIC;
COMMENT ON FUNCTION fence.reset(text, bigint) IS
    'Administrators only: set the mark of resource to token, or remove it (0); logged';

-- Key names -------------------------------------------------------------------

-- The key types whose text form depends on no setting (extension/key_resource.c).
CREATE FUNCTION fence._key_type_allowed(typ regtype)
RETURNS boolean
LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH RECURSIVE base(oid, basetype) AS (
        SELECT t.oid, t.typbasetype FROM pg_type t WHERE t.oid = $1
        UNION ALL
        SELECT t.oid, t.typbasetype FROM pg_type t JOIN base b ON t.oid = b.basetype
    )
    SELECT oid IN ('boolean'::regtype, 'smallint'::regtype, 'integer'::regtype,
                   'bigint'::regtype, 'numeric'::regtype, 'text'::regtype,
                   'character varying'::regtype, 'character'::regtype,
                   'name'::regtype, 'uuid'::regtype)
      FROM base WHERE basetype = 0
$$;

CREATE FUNCTION fence._key_type_detail()
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 'A row''s resource is named after the text form of its key, which must not depend on settings: '
             'the key must be of type boolean, smallint, integer, bigint, numeric, text, character varying, '
             'character, name or uuid, or of a domain over one of them.'::text $$;

CREATE FUNCTION fence._check_key_base(base text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM fence._check_resource_name(base);
    IF strpos(base, ':') > 0 THEN
        RAISE EXCEPTION 'resource "%" of a key-mode guard must not contain ":"', base
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'A row''s resource is the resource, ":" and the key; a ":" in the resource would let two rows of different tables share a name.',
                  HINT = 'Choose a resource without ":".';
    ELSIF octet_length(base) + 1 > 1024 THEN
        RAISE EXCEPTION 'resource of a key-mode guard is too long'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('The resource has %s bytes; with ":" and a key it must fit in %s.',
                                  octet_length(base), 1024);
    END IF;
END
$$;

-- resource:key, with ":" and "\" in the key escaped by "\".
CREATE FUNCTION fence._key_name(base text, key text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT base || ':' || regexp_replace(key, '([:\\])', '\\\1', 'g') $$;

CREATE FUNCTION fence.key_resource(resource text, key anycompatible)
RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
    name text;
BEGIN
    IF NOT fence._key_type_allowed(pg_typeof(key)) THEN
        RAISE EXCEPTION 'key of type % cannot name a resource', format_type(pg_typeof(key), NULL)
            USING ERRCODE = 'datatype_mismatch', DETAIL = fence._key_type_detail();
    END IF;
    PERFORM fence._check_key_base(resource);
    -- format's %s is the type's output function, as the guard uses
    name := fence._key_name(resource, format('%s', key));
    IF octet_length(name) > 1024 THEN
        RAISE EXCEPTION 'resource name is too long'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('The resource of this key has %s bytes; the limit is %s.',
                                  octet_length(name), 1024);
    END IF;
    RETURN name;
END
$$;
COMMENT ON FUNCTION fence.key_resource(text, anycompatible) IS
    'Resource of the row with this key in a table protected with this resource and key_column: resource:key, with ":" and "\" in the key escaped by "\"';

-- Guard trigger ---------------------------------------------------------------

-- The token a guarded write carries for "resource", checked by the rule:
-- what fence.advance() registered in this transaction, else fence.token
-- when fence.resource names the resource (extension/guard.c).
CREATE FUNCTION fence._guard_accept(resource text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    registered text := fence._registry_find(resource);
    setting_resource text := NULLIF(current_setting('fence.resource', true), '');
    text_token text := NULLIF(current_setting('fence.token', true), '');
    token bigint;
BEGIN
    IF registered IS NOT NULL THEN
        token := split_part(registered, '/', 1)::bigint;
        PERFORM fence._check(resource, token, NULLIF(convert_from(decode(split_part(registered, '/', 2), 'hex'), 'UTF8'), ''));
        RETURN token;
    END IF;
    IF setting_resource IS NULL THEN
        RAISE EXCEPTION 'missing fencing token for resource "%"', resource
            USING ERRCODE = 'LF002',
                  DETAIL = 'No token was accepted for this resource in this transaction, and fence.resource is not set.',
                  HINT = 'Call fence.advance() in this transaction, or set fence.resource and fence.token with SET LOCAL, SET or PGOPTIONS.';
    ELSIF setting_resource <> resource THEN
        RAISE EXCEPTION 'missing fencing token for resource "%"', resource
            USING ERRCODE = 'LF002',
                  DETAIL = format('No token was accepted for this resource in this transaction, and fence.resource is "%s".',
                                  setting_resource),
                  HINT = 'Call fence.advance() in this transaction, or set fence.resource and fence.token with SET LOCAL, SET or PGOPTIONS.';
    ELSIF text_token IS NULL THEN
        RAISE EXCEPTION 'missing fencing token for resource "%"', resource
            USING ERRCODE = 'LF002',
                  DETAIL = 'The setting fence.resource names this resource, but fence.token is not set.',
                  HINT = 'Set fence.token to the token of your lease.';
    END IF;
    -- digits only, 1 to 2^63 - 1: '12abc' is not token 12
    IF text_token !~ '^[0-9]{1,19}$' OR text_token::numeric > 9223372036854775807
       OR text_token::numeric = 0 THEN
        RAISE EXCEPTION 'invalid fencing token "%" for resource "%"', text_token, resource
            USING ERRCODE = 'LF003',
                  DETAIL = 'The setting fence.token must be a whole number from 1 to 9223372036854775807, written with digits only.',
                  HINT = 'Set fence.token to the token of your lease.';
    END IF;
    token := text_token::bigint;
    PERFORM fence._check(resource, token, NULLIF(current_setting('fence.owner', true), ''));
    RETURN token;
END
$$;
REVOKE ALL ON FUNCTION fence._guard_accept(text) FROM PUBLIC;

-- The resource of one row of a key-mode table.
CREATE FUNCTION fence._guard_row_resource(base text, keycol text, tbl text, row_ jsonb)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    key jsonb := row_ -> keycol;
    key_text text;
    name text;
BEGIN
    IF key IS NULL OR jsonb_typeof(key) = 'null' THEN
        RAISE EXCEPTION 'null value in key column "%" of protected table "%"', keycol, tbl
            USING ERRCODE = 'null_value_not_allowed',
                  DETAIL = format('The row''s fencing resource is "%s:" followed by its key, so the key must not be null.', base);
    END IF;
    key_text := key #>> '{}';
    IF jsonb_typeof(key) = 'boolean' THEN
        key_text := left(key_text, 1);      -- boolean's output function: t, f
    END IF;
    name := fence._key_name(base, key_text);
    IF octet_length(name) > 1024 THEN
        RAISE EXCEPTION 'resource name of a row of protected table "%" is too long', tbl
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('The row''s resource, "%s:" followed by the key in column "%s", has %s bytes; the limit is %s.',
                                  base, keycol, octet_length(name), 1024);
    END IF;
    RETURN name;
END
$$;

-- The columns a row guard names, checked each time it fires (the C guard
-- does it once per statement): a column dropped, renamed, retyped or made
-- generated after fence.protect() stops every write rather than letting
-- them through unchecked.
CREATE FUNCTION fence._guard_columns(tbl oid, tgname name, tokcol text, keycol text)
RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    col text;
    role text;
    a record;
BEGIN
    FOREACH col IN ARRAY ARRAY[tokcol, keycol] LOOP
        CONTINUE WHEN col IS NULL;
        role := CASE WHEN col IS NOT DISTINCT FROM tokcol AND role IS NULL THEN 'token' ELSE 'key' END;
        SELECT atttypid, attgenerated INTO a FROM pg_attribute
         WHERE attrelid = tbl AND attname = col AND attnum > 0 AND NOT attisdropped;
        IF NOT FOUND THEN
            RAISE EXCEPTION '% column "%" of protected table "%" does not exist', role, col, fence._relname(tbl)
                USING ERRCODE = 'undefined_column', DETAIL = format('Trigger "%s" names it.', tgname),
                      HINT = 'Call fence.unprotect() and fence.protect() again after renaming or dropping a fenced column.';
        ELSIF a.attgenerated <> '' THEN
            RAISE EXCEPTION '% column "%" of protected table "%" is a generated column', role, col, fence._relname(tbl)
                USING ERRCODE = 'invalid_column_reference',
                      DETAIL = format('Generated columns are computed after BEFORE triggers run, so trigger "%s" cannot check it.', tgname),
                      HINT = 'Call fence.unprotect() and fence.protect() again with a column that is not generated.';
        ELSIF role = 'token' AND a.atttypid <> 'bigint'::regtype THEN
            RAISE EXCEPTION 'token column "%" of protected table "%" is not of type bigint', col, fence._relname(tbl)
                USING ERRCODE = 'datatype_mismatch',
                      HINT = 'Call fence.unprotect() and fence.protect() again with a bigint column.';
        ELSIF role = 'key' AND NOT fence._key_type_allowed(a.atttypid) THEN
            RAISE EXCEPTION 'key column "%" of protected table "%" has type %, which cannot name a resource',
                            col, fence._relname(tbl), format_type(a.atttypid, NULL)
                USING ERRCODE = 'datatype_mismatch', DETAIL = fence._key_type_detail(),
                      HINT = 'Call fence.unprotect() and fence.protect() again with a key column of one of these types.';
        END IF;
    END LOOP;
END
$$;

CREATE FUNCTION fence.guard()
RETURNS trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    base text;
    tokcol text;
    keycol text;
    old_row jsonb;
    new_row jsonb;
    res text;
    new_res text;
    token bigint;
    old_token bigint;
    stored bigint;
    later name;
BEGIN
    IF TG_WHEN <> 'BEFORE' THEN
        RAISE EXCEPTION 'fence guard trigger "%" on "%" must be fired BEFORE the write', TG_NAME, TG_TABLE_NAME
            USING ERRCODE = 'trigger_protocol_violated', HINT = 'Install it with fence.protect().';
    END IF;
    PERFORM fence._refuse_read_only('fence.guard()');
    IF TG_NARGS <> 3 OR TG_ARGV[0] = '' THEN
        RAISE EXCEPTION 'fence guard trigger "%" on "%" has invalid arguments', TG_NAME, TG_TABLE_NAME
            USING ERRCODE = 'trigger_protocol_violated',
                  DETAIL = 'A guard takes three arguments: a non-empty resource, the token column and the key column, '''' for no column.',
                  HINT = 'Install it with fence.protect().';
    END IF;
    base := TG_ARGV[0];
    tokcol := NULLIF(TG_ARGV[1], '');
    keycol := NULLIF(TG_ARGV[2], '');

    IF TG_LEVEL = 'STATEMENT' THEN
        IF TG_OP <> 'TRUNCATE' AND (tokcol IS NOT NULL OR keycol IS NOT NULL) THEN
            RAISE EXCEPTION 'fence guard trigger "%" on "%" with a token or key column must be fired FOR EACH ROW', TG_NAME, TG_TABLE_NAME
                USING ERRCODE = 'trigger_protocol_violated', HINT = 'Install it with fence.protect().';
        END IF;
        PERFORM fence._guard_accept(base);
        RETURN NULL;
    END IF;
    IF tokcol IS NULL AND keycol IS NULL THEN
        RAISE EXCEPTION 'fence guard trigger "%" on "%" without a token or key column must be fired FOR EACH STATEMENT', TG_NAME, TG_TABLE_NAME
            USING ERRCODE = 'trigger_protocol_violated', HINT = 'Install it with fence.protect().';
    END IF;
    IF keycol IS NOT NULL THEN
        PERFORM fence._check_key_base(base);
    END IF;
    PERFORM fence._guard_columns(TG_RELID, TG_NAME, tokcol, keycol);

    -- a BEFORE ROW trigger that fires after the guard could change the row
    -- after the check: refuse (extension/guard.c)
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        SELECT t.tgname INTO later FROM pg_trigger t
         WHERE t.tgrelid = TG_RELID AND t.tgname COLLATE "C" > TG_NAME COLLATE "C"
           AND t.tgenabled <> 'D' AND (t.tgtype & 3) = 3
           AND (t.tgtype & CASE TG_OP WHEN 'INSERT' THEN 4 ELSE 16 END) <> 0
         ORDER BY t.tgname COLLATE "C" LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'trigger "%" on protected table "%" fires after its fence guard "%"', later, TG_TABLE_NAME, TG_NAME
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'BEFORE ROW triggers fire in name order, so it could change the row after the guard checked it.',
                      HINT = 'Rename the trigger so that its name sorts before the guard''s, or drop it.';
        END IF;
    END IF;

    IF TG_OP <> 'INSERT' THEN
        old_row := to_jsonb(OLD);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        new_row := to_jsonb(NEW);
    END IF;
    IF keycol IS NULL THEN
        res := base;
        new_res := base;
    ELSE
        res := fence._guard_row_resource(base, keycol, TG_TABLE_NAME, COALESCE(old_row, new_row));
        new_res := CASE WHEN TG_OP = 'UPDATE'
                        THEN fence._guard_row_resource(base, keycol, TG_TABLE_NAME, new_row)
                        ELSE res END;
    END IF;

    IF res = new_res THEN
        token := fence._guard_accept(res);
        old_token := token;
    ELSIF res COLLATE "C" < new_res COLLATE "C" THEN
        -- a row moves between keys: both, in name order (no deadlock)
        old_token := fence._guard_accept(res);
        token := fence._guard_accept(new_res);
    ELSE
        token := fence._guard_accept(new_res);
        old_token := fence._guard_accept(res);
    END IF;

    IF tokcol IS NOT NULL AND old_row IS NOT NULL THEN
        stored := (old_row ->> tokcol)::bigint;
        IF stored > old_token THEN
            RAISE EXCEPTION 'stale fencing token for resource "%"', res
                USING ERRCODE = 'LF001',
                      DETAIL = format('Token %s is lower than token %s stored in column "%s" of the row.',
                                      old_token, stored, tokcol),
                      HINT = 'Acquire a new lease and retry with its token.';
        END IF;
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    IF tokcol IS NOT NULL AND (new_row ->> tokcol) IS DISTINCT FROM token::text THEN
        NEW := jsonb_populate_record(NEW, jsonb_build_object(tokcol, token));
    END IF;
    RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION fence.guard() FROM PUBLIC;
COMMENT ON FUNCTION fence.guard() IS
    'Trigger that refuses writes without a valid fencing token; install it with fence.protect';

CREATE FUNCTION fence._relname(tbl regclass)
RETURNS name
LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT relname FROM pg_class WHERE oid = $1 $$;

CREATE FUNCTION fence._protect_check_column(tbl regclass, colname name, role text)
RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
    a record;
BEGIN
    SELECT attnum, atttypid::regtype AS typ, attgenerated INTO a FROM pg_attribute
     WHERE attrelid = tbl AND attname = colname AND NOT attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION '% column "%" of table "%" does not exist', role, colname, fence._relname(tbl)
            USING ERRCODE = 'undefined_column';
    ELSIF a.attnum < 0 THEN
        RAISE EXCEPTION 'cannot use system column "%" as % column', colname, role
            USING ERRCODE = 'invalid_column_reference';
    ELSIF a.attgenerated <> '' THEN
        RAISE EXCEPTION 'cannot use generated column "%" as % column', colname, role
            USING ERRCODE = 'invalid_column_reference',
                  DETAIL = 'Generated columns are computed after BEFORE triggers run.';
    ELSIF role = 'token' AND a.typ <> 'bigint'::regtype THEN
        RAISE EXCEPTION 'token column "%" must be of type bigint', colname
            USING ERRCODE = 'datatype_mismatch',
                  DETAIL = format('Column "%s" of table "%s" is of type %s.', colname, fence._relname(tbl), format_type(a.typ, NULL));
    ELSIF role = 'key' AND NOT fence._key_type_allowed(a.typ) THEN
        RAISE EXCEPTION 'key column "%" has type %, which cannot name a resource', colname, format_type(a.typ, NULL)
            USING ERRCODE = 'datatype_mismatch', DETAIL = fence._key_type_detail(),
                  HINT = 'Use a key column of one of these types.';
    END IF;
END
$$;

-- With the caller's privileges: CREATE TRIGGER checks that the caller owns
-- the table.
CREATE FUNCTION fence.protect(tbl regclass, resource text,
                              token_column name DEFAULT NULL,
                              key_column name DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
AS $$
DECLARE
    c record;
    row_level boolean := token_column IS NOT NULL OR key_column IS NOT NULL;
    later name;
BEGIN
    IF tbl IS NULL THEN
        RAISE EXCEPTION 'table to protect must not be null' USING ERRCODE = 'null_value_not_allowed';
    ELSIF resource IS NULL THEN
        RAISE EXCEPTION 'resource must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF key_column IS NOT NULL THEN
        PERFORM fence._check_key_base(resource);
    ELSE
        PERFORM fence._check_resource_name(resource);
    END IF;
    SELECT relkind, relispartition, relnamespace = 'fence'::regnamespace AS ours,
           pg_has_role(relowner, 'USAGE') AS owned
      INTO c FROM pg_class WHERE oid = tbl;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'relation with OID % does not exist', tbl::oid USING ERRCODE = 'undefined_table';
    ELSIF NOT c.owned THEN
        RAISE EXCEPTION 'must be owner of table %', fence._relname(tbl) USING ERRCODE = 'insufficient_privilege';
    ELSIF c.relkind = 'p' THEN
        RAISE EXCEPTION 'cannot protect partitioned table "%"', fence._relname(tbl)
            USING ERRCODE = 'wrong_object_type',
                  DETAIL = 'Statement-level triggers of a partitioned table do not fire for statements that name a partition.',
                  HINT = 'Protect each partition instead.';
    ELSIF c.relkind <> 'r' THEN
        RAISE EXCEPTION '"%" is not a table', fence._relname(tbl)
            USING ERRCODE = 'wrong_object_type', DETAIL = 'Only ordinary tables can be protected.';
    ELSIF c.ours THEN
        RAISE EXCEPTION 'cannot protect "%", a table of the fence extension', fence._relname(tbl)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    EXECUTE format('LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE', tbl);
    IF EXISTS (SELECT FROM pg_trigger WHERE tgrelid = tbl AND tgfoid = 'fence.guard()'::regprocedure) THEN
        RAISE EXCEPTION 'table "%" is already protected', fence._relname(tbl)
            USING ERRCODE = 'duplicate_object',
                  HINT = 'Call fence.unprotect() first to change how it is protected.';
    END IF;
    IF token_column IS NOT NULL THEN
        PERFORM fence._protect_check_column(tbl, token_column, 'token');
    END IF;
    IF key_column IS NOT NULL THEN
        PERFORM fence._protect_check_column(tbl, key_column, 'key');
    END IF;
    IF token_column = key_column THEN
        RAISE EXCEPTION 'token column and key column must be different columns'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF row_level THEN
        SELECT t.tgname INTO later FROM pg_trigger t
         WHERE t.tgrelid = tbl AND t.tgname COLLATE "C" > 'fence_guard' AND t.tgenabled <> 'D'
           AND (t.tgtype & 3) = 3 AND (t.tgtype & (4 | 16)) <> 0
         ORDER BY t.tgname COLLATE "C" LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'trigger "%" on protected table "%" fires after its fence guard "%"', later, fence._relname(tbl), 'fence_guard'
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'BEFORE ROW triggers fire in name order, so it could change the row after the guard checked it.',
                      HINT = 'Rename the trigger so that its name sorts before the guard''s, or drop it.';
        END IF;
    ELSIF EXISTS (SELECT FROM pg_inherits WHERE inhrelid = tbl) THEN
        RAISE EXCEPTION '%', CASE WHEN c.relispartition
                                  THEN format('cannot protect partition "%s" without a token or key column', fence._relname(tbl))
                                  ELSE format('cannot protect inheritance child "%s" without a token or key column', fence._relname(tbl)) END
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Statements that write it through its parent would not fire its statement-level guard.',
                  HINT = 'Protect it with a token or key column, whose row-level guard also fires for rows written through the parent.';
    END IF;
    EXECUTE format('CREATE TRIGGER fence_guard BEFORE INSERT OR UPDATE OR DELETE ON %s '
                   'FOR EACH %s EXECUTE FUNCTION fence.guard(%L, %L, %L)',
                   tbl, CASE WHEN row_level THEN 'ROW' ELSE 'STATEMENT' END,
                   resource, COALESCE(token_column, ''), COALESCE(key_column, ''));
    EXECUTE format('CREATE TRIGGER fence_guard_truncate BEFORE TRUNCATE ON %s '
                   'FOR EACH STATEMENT EXECUTE FUNCTION fence.guard(%L, '''', '''')', tbl, resource);
    EXECUTE format('ALTER TABLE %s ENABLE ALWAYS TRIGGER fence_guard, ENABLE ALWAYS TRIGGER fence_guard_truncate', tbl);
END
$$;
REVOKE ALL ON FUNCTION fence.protect(regclass, text, name, name) FROM PUBLIC;
COMMENT ON FUNCTION fence.protect(regclass, text, name, name) IS
    'Install the guard on a table you own: one check per statement, or per row with key_column (see fence.key_resource) and token_column (stamped, never lowered)';

CREATE FUNCTION fence.unprotect(tbl regclass)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t name;
BEGIN
    IF tbl IS NULL THEN
        RAISE EXCEPTION 'table to unprotect must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_class WHERE oid = tbl AND pg_has_role(relowner, 'USAGE')) THEN
        RAISE EXCEPTION 'must be owner of table %', fence._relname(tbl) USING ERRCODE = 'insufficient_privilege';
    END IF;
    EXECUTE format('LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE', tbl);
    IF NOT EXISTS (SELECT FROM pg_trigger WHERE tgrelid = tbl AND tgfoid = 'fence.guard()'::regprocedure) THEN
        RAISE EXCEPTION 'table "%" is not protected', fence._relname(tbl) USING ERRCODE = 'undefined_object';
    END IF;
    FOR t IN SELECT tgname FROM pg_trigger WHERE tgrelid = tbl AND tgfoid = 'fence.guard()'::regprocedure
    LOOP
        EXECUTE format('DROP TRIGGER %I ON %s', t, tbl);
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION fence.unprotect(regclass) FROM PUBLIC;
COMMENT ON FUNCTION fence.unprotect(regclass) IS
    'Remove the guard from a table you own';

CREATE FUNCTION fence.reprotect_all()
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
    n bigint := 0;
BEGIN
    FOR r IN
        SELECT tgrelid::regclass AS tbl,
               string_agg(format('ENABLE ALWAYS TRIGGER %I', tgname), ', ' ORDER BY tgname) AS actions
          FROM pg_trigger
         WHERE tgfoid = 'fence.guard()'::regprocedure AND tgenabled <> 'A'
         GROUP BY tgrelid ORDER BY tgrelid
    LOOP
        EXECUTE format('ALTER TABLE %s %s', r.tbl, r.actions);
        n := n + 1;
    END LOOP;
    RETURN n;
END
$$;
REVOKE ALL ON FUNCTION fence.reprotect_all() FROM PUBLIC;
COMMENT ON FUNCTION fence.reprotect_all() IS
    'Set every fence guard of this database back to ENABLE ALWAYS (after pg_restore --disable-triggers or ENABLE TRIGGER ALL); returns how many tables it changed';

-- Privileges ------------------------------------------------------------------
-- As sql/fence.sql: default privileges must not hand out what the REVOKEs
-- above keep, and the internal helpers are nobody's but the owner's.
DO $$
DECLARE
    g record;
BEGIN
    FOR g IN
        SELECT 'TABLE' AS kind, c.oid::pg_catalog.regclass::pg_catalog.text AS object, a.grantee
          FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) a
         WHERE c.relnamespace OPERATOR(pg_catalog.=) 'fence'::pg_catalog.regnamespace
           AND a.grantee OPERATOR(pg_catalog.<>) c.relowner
        UNION
        SELECT 'FUNCTION', p.oid::pg_catalog.regprocedure::pg_catalog.text, a.grantee
          FROM pg_catalog.pg_proc p, pg_catalog.aclexplode(COALESCE(p.proacl, pg_catalog.acldefault('f', p.proowner))) a
         WHERE p.pronamespace OPERATOR(pg_catalog.=) 'fence'::pg_catalog.regnamespace
           AND a.grantee OPERATOR(pg_catalog.<>) p.proowner
    LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON %s %s FROM %s', g.kind, g.object,
            CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                 ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(g.grantee)) END);
    END LOOP;
END
$$;
GRANT EXECUTE ON FUNCTION fence.key_resource(text, anycompatible) TO PUBLIC;
GRANT EXECUTE ON FUNCTION fence.edition() TO PUBLIC;
GRANT EXECUTE ON FUNCTION fence.mark(text) TO pg_monitor;
-- what the SECURITY DEFINER functions and the guard call on behalf of anyone
GRANT EXECUTE ON FUNCTION fence._refuse_read_only(text), fence._check_resource_name(text),
                          fence._registry_find(text), fence._key_type_allowed(regtype),
                          fence._key_type_detail(), fence._check_key_base(text),
                          fence._key_name(text, text), fence._guard_row_resource(text, text, text, jsonb),
                          fence._protect_check_column(regclass, name, text), fence._guard_columns(oid, name, text, text),
                          fence._relname(regclass)
    TO PUBLIC;
