-- sql/hosted/fence_hosted.sql
--	  The SQL edition of fence: the same rule, schema, names, SQLSTATEs and
--	  privileges as the C extension, in SQL and PL/pgSQL only, for hosted
--	  PostgreSQL (RDS, Aurora, Cloud SQL, Azure, Supabase, Neon) where an
--	  untrusted C extension cannot be installed.  Install it as a plain
--	  script, in one transaction, as a role with CREATE on the database:
--
--	    psql -v ON_ERROR_STOP=1 -1 -f fence_hosted.sql
--
--	  or as a pg_tle extension (make build/fence_pg_tle.sql).  What it
--	  cannot do without C is listed in docs/hosted.md.
--
--	  Invariant (as extension/rule.c): for each resource R, the tokens under
--	  which transactions commit writes never go down in commit order, and
--	  one token is never accepted for two owners.  Every check locks R's row
--	  of fence.fences in the caller's transaction and holds it until the
--	  transaction ends; the data write happens inside that window.  As in
--	  the C extension (extension/rule.c, "Which lock"), a token that does
--	  not move the mark takes the row FOR SHARE, so that writers under one
--	  lease do not queue behind each other, and one that moves it FOR
--	  UPDATE; the mode is chosen from the newest committed version and
--	  decided again on the locked one (a mark that fence.reset() changed
--	  meanwhile: 40001).  Under READ COMMITTED a waiter re-reads the newest
--	  committed version when the lock is granted (what PL/pgSQL's SELECT
--	  FOR SHARE/UPDATE does), under REPEATABLE READ and SERIALIZABLE the
--	  wait ends in 40001.  A missing row is made by INSERT ... ON CONFLICT
--	  DO NOTHING, and a lost race goes back to locking the winner's row.
--	  Fairness: PostgreSQL grants a shared row lock at once while a new
--	  holder waits for the exclusive one, and the C extension queues behind
--	  that waiter through the row's tuple lock, which SQL cannot reach.
--	  Here a check that finds the row taken and has to wait for the
--	  exclusive lock first takes a transaction-level advisory lock on R
--	  (keys 1717923427, "fenc", and hashtext(R)); a shared check takes and
--	  releases that advisory lock in share mode, in one expression, before
--	  it locks the row, and so waits for such a holder (then keeping it in
--	  share mode until its transaction ends).  No upgrades: a transaction
--	  that holds R's row already (the registry's bucket says so, below)
--	  never waits for the exclusive lock nor for the advisory one: two such
--	  transactions would wait for each other; it fails with 40001 at once
--	  when another transaction holds the row too, as the C extension does.
--
--	  The registry.  fence.advance() registers its token for R in a
--	  transaction-local setting (set_config(..., true)), which PostgreSQL
--	  reverts when the transaction or the subtransaction that set it rolls
--	  back, as the C registry does, and as it releases the row locks that
--	  transaction took: an entry, or a ";!" mark that a guard's check left
--	  there, also says that this transaction holds R's row.  A setting can
--	  be written by any role, so the guard never trusts it as proof of a
--	  check: it only supplies the token, which the guard checks again under
--	  the row lock (re-locking a row this transaction holds costs no wait).
--	  A forged entry is thus no more than SET fence.token, and a forged
--	  mark only skips the fairness wait of that one transaction.
--
--	  Forgotten marks.  fence.forget() deletes marks that have not moved for
--	  a while and raises the floor of each one's prefix (fence.floors) to
--	  it; a resource without a mark accepts only a token above its prefix's
--	  floor, read once the check has inserted the mark (extension/floors.c
--	  says why that read is enough).  Under READ COMMITTED the read is a
--	  statement of its own and sees every forget committed before it; under
--	  REPEATABLE READ and SERIALIZABLE, whose snapshot may be older,
--	  fence._forgets turns a forget committed since into 40001.

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

-- A transaction that moves a mark commits durably, whatever its session
-- asked for (synchronous_commit = off is a common tuning, and any role may
-- set it): the mark of a holder that was told its token was accepted must
-- survive a crash, or the old holder's token would be accepted again
-- after it.  fence._check raises synchronous_commit to "on" for the rest
-- of its transaction when it moves a mark (a local flush, and the wait for
-- synchronous standbys where synchronous_standby_names names some), and
-- this deferred trigger raises it again at commit, after a later SET LOCAL
-- synchronous_commit = off of the same transaction.  A transaction that
-- only checks an unchanged mark keeps its session's setting.  What SQL
-- cannot enforce (SET CONSTRAINTS ... IMMEDIATE fires the trigger before
-- the commit): the README's table of differences.
CREATE FUNCTION fence._durable()
RETURNS trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- "on" and "remote_apply" wait at least for a local flush and for
    -- synchronous standbys; "remote_write", "local" and "off" do not both
    IF current_setting('synchronous_commit') NOT IN ('on', 'remote_apply') THEN
        PERFORM set_config('synchronous_commit', 'on', true);
    END IF;
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION fence._durable() FROM PUBLIC;
CREATE CONSTRAINT TRIGGER fence_durable AFTER INSERT OR UPDATE ON fence.fences
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fence._durable();
ALTER TABLE fence.fences ENABLE ALWAYS TRIGGER fence_durable;

-- What fence.forget() leaves of the marks it deletes: per prefix of their
-- names (fence.floor_prefix), the highest of them, never lowered.  A
-- resource without a mark accepts only a token above its prefix's floor
-- (extension/floors.c).  Written only by fence.forget().
CREATE TABLE fence.floors (
    prefix      text PRIMARY KEY,
    token       bigint NOT NULL CHECK (token > 0),
    updated_at  timestamptz NOT NULL DEFAULT pg_catalog.now()
);
REVOKE ALL ON fence.floors FROM PUBLIC;
COMMENT ON TABLE fence.floors IS
    'Per name prefix, the highest mark that fence.forget deleted: a resource without a mark accepts only tokens above it; written only by fence.forget';

-- The forgets, numbered.  The C extension reads a floor with a snapshot
-- taken after a first mark's insertion; PL/pgSQL under REPEATABLE READ or
-- SERIALIZABLE has only the transaction's snapshot, which may predate a
-- forget that raised the floor.  Each fence.forget() takes the next number
-- of the sequence (which every transaction reads as it is now, whatever
-- its snapshot) and inserts it here, one forget at a time; a first mark
-- under those levels looks for each number above the highest its snapshot
-- shows with INSERT ... ON CONFLICT DO NOTHING, which fails with 40001 on
-- the row of a forget that committed after the snapshot, waits for one in
-- progress, and fills the gap an aborted one left.  No forget waits for a
-- writer, except for one that filled a gap while the forget began.
CREATE SEQUENCE fence._forget_numbers;
CREATE TABLE fence._forgets (
    forget      bigint PRIMARY KEY
);
REVOKE ALL ON fence._forgets, fence._forget_numbers FROM PUBLIC;

CREATE FUNCTION fence.edition()
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
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

-- Refuse a value that is not valid in the database encoding with 22021:
-- a setting (PGOPTIONS, ALTER ROLE ... SET) is stored as it came, bytes the
-- encoding does not allow included, and an owner stored with them in
-- fence.fences would make pg_dump's COPY of the marks fail to restore.
-- "what" names where the value came from.  The exception block (a
-- subtransaction) only for a value with a byte above 127 or a backslash.
CREATE FUNCTION fence._check_encoding(value text, what text)
RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- encode(..., 'escape') writes each byte above 127, and each "\", with a "\"
    IF value IS NULL OR strpos(encode(textsend(value), 'escape'), '\') = 0 THEN
        RETURN;
    END IF;
    BEGIN
        PERFORM convert_to(value, getdatabaseencoding());
    EXCEPTION WHEN character_not_in_repertoire OR untranslatable_character THEN
        RAISE EXCEPTION '% is not valid in the database encoding "%"', what, getdatabaseencoding()
            USING ERRCODE = 'character_not_in_repertoire', DETAIL = SQLERRM;
    END;
END
$$;

-- The registry: fence.advance()'s tokens in 256 transaction-local
-- settings, fence_registry.bXX, XX the first two hex digits of the md5 of
-- the resource; each holds ";<md5 of the resource><token>/<owner in hex>"
-- for each of its resources.  Few settings whatever the number of
-- resources: PostgreSQL keeps every setting a session ever named until
-- the session ends, and up to PostgreSQL 15 it sorts them all again for
-- each new one (4096 settings cost a new session 5 s) and walks them all
-- at the end of each call of a function with a SET clause.  Not under
-- "fence.": a server that loads the C extension's library (as during a
-- move to it) reserves that prefix.
CREATE FUNCTION fence._registry_find(resource text)
RETURNS text
LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT NULLIF(substring(current_setting('fence_registry.b' || left(h, 2), true)
                            FROM ';' || h || '([^;]*)'), '')
      FROM (SELECT md5($1) AS h) m
$$;

-- Register "token" (and "owner") for "resource", or forget it (token NULL).
-- Called on every fence.advance (a fenced_update's too): the bucket is cut
-- with strpos and substr, not rewritten with a regular expression (which
-- was a sixth of a fenced_update's time), and left alone when it already
-- says the same.  No search path of its own: only fence's owner may call
-- it, from the functions that pin theirs (advance, reset, resync).
CREATE FUNCTION fence._registry_set(resource text, token bigint, owner text)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
AS $$
DECLARE
    h text := pg_catalog.md5(resource);
    name text := 'fence_registry.b' OPERATOR(pg_catalog.||) pg_catalog."left"(h, 2);
    old text := COALESCE(pg_catalog.current_setting(name, true), '');
    entry text := '';
    at int;
    len int;
    kept text;
BEGIN
    -- forgotten (fence.reset, fence.resync), the resource stays marked as
    -- one whose row this transaction holds (fence._check)
    IF token IS NULL AND pg_catalog.strpos(old, ';!' OPERATOR(pg_catalog.||) h) OPERATOR(pg_catalog.=) 0 THEN
        entry := ';!' OPERATOR(pg_catalog.||) h;
    ELSIF token IS NOT NULL THEN
        entry := ';' OPERATOR(pg_catalog.||) h OPERATOR(pg_catalog.||) token::text OPERATOR(pg_catalog.||) '/'
                 OPERATOR(pg_catalog.||) pg_catalog.encode(pg_catalog.convert_to(COALESCE(owner, ''), 'UTF8'), 'hex');
    END IF;
    at := pg_catalog.strpos(old, ';' OPERATOR(pg_catalog.||) h);
    IF at OPERATOR(pg_catalog.=) 0 THEN
        kept := old;
    ELSE
        -- the entry runs to the next ";" or to the end
        len := pg_catalog.strpos(pg_catalog.substr(old, at OPERATOR(pg_catalog.+) 1), ';');
        IF len OPERATOR(pg_catalog.=) 0 THEN
            IF pg_catalog.substr(old, at) OPERATOR(pg_catalog.=) entry THEN
                RETURN;
            END IF;
            kept := pg_catalog.substr(old, 1, at OPERATOR(pg_catalog.-) 1);
        ELSE
            kept := pg_catalog.substr(old, 1, at OPERATOR(pg_catalog.-) 1)
                    OPERATOR(pg_catalog.||) pg_catalog.substr(old, at OPERATOR(pg_catalog.+) len);
        END IF;
    END IF;
    PERFORM pg_catalog.set_config(name, kept OPERATOR(pg_catalog.||) entry, true);
END
$$;

-- _registry_set for many resources at once (fence.advance_many): each
-- bucket is read and written once, whatever the number of its resources.
CREATE FUNCTION fence._registry_set_many(resources text[], tokens bigint[], owners text[])
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    b record;
    old text;
BEGIN
    FOR b IN SELECT left(m.h, 2) AS bucket, string_agg(m.h, '|') AS gone,
                    string_agg(';' || m.h || m.t || '/' || encode(convert_to(COALESCE(m.o, ''), 'UTF8'), 'hex'), '') AS added
               FROM (SELECT md5(u.r) AS h, u.t, u.o FROM unnest(resources, tokens, owners) AS u(r, t, o)) m
              GROUP BY 1
    LOOP
        old := current_setting('fence_registry.b' || b.bucket, true);
        PERFORM set_config('fence_registry.b' || b.bucket,
                           CASE WHEN old IS NULL OR old = '' THEN b.added
                                ELSE regexp_replace(old, ';(?:' || b.gone || ')[^;]*', '', 'g') || b.added END,
                           true);
    END LOOP;
END
$$;

-- The prefix of a resource's name, whose floor it falls back to once its
-- mark is forgotten: up to its last ':' that no backslash escapes, '' if
-- none (extension/floors.c).  Open to everybody: it only computes a name.
CREATE FUNCTION fence.floor_prefix(resource text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE(substring($1 FROM '^((?:\\.|[^\\])*):(?:\\.|[^\\:])*\\?$'), '')
$$;
COMMENT ON FUNCTION fence.floor_prefix(text) IS
    'Prefix of resource whose floor (fence.floors) applies once its mark is forgotten: up to its last unescaped ":", or empty';

-- The floor under which "resource", whose mark this transaction has just
-- inserted, refuses every token; 0 when its prefix has none.  Read after
-- the insertion, as extension/floors.c says why: under READ COMMITTED
-- this statement's snapshot is newer than the insertion; under the
-- stricter levels fence._forgets stands in for a fresh snapshot.
CREATE FUNCTION fence._floor_of(resource text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    latest bigint;
    seen bigint;
    k bigint;
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        SELECT CASE WHEN is_called THEN last_value ELSE 0 END INTO latest FROM fence._forget_numbers;
        seen := COALESCE((SELECT max(f.forget) FROM fence._forgets f), 0);
        FOR k IN seen + 1 .. latest LOOP
            INSERT INTO fence._forgets VALUES (k) ON CONFLICT DO NOTHING;
        END LOOP;
    END IF;
    RETURN COALESCE((SELECT l.token FROM fence.floors l
                      WHERE l.prefix = fence.floor_prefix(resource)), 0);
END
$$;
REVOKE ALL ON FUNCTION fence._floor_of(text) FROM PUBLIC;

-- The rule: accept "token" from "owner" for "resource" in this transaction
-- or raise LF001/LF003; returns the previous mark (0 if none) and its
-- owner (the caller's registry entry needs it for an equal token).  On return
-- this transaction holds the fence row's lock.  It runs as the owner of
-- fence.fences, which nobody else may write: only that owner may call
-- it, from the SECURITY DEFINER functions that pin their search path
-- (advance, advance_many, the guard), whose path it runs under; one of
-- its own would cost every check a settings save and restore.
CREATE FUNCTION fence._check(resource text, token bigint, owner text, registers boolean,
                             OUT hw bigint, OUT hw_owner text)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
AS $$
DECLARE
    max_step bigint := COALESCE(NULLIF(current_setting('fence.max_step', true), ''), '0')::bigint;
    floor bigint;
    h text := md5(resource);
    bucket text := COALESCE(current_setting('fence_registry.b' || left(h, 2), true), '');
    -- this transaction holds the row: it checked the resource before
    -- (";!<md5>" in the registry's bucket), or advanced it (its entry
    -- there); a caller that "registers" writes that entry itself
    held boolean := strpos(bucket, ';' || h) > 0 OR strpos(bucket, ';!' || h) > 0;
BEGIN
    -- the helpers only where they have something to say: each call of a
    -- function with a SET clause costs (fence.advance_many makes 16,000)
    IF resource = '' OR octet_length(resource) > 1024 THEN
        PERFORM fence._check_resource_name(resource);
    END IF;
    IF strpos(encode(textsend(resource), 'escape'), '\') > 0 THEN
        PERFORM fence._check_encoding(resource, 'resource name');
    END IF;
    IF strpos(encode(textsend(owner), 'escape'), '\') > 0 THEN
        PERFORM fence._check_encoding(owner, 'owner');
    END IF;
    IF token <= 0 THEN
        RAISE EXCEPTION 'invalid fencing token for resource "%"', resource
            USING ERRCODE = 'LF003',
                  DETAIL = format('Token %s is not a positive number.', token);
    END IF;
    LOOP
        -- which lock, from the newest committed version (READ COMMITTED);
        -- the locked version decides (the banner: "Which lock")
        SELECT f.token, f.owner INTO hw, hw_owner
          FROM fence.fences f WHERE f.resource = _check.resource;
        IF FOUND AND NOT (token > hw OR (hw_owner IS NULL AND owner IS NOT NULL)) THEN
            -- shared, behind a waiting new holder (fairness) unless this
            -- transaction holds the row already
            IF NOT held AND NOT (pg_try_advisory_lock_shared(1717923427, hashtext(resource))
                                 AND pg_advisory_unlock_shared(1717923427, hashtext(resource))) THEN
                PERFORM pg_advisory_xact_lock_shared(1717923427, hashtext(resource));
            END IF;
            SELECT f.token, f.owner INTO hw, hw_owner
              FROM fence.fences f WHERE f.resource = _check.resource FOR SHARE;
            IF FOUND AND (token > hw OR (hw_owner IS NULL AND owner IS NOT NULL)) THEN
                RAISE EXCEPTION 'could not serialize access to the fence of resource "%"', resource
                    USING ERRCODE = 'serialization_failure',
                          DETAIL = 'The mark was lowered or changed by fence.reset() while this transaction waited for it.',
                          HINT = 'Retry the transaction.';
            END IF;
        ELSIF FOUND AND held THEN
            -- no upgrade while another transaction holds the row too
            BEGIN
                SELECT f.token, f.owner INTO hw, hw_owner
                  FROM fence.fences f WHERE f.resource = _check.resource FOR UPDATE NOWAIT;
            EXCEPTION WHEN lock_not_available THEN
                RAISE EXCEPTION 'could not serialize access to the fence of resource "%"', resource
                    USING ERRCODE = 'serialization_failure',
                          DETAIL = 'This transaction already holds the fence and has to move its mark, but another transaction holds the fence too.',
                          HINT = 'Retry the transaction.';
            END;
        ELSIF FOUND THEN
            -- exclusive: at once, or announced to the later shared
            -- checks (which queue behind it) and then waited for
            SELECT f.token, f.owner INTO hw, hw_owner
              FROM fence.fences f WHERE f.resource = _check.resource FOR UPDATE SKIP LOCKED;
            IF NOT FOUND THEN
                PERFORM pg_advisory_xact_lock(1717923427, hashtext(resource));
                SELECT f.token, f.owner INTO hw, hw_owner
                  FROM fence.fences f WHERE f.resource = _check.resource FOR UPDATE;
            END IF;
        END IF;
        IF FOUND THEN
            IF NOT held AND NOT registers THEN
                PERFORM set_config('fence_registry.b' || left(h, 2), bucket || ';!' || h, true);
            END IF;
            EXIT;
        END IF;
        INSERT INTO fence.fences AS f (resource, token, owner)
            VALUES (_check.resource, _check.token, _check.owner)
            ON CONFLICT ON CONSTRAINT fences_pkey DO NOTHING;
        IF FOUND THEN
            IF NOT held AND NOT registers THEN
                PERFORM set_config('fence_registry.b' || left(h, 2), bucket || ';!' || h, true);
            END IF;
            -- durable (fence._durable)
            IF current_setting('synchronous_commit') NOT IN ('on', 'remote_apply') THEN
                PERFORM set_config('synchronous_commit', 'on', true);
            END IF;
            -- A first mark: the resource may have had one that fence.forget()
            -- deleted, whose floor the token must be above.  A refusal takes
            -- the insertion back with the statement.  fence._floor_of; its
            -- READ COMMITTED case inline, with fence.floor_prefix's expression
            IF current_setting('transaction_isolation') = 'read committed' THEN
                floor := COALESCE((SELECT l.token FROM fence.floors l
                                    WHERE l.prefix = COALESCE(substring(resource FROM '^((?:\\.|[^\\])*):(?:\\.|[^\\:])*\\?$'), '')), 0);
            ELSE
                floor := fence._floor_of(resource);
            END IF;
            IF token <= floor THEN
                RAISE EXCEPTION 'stale fencing token for resource "%"', resource
                    USING ERRCODE = 'LF001',
                          DETAIL = format('Token %s is not above %s, the floor of the marks forgotten under the resource''s prefix.', token, floor),
                          HINT = format('Acquire a new lease with a token above %s (fence.mark() reports it).', floor);
            END IF;
            IF max_step > 0 AND token::numeric - floor > max_step THEN
                RAISE EXCEPTION 'invalid fencing token for resource "%"', resource
                    USING ERRCODE = 'LF003',
                          DETAIL = format('Token %s is more than fence.max_step (%s) above the highest accepted token %s.',
                                          token, max_step, floor);
            END IF;
            hw := 0;
            RETURN;
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
        IF current_setting('synchronous_commit') NOT IN ('on', 'remote_apply') THEN
            PERFORM set_config('synchronous_commit', 'on', true);
        END IF;
    END IF;
END
$$;
REVOKE ALL ON FUNCTION fence._check(text, bigint, text, boolean) FROM PUBLIC;

-- The rule's SQL functions ---------------------------------------------------

-- Check and register: the rule, then the token in the registry for the
-- guards later in this transaction; returns the previous mark.  One frame
-- with a search path of its own (a fenced_update's only one but the
-- rule's): the read-only check and the registry are helpers called only
-- when they have something to say, or without a path of their own.
CREATE FUNCTION fence.advance(resource text, token bigint, owner text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c record;
    registered text;
    bucket text;
BEGIN
    IF resource IS NULL THEN
        RAISE EXCEPTION 'resource name must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF current_setting('transaction_read_only') = 'on' THEN
        PERFORM fence._refuse_read_only('fence.advance()');
    END IF;
    IF token IS NULL THEN
        RAISE EXCEPTION 'missing fencing token for resource "%"', resource
            USING ERRCODE = 'LF002',
                  HINT = 'Pass the token that came with the lease.';
    END IF;
    c := fence._check(resource, token, owner, true);
    -- the owner the guard presents later: ours, or the mark's for an equal
    -- token; a resource not in its bucket yet (the first advance of a
    -- transaction) appended here, without a call (fence._registry_set)
    registered := CASE WHEN owner IS NULL AND token = c.hw THEN c.hw_owner ELSE owner END;
    bucket := COALESCE(current_setting('fence_registry.b' || left(md5(resource), 2), true), '');
    IF strpos(bucket, ';' || md5(resource)) = 0 THEN
        PERFORM set_config('fence_registry.b' || left(md5(resource), 2),
                           bucket || ';' || md5(resource) || token || '/' || encode(convert_to(COALESCE(registered, ''), 'UTF8'), 'hex'),
                           true);
    ELSE
        PERFORM fence._registry_set(resource, token, registered);
    END IF;
    RETURN c.hw;
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
                      WHERE f.resource OPERATOR(pg_catalog.=) $1),
                    (SELECT l.token FROM fence.floors l
                      WHERE l.prefix OPERATOR(pg_catalog.=) fence.floor_prefix($1)), 0)
$$;
REVOKE ALL ON FUNCTION fence.mark(text) FROM PUBLIC;
COMMENT ON FUNCTION fence.mark(text) IS
    'Highest accepted token of resource, else the floor of its prefix, 0 if neither, for roles that may not read fence.fences';

-- fenced_update: PL/pgSQL cannot take VARIADIC "any", so parameters come as
-- text and take the types the query gives $1..$n, as the text[] overload of
-- the C extension does: the query is prepared (PREPARE infers the types),
-- and the rows of an INSERT, UPDATE or DELETE without RETURNING are
-- counted by a WITH around it, because PL/pgSQL cannot read the row count
-- of an EXECUTE of a prepared statement that returns no rows (a MERGE's,
-- which PostgreSQL 15 cannot put in a WITH, is returned as NULL).  It runs with
-- the caller's privileges, and checks the tokens through fence.advance()
-- (fence.advance_many() for fenced_update_many), which the caller must
-- therefore be granted too.  "many" says which; the owners are the ones
-- the session's settings give (fence._session_owner).
--
-- The search path.  Every function of fence pins its own (pg_catalog
-- first, pg_temp last), so that nothing it calls can be taken over by a
-- function or operator that a role with CREATE on a schema in the
-- caller's path defines (a public.format(text, text, text) is a better
-- match than pg_catalog.format(text, VARIADIC "any")).  The caller's query
-- alone is prepared and run under the caller's path, "path": the public
-- fenced_update and fenced_update_many are SQL functions without a path of
-- their own that only pass it on, with every name in them qualified.
CREATE FUNCTION fence._fenced_statement(path text, resources text[], tokens bigint[], many boolean,
                                        query text, params text[], typ regtype DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    depth int := COALESCE(NULLIF(current_setting('fence_registry.fenced_update_depth', true), ''), '0')::int + 1;
    stmt text := 'fence_fenced_update_' || depth;
    body text;
    nargs int;
    args text;
    owners text[];
    counted boolean := false;
    merge boolean := false;
    cmd text;
    n bigint;
    types text := '';
    form text;
    forms text;
BEGIN
    IF query IS NULL THEN
        RAISE EXCEPTION 'query must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;

    -- statements left by a call at this depth that failed in a savepoint
    IF EXISTS (SELECT FROM pg_prepared_statements p WHERE p.name = stmt) THEN
        EXECUTE format('DEALLOCATE %I', stmt);
    END IF;
    body := rtrim(query, E' \t\n\r\f\v;');
    -- A query that cannot run must fail before the mark moves.  It is
    -- prepared inside a WITH, whose parentheses also refuse a second
    -- statement: an INSERT, UPDATE or DELETE without RETURNING gets one, to
    -- count its rows; a SELECT or a statement with RETURNING is counted as
    -- it is.  What no WITH can hold (a MERGE, a WITH with a data-modifying
    -- statement) is prepared on its own, and only when it holds no ";".
    IF body = '' THEN
        RAISE EXCEPTION 'query must be exactly one SQL statement'
            USING ERRCODE = 'invalid_parameter_value', DETAIL = 'The query has 0 statements.';
    END IF;
    -- Typed parameters (fenced_update's anycompatiblearray form) are
    -- declared, each of the type "typ" (named with its schema, which the
    -- caller's path cannot take over), as fenced_update's EXECUTE ...
    -- USING binds them; text ones take the types the query gives them.
    IF typ IS NOT NULL AND COALESCE(cardinality(params), 0) > 0 THEN
        SELECT '(' || string_agg(format('%I.%I', n.nspname, t.typname), ', ') || ')' INTO types
          FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace, generate_series(1, cardinality(params))
         WHERE t.oid = typ;
    END IF;
    -- Each PREPARE and EXECUTE of the query runs under the caller's path,
    -- set right before it and taken back right after (an error takes it
    -- back with the subtransaction or the function); the statements in
    -- between name nothing.
    BEGIN
        cmd := format('PREPARE %I%s AS WITH fence_rows AS (%s%sRETURNING 1) SELECT pg_catalog.count(*) FROM fence_rows',
                      stmt, types, body, E'\n');
        PERFORM set_config('search_path', path, true);
        EXECUTE cmd;
        PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
        counted := true;
        form := 'c';
    EXCEPTION WHEN feature_not_supported OR syntax_error THEN
        BEGIN
            -- MATERIALIZED: every output column is computed, as the query
            -- alone would compute it (side effects and errors included)
            cmd := format('PREPARE %I%s AS WITH fence_rows AS MATERIALIZED (%s%s) SELECT pg_catalog.count(*) FROM fence_rows',
                          stmt, types, body, E'\n');
            PERFORM set_config('search_path', path, true);
            EXECUTE cmd;
            PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
            counted := true;
        EXCEPTION WHEN feature_not_supported OR syntax_error THEN
            IF strpos(body, ';') > 0 THEN
                RAISE EXCEPTION 'query must be exactly one SQL statement'
                    USING ERRCODE = 'invalid_parameter_value',
                          DETAIL = 'The SQL edition refuses a ";" in a statement that cannot be put in a WITH (a MERGE, a WITH with a data-modifying statement).';
            END IF;
            merge := body ~* '^\s*merge\M';
            cmd := format('PREPARE %I%s AS %s', stmt, types, body);
            PERFORM set_config('search_path', path, true);
            EXECUTE cmd;
            PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
        END;
    END;
    SELECT COALESCE(array_length(p.parameter_types, 1), 0) INTO nargs
      FROM pg_prepared_statements p WHERE p.name = stmt;
    -- an INSERT, UPDATE or DELETE without RETURNING, which fenced_update
    -- runs as it is from now on, without preparing it (the newest 64 of
    -- this session)
    IF form IS NOT NULL THEN
        forms := COALESCE(current_setting('fence_registry.forms', true), '');
        IF strpos(forms, ';' || md5(query)) = 0 THEN
            IF length(forms) >= 64 * 34 THEN
                forms := substr(forms, 35);
            END IF;
            PERFORM set_config('fence_registry.forms', forms || ';' || md5(query) || form, false);
        END IF;
    END IF;
    IF nargs <> COALESCE(array_length(params, 1), 0) THEN
        EXECUTE format('DEALLOCATE %I', stmt);
        RAISE EXCEPTION 'query has % parameters but % values were given',
                        nargs, COALESCE(array_length(params, 1), 0)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT string_agg(CASE WHEN v IS NULL THEN 'NULL' ELSE quote_literal(v) END, ', ' ORDER BY i)
      INTO args FROM unnest(params) WITH ORDINALITY AS u(v, i);

    SELECT array_agg(fence._session_owner(r) ORDER BY i) INTO owners
      FROM unnest(resources) WITH ORDINALITY AS u(r, i);
    IF many THEN
        PERFORM fence.advance_many(resources, tokens, owners);
    ELSE
        PERFORM fence.advance(resources[1], tokens[1], owners[1]);
    END IF;
    PERFORM set_config('fence_registry.fenced_update_depth', depth::text, true);
    cmd := format('EXECUTE %I%s', stmt, CASE WHEN nargs > 0 THEN '(' || args || ')' ELSE '' END);
    PERFORM set_config('search_path', path, true);
    IF counted THEN
        EXECUTE cmd INTO n;
    ELSE
        EXECUTE cmd;
        GET DIAGNOSTICS n = ROW_COUNT;
    END IF;
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    IF merge THEN
        n := NULL;
    END IF;
    PERFORM set_config('fence_registry.fenced_update_depth', (depth - 1)::text, true);
    EXECUTE format('DEALLOCATE %I', stmt);
    RETURN n;
END
$$;
REVOKE ALL ON FUNCTION fence._fenced_statement(text, text[], bigint[], boolean, text, text[], regtype) FROM PUBLIC;

CREATE FUNCTION fence._fenced_update(path text, resource text, token bigint, query text,
                                     params text[])
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
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
    RETURN fence._fenced_statement(path, ARRAY[resource], ARRAY[token], false, query, params);
END
$$;
REVOKE ALL ON FUNCTION fence._fenced_update(text, text, bigint, text, text[]) FROM PUBLIC;

CREATE FUNCTION fence.fenced_update(resource text, token bigint, query text,
                                    VARIADIC params text[])
RETURNS bigint
LANGUAGE sql VOLATILE PARALLEL UNSAFE
AS $$ SELECT fence._fenced_update(pg_catalog.current_setting('search_path'), $1, $2, $3, $4) $$;
REVOKE ALL ON FUNCTION fence.fenced_update(text, bigint, text, text[]) FROM PUBLIC;
COMMENT ON FUNCTION fence.fenced_update(text, bigint, text, text[]) IS
    'Accept token for resource, then run query with params, typed as the query types $1..$n; returns rows processed';

-- Typed parameters of one common type (fenced_update(r, t, q, 10)): PL/pgSQL
-- has no VARIADIC "any", so this takes them as an array of their common
-- type and binds each as a value of that type, as the C extension binds
-- each of its own.  Parameters of types with no common type (an integer
-- and a timestamp) find no function: pass them as text, or cast them to
-- text.  The no-parameter form comes here too.
--
-- The fast path, a fenced_update's cost: no search path of its own (the
-- caller's query runs under the caller's, and every name here is
-- qualified, operators too), the check through fence.advance (the one
-- frame that pins its path, and the caller's privileges on it, as
-- documented), and the query run as it is by EXECUTE ... USING, planned
-- once per call and never PREPAREd, its rows counted by ROW_COUNT.  That
-- the query is one INSERT, UPDATE or DELETE without RETURNING was learnt
-- by the first call with this text, which prepared it inside a WITH
-- (fence._fenced_statement, which refuses anything else);
-- fence_registry.forms keeps its md5 for the session.  That setting, like
-- the registry, is anybody's to write, and a forged entry only runs the
-- caller's own text with the caller's privileges: a text with a ";" (two
-- statements, or one with a ";" in a literal) never takes this path.
-- Everything else (a SELECT, RETURNING, a MERGE, more than eight
-- parameters, an array that is not a plain list) goes through
-- fence._fenced_statement each time, its parameters declared with the
-- same type.
CREATE FUNCTION fence.fenced_update(resource text, token bigint, query text,
                                    VARIADIC params anycompatiblearray)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
AS $$
DECLARE
    n int := COALESCE(pg_catalog.cardinality(params), 0);
    forms text;
    at int;
    owner text;
    setting text;
    texts text[];
    rows bigint;
BEGIN
    IF resource IS NULL THEN
        RAISE EXCEPTION 'resource name must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF pg_catalog.current_setting('transaction_read_only') OPERATOR(pg_catalog.=) 'on' THEN
        PERFORM fence._refuse_read_only('fence.fenced_update()');
    END IF;
    IF token IS NULL THEN
        RAISE EXCEPTION 'missing fencing token for resource "%"', resource
            USING ERRCODE = 'LF002',
                  HINT = 'Pass the token that came with the lease.';
    END IF;
    IF query IS NULL THEN
        RAISE EXCEPTION 'query must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;

    forms := pg_catalog.current_setting('fence_registry.forms', true);
    at := COALESCE(pg_catalog.strpos(forms, ';' OPERATOR(pg_catalog.||) pg_catalog.md5(query)), 0);
    IF n OPERATOR(pg_catalog.>) 0 THEN
        IF pg_catalog.array_ndims(params) OPERATOR(pg_catalog.<>) 1 OR pg_catalog.array_lower(params, 1) OPERATOR(pg_catalog.<>) 1 THEN
            at := 0;
        END IF;
    END IF;
    IF at OPERATOR(pg_catalog.=) 0 OR n OPERATOR(pg_catalog.>) 8 OR pg_catalog.strpos(query, ';') OPERATOR(pg_catalog.>) 0 THEN
        texts := COALESCE((SELECT pg_catalog.array_agg(CASE WHEN v IS NOT NULL THEN pg_catalog.format('%s', v) END ORDER BY i)
                             FROM pg_catalog.unnest(params) WITH ORDINALITY AS u(v, i)), '{}');
        RETURN fence._fenced_statement(pg_catalog.current_setting('search_path'), ARRAY[resource], ARRAY[token], false, query, texts, pg_catalog.pg_typeof(params[1]));
    END IF;

    -- the owner that the session's settings name, if they name one
    -- (fence._session_owner)
    setting := pg_catalog.current_setting('fence.resource', true);
    IF COALESCE(pg_catalog.current_setting('fence.tokens', true), '') OPERATOR(pg_catalog.<>) '' OR setting OPERATOR(pg_catalog.=) resource THEN
        owner := fence._session_owner(resource);
    END IF;
    PERFORM fence.advance(resource, token, owner);

    IF n OPERATOR(pg_catalog.=) 0 THEN
        EXECUTE query;
    ELSIF n OPERATOR(pg_catalog.=) 1 THEN
        EXECUTE query USING params[1];
    ELSIF n OPERATOR(pg_catalog.=) 2 THEN
        EXECUTE query USING params[1], params[2];
    ELSIF n OPERATOR(pg_catalog.=) 3 THEN
        EXECUTE query USING params[1], params[2], params[3];
    ELSIF n OPERATOR(pg_catalog.=) 4 THEN
        EXECUTE query USING params[1], params[2], params[3], params[4];
    ELSIF n OPERATOR(pg_catalog.=) 5 THEN
        EXECUTE query USING params[1], params[2], params[3], params[4], params[5];
    ELSIF n OPERATOR(pg_catalog.=) 6 THEN
        EXECUTE query USING params[1], params[2], params[3], params[4], params[5], params[6];
    ELSIF n OPERATOR(pg_catalog.=) 7 THEN
        EXECUTE query USING params[1], params[2], params[3], params[4], params[5], params[6], params[7];
    ELSE
        EXECUTE query USING params[1], params[2], params[3], params[4], params[5], params[6], params[7], params[8];
    END IF;
    GET DIAGNOSTICS rows = ROW_COUNT;
    RETURN rows;
END
$$;
REVOKE ALL ON FUNCTION fence.fenced_update(text, bigint, text, anycompatiblearray) FROM PUBLIC;
COMMENT ON FUNCTION fence.fenced_update(text, bigint, text, anycompatiblearray) IS
    'Accept token for resource, then run query with params (of one common type) bound to $1..$n; returns rows processed';

CREATE FUNCTION fence.fenced_update(resource text, token bigint, query text)
RETURNS bigint
LANGUAGE sql VOLATILE PARALLEL UNSAFE
AS $$ SELECT fence.fenced_update($1, $2, $3, VARIADIC NULL::pg_catalog.int4[]) $$;
REVOKE ALL ON FUNCTION fence.fenced_update(text, bigint, text) FROM PUBLIC;
COMMENT ON FUNCTION fence.fenced_update(text, bigint, text) IS
    'Accept token for resource, then run query; returns rows processed';

-- A set of leases in one call (a transfer between two accounts, each its
-- own lease; extension/many.c): the fence rows are taken in the bytewise
-- order of the names (COLLATE "C") whatever the order given, so that two
-- calls naming the same resources in opposite orders cannot deadlock; all
-- or none, since a refusal raises and takes the statement's advances back.

-- The arguments of a _many call, checked before any row is touched, with
-- the C extension's messages (fence_resource_list() in extension/many.c).
CREATE FUNCTION fence._check_resource_list(resources text[], tokens bigint[], owners text[])
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n int := cardinality(resources);
    r record;
BEGIN
    IF resources IS NULL THEN
        RAISE EXCEPTION 'resource names must not be null' USING ERRCODE = 'null_value_not_allowed';
    ELSIF array_ndims(resources) > 1 THEN
        RAISE EXCEPTION 'resources must be a one-dimensional array' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- the first bad name, in one query (linear in the number of names)
    FOR r IN SELECT v, i FROM unnest(resources) WITH ORDINALITY AS u(v, i)
              WHERE v IS NULL OR v = '' OR octet_length(v) > 1024 ORDER BY i LIMIT 1 LOOP
        IF r.v IS NULL THEN
            RAISE EXCEPTION 'resource name must not be null'
                USING ERRCODE = 'null_value_not_allowed',
                      DETAIL = format('Element %s of the resources is null.', r.i);
        END IF;
        PERFORM fence._check_resource_name(r.v);
    END LOOP;

    IF tokens IS NULL AND n = 0 THEN
        RAISE EXCEPTION 'missing fencing tokens'
            USING ERRCODE = 'LF002', HINT = 'Pass the tokens that came with the leases.';
    ELSIF tokens IS NULL THEN
        RAISE EXCEPTION 'missing fencing token for resource "%"', resources[array_lower(resources, 1)]
            USING ERRCODE = 'LF002', HINT = 'Pass the token that came with the lease.';
    ELSIF array_ndims(tokens) > 1 THEN
        RAISE EXCEPTION 'tokens must be a one-dimensional array' USING ERRCODE = 'invalid_parameter_value';
    ELSIF cardinality(tokens) <> n THEN
        RAISE EXCEPTION 'resources and tokens must have the same length'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('There are %s resources and %s tokens.', n, cardinality(tokens));
    END IF;
    FOR r IN SELECT v, t FROM unnest(resources, tokens) WITH ORDINALITY AS u(v, t, i)
              WHERE t IS NULL ORDER BY i LIMIT 1 LOOP
        IF r.t IS NULL THEN
            RAISE EXCEPTION 'missing fencing token for resource "%"', r.v
                USING ERRCODE = 'LF002', HINT = 'Pass the token that came with the lease.';
        END IF;
    END LOOP;

    IF owners IS NULL THEN
        RETURN;
    ELSIF array_ndims(owners) > 1 THEN
        RAISE EXCEPTION 'owners must be a one-dimensional array' USING ERRCODE = 'invalid_parameter_value';
    ELSIF cardinality(owners) <> n THEN
        RAISE EXCEPTION 'resources and owners must have the same length'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('There are %s resources and %s owners.', n, cardinality(owners));
    END IF;
END
$$;

-- Accept each token for its resource, in name order, or raise; returns the
-- previous marks in the order given.  A resource named twice is checked
-- once: with the same token and no two different owners (an owner given
-- once counts for both places); anything else is LF003, before any row is
-- touched.
CREATE FUNCTION fence._advance_list(resources text[], tokens bigint[], owners text[])
RETURNS bigint[]
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    g record;
    e record;
    c record;
    first_token bigint;
    owner text;
    hw bigint;
    i int;
    k int := 0;
    names text[] := '{}';
    toks bigint[] := '{}';
    registered text[] := '{}';
    previous bigint[] := array_fill(0::bigint, ARRAY[cardinality(resources)]);
BEGIN
    -- Linear in the number of resources: one grouped query, the rule once
    -- a resource, the registry written once a bucket, arrays filled in
    -- place.  First the resource named twice with two tokens or two
    -- owners that comes first in name order, if any; its entries in the
    -- order given say which message.
    FOR g IN SELECT u.r FROM unnest(resources, tokens, owners) AS u(r, t, o)
              GROUP BY u.r HAVING count(DISTINCT u.t) > 1 OR count(DISTINCT u.o) > 1
              ORDER BY u.r COLLATE "C" LIMIT 1
    LOOP
        FOR e IN SELECT u.t, u.o, u.pos FROM unnest(resources, tokens, owners) WITH ORDINALITY AS u(r, t, o, pos)
                  WHERE u.r = g.r ORDER BY u.pos
        LOOP
            IF first_token IS NULL THEN
                first_token := e.t;
                owner := e.o;
                CONTINUE;
            END IF;
            IF e.t <> first_token OR (owner IS NOT NULL AND e.o IS NOT NULL AND owner <> e.o) THEN
                RAISE EXCEPTION 'two fencing tokens for resource "%"', g.r
                    USING ERRCODE = 'LF003',
                          DETAIL = CASE WHEN e.t <> first_token
                                        THEN format('The resource is named twice, with tokens %s and %s.', first_token, e.t)
                                        ELSE format('The resource is named twice with token %s, for two different owners.', first_token) END,
                          HINT = 'Name each resource once, with the token of its lease.';
            END IF;
            owner := COALESCE(owner, e.o);
        END LOOP;
    END LOOP;

    -- in name order, bytewise; a resource's owner is the first one given
    FOR g IN SELECT u.r, (array_agg(u.t ORDER BY u.pos))[1] AS t,
                    (array_agg(u.o ORDER BY u.pos) FILTER (WHERE u.o IS NOT NULL))[1] AS o,
                    array_agg(u.pos::int) AS at
               FROM unnest(resources, tokens, owners) WITH ORDINALITY AS u(r, t, o, pos)
              GROUP BY u.r ORDER BY u.r COLLATE "C"
    LOOP
        c := fence._check(g.r, g.t, g.o, true);
        hw := c.hw;
        FOREACH i IN ARRAY g.at LOOP
            previous[i] := hw;
        END LOOP;
        k := k + 1;
        names[k] := g.r;
        toks[k] := g.t;
        -- the owner the guard presents later: ours, or the mark's for an equal token
        registered[k] := CASE WHEN g.o IS NULL AND g.t = hw THEN c.hw_owner ELSE g.o END;
    END LOOP;
    PERFORM fence._registry_set_many(names, toks, registered);
    RETURN previous;
END
$$;
REVOKE ALL ON FUNCTION fence._advance_list(text[], bigint[], text[]) FROM PUBLIC;

CREATE FUNCTION fence.advance_many(resources text[], tokens bigint[], owners text[] DEFAULT NULL)
RETURNS bigint[]
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM fence._check_resource_list(resources, tokens, owners);
    PERFORM fence._refuse_read_only('fence.advance_many()');
    RETURN fence._advance_list(resources, tokens, owners);
END
$$;
REVOKE ALL ON FUNCTION fence.advance_many(text[], bigint[], text[]) FROM PUBLIC;
COMMENT ON FUNCTION fence.advance_many(text[], bigint[], text[]) IS
    'Accept each token for its resource (in name order, all or none) or raise LF001/LF002/LF003; returns the previous marks in the order given';

CREATE FUNCTION fence._fenced_update_many(path text, resources text[], tokens bigint[], query text,
                                          params text[])
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM fence._check_resource_list(resources, tokens, NULL);
    -- a fenced write that names no resource would be an unfenced one
    IF cardinality(resources) = 0 THEN
        RAISE EXCEPTION 'resources must not be empty'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Name the resource of every lease the statement writes under.';
    END IF;
    PERFORM fence._refuse_read_only('fence.fenced_update_many()');
    RETURN fence._fenced_statement(path, resources, tokens, true, query, params);
END
$$;
REVOKE ALL ON FUNCTION fence._fenced_update_many(text, text[], bigint[], text, text[]) FROM PUBLIC;

CREATE FUNCTION fence.fenced_update_many(resources text[], tokens bigint[], query text,
                                         VARIADIC params text[])
RETURNS bigint
LANGUAGE sql VOLATILE PARALLEL UNSAFE
AS $$ SELECT fence._fenced_update_many(pg_catalog.current_setting('search_path'), $1, $2, $3, $4) $$;
REVOKE ALL ON FUNCTION fence.fenced_update_many(text[], bigint[], text, text[]) FROM PUBLIC;
COMMENT ON FUNCTION fence.fenced_update_many(text[], bigint[], text, text[]) IS
    'Accept each token for its resource (in name order, all or none), then run query with params, typed as the query types $1..$n; returns rows processed';

CREATE FUNCTION fence.fenced_update_many(resources text[], tokens bigint[], query text)
RETURNS bigint
LANGUAGE sql VOLATILE PARALLEL UNSAFE
AS $$ SELECT fence.fenced_update_many($1, $2, $3, VARIADIC '{}'::pg_catalog.text[]) $$;
REVOKE ALL ON FUNCTION fence.fenced_update_many(text[], bigint[], text) FROM PUBLIC;
COMMENT ON FUNCTION fence.fenced_update_many(text[], bigint[], text) IS
    'Accept each token for its resource (in name order, all or none), then run query; returns rows processed';

-- Typed parameters of one common type, as fenced_update's anycompatiblearray form.
CREATE FUNCTION fence.fenced_update_many(resources text[], tokens bigint[], query text,
                                         VARIADIC params anycompatiblearray)
RETURNS bigint
LANGUAGE sql VOLATILE PARALLEL UNSAFE
AS $$
    SELECT fence.fenced_update_many($1, $2, $3, VARIADIC
        COALESCE((SELECT pg_catalog.array_agg(CASE WHEN v IS NOT NULL THEN pg_catalog.format('%s', v) END ORDER BY i)
                    FROM pg_catalog.unnest($4) WITH ORDINALITY AS u(v, i)), '{}'))
$$;
REVOKE ALL ON FUNCTION fence.fenced_update_many(text[], bigint[], text, anycompatiblearray) FROM PUBLIC;
COMMENT ON FUNCTION fence.fenced_update_many(text[], bigint[], text, anycompatiblearray) IS
    'Accept each token for its resource (in name order, all or none), then run query with params (of one common type) bound to $1..$n; returns rows processed';

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

-- After a failover to a standby that missed acknowledged announces: raise
-- each mark to its resource's token counter in Redis, never lowering one,
-- making the marks that are missing; a raised mark has no owner, so the
-- newest holder's token (equal to the counter) still writes.  Rows locked
-- in bytewise order of the names, as _advance_list takes them; a resource
-- named twice gets the larger counter.  "fence resync" reads the counters
-- and calls it.  Administrators only, like fence.reset(), and logged
-- (extension/rule.c, fence_resync).
CREATE FUNCTION fence.resync(resources text[], counters bigint[])
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
    hw bigint;
    changed bigint := 0;
    made bigint := 0;
    n int := 0;
BEGIN
    PERFORM fence._refuse_read_only('fence.resync()');
    PERFORM fence._check_resource_list(resources, counters, NULL);
    FOR r IN SELECT u.v, u.c FROM unnest(resources, counters) AS u(v, c) LOOP
        IF r.c <= 0 THEN
            RAISE EXCEPTION 'token counter of resource "%" must be positive', r.v
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = format('Counter %s was given.', r.c);
        END IF;
    END LOOP;
    FOR r IN SELECT u.v AS resource, max(u.c) AS counter
               FROM unnest(resources, counters) AS u(v, c)
              GROUP BY u.v ORDER BY u.v COLLATE "C" LOOP
        n := n + 1;
        LOOP
            SELECT f.token INTO hw FROM fence.fences f WHERE f.resource = r.resource FOR UPDATE;
            IF FOUND THEN
                IF hw < r.counter THEN
                    UPDATE fence.fences f SET token = r.counter, owner = NULL, updated_at = now()
                     WHERE f.resource = r.resource;
                    changed := changed + 1;
                    PERFORM fence._registry_set(r.resource, NULL, NULL);
                END IF;
                EXIT;
            END IF;
            INSERT INTO fence.fences (resource, token) VALUES (r.resource, r.counter)
                ON CONFLICT ON CONSTRAINT fences_pkey DO NOTHING;
            IF FOUND THEN
                changed := changed + 1;
                made := made + 1;
                PERFORM fence._registry_set(r.resource, NULL, NULL);
                EXIT;
            END IF;
        END LOOP;
    END LOOP;
    -- a repair that a crash undid would let the stale tokens in again
    IF changed > 0 AND current_setting('synchronous_commit') IN ('off', 'local', 'remote_write') THEN
        PERFORM set_config('synchronous_commit', 'on', true);
    END IF;
    RAISE LOG 'fence.resync raised % marks and made % of % resources, by role "%"',
        changed - made, made, n, session_user;
    RETURN changed;
END
$$;
REVOKE ALL ON FUNCTION fence.resync(text[], bigint[]) FROM PUBLIC;
COMMENT ON FUNCTION fence.resync(text[], bigint[]) IS
    'Administrators only: raise the mark of each resource to its Redis token counter (never lowering, making missing marks); returns how many marks changed; logged';

-- Delete the marks that have not moved for longer than older_than, and
-- raise the floor of each one's prefix to it in the same transaction, so
-- that no token at or below a forgotten mark is accepted again
-- (docs/maintenance.md; as sql/fence.sql).  It also numbers itself in
-- fence._forgets, for first marks under REPEATABLE READ and SERIALIZABLE.
CREATE FUNCTION fence.forget(older_than interval)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    forgotten bigint;
BEGIN
    IF older_than IS NULL THEN
        RAISE EXCEPTION 'older_than must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    ELSIF older_than < interval '0' THEN
        RAISE EXCEPTION 'older_than must not be negative'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = pg_catalog.format('The interval is %s.', older_than);
    END IF;
    -- what the C extension's DELETE would say
    PERFORM fence._refuse_read_only('DELETE');
    -- one forget at a time, numbered in commit order (fence._forgets)
    LOCK TABLE fence._forgets IN SHARE ROW EXCLUSIVE MODE;
    INSERT INTO fence._forgets VALUES (nextval('fence._forget_numbers'));
    WITH gone AS (
        DELETE FROM fence.fences f
         WHERE f.updated_at < pg_catalog.now() - older_than
        RETURNING f.resource, f.token
    ), raised AS (
        INSERT INTO fence.floors AS l (prefix, token)
        SELECT fence.floor_prefix(g.resource), pg_catalog.max(g.token)
          FROM gone g GROUP BY 1
        ON CONFLICT (prefix) DO UPDATE
           SET token = GREATEST(l.token, EXCLUDED.token), updated_at = pg_catalog.now()
    )
    SELECT pg_catalog.count(*) INTO forgotten FROM gone;
    RAISE LOG 'fence forgot % marks not moved for %, by role "%"',
        forgotten, older_than, SESSION_USER;
    RETURN forgotten;
END
$$;
REVOKE ALL ON FUNCTION fence.forget(interval) FROM PUBLIC;
COMMENT ON FUNCTION fence.forget(interval) IS
    'Administrators only: delete the marks not moved for longer than older_than, raising the floor of their prefixes (fence.floors) to them; returns how many; logged';

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
SET search_path = pg_catalog, pg_temp
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
SET search_path = pg_catalog, pg_temp
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

-- fence.tokens --------------------------------------------------------------
-- The tokens of several resources in one setting (docs/sql-reference.md,
-- "fence.tokens"; extension/tokens.c).  The C extension parses the value when it is set and
-- refuses a malformed one there; here fence.tokens is a placeholder setting
-- that takes any value, so it is parsed when a guard or fenced_update reads
-- it, and a malformed value is refused then, with the C extension's
-- message and detail (22023).

CREATE FUNCTION fence._tokens_refuse(value text, detail text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'invalid value for parameter "fence.tokens": "%"', value
        USING ERRCODE = 'invalid_parameter_value', DETAIL = detail;
END
$$;

-- One resource or owner of entry "entry" at position "pos" of "value": a
-- quoted string, or bare text up to one of "stops"; as read_word() in
-- extension/tokens.c.
CREATE FUNCTION fence._tokens_word(value text, pos int, stops text, what text, entry int,
                                   OUT word text, OUT next int)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    len int := length(value);
    c text;
BEGIN
    word := '';
    next := pos;
    IF substr(value, next, 1) = '"' THEN
        next := next + 1;
        LOOP
            IF next > len THEN
                PERFORM fence._tokens_refuse(value, format('Entry %s: the %s has no closing double quote.', entry, what));
            END IF;
            c := substr(value, next, 1);
            IF c = '"' THEN
                EXIT WHEN substr(value, next + 1, 1) <> '"';
                next := next + 1;
            END IF;
            word := word || c;
            next := next + 1;
        END LOOP;
        next := next + 1;
        RETURN;
    END IF;
    WHILE next <= len AND strpos(stops, substr(value, next, 1)) = 0 LOOP
        c := substr(value, next, 1);
        IF c IN ('"', '\') THEN
            PERFORM fence._tokens_refuse(value,
                format('Entry %s: the %s contains %s; write it in double quotes, doubling each ''"''.', entry, what, c));
        END IF;
        word := word || c;
        next := next + 1;
    END LOOP;
    -- an owner ends the entry, and whitespace after an entry is not its own
    IF what = 'owner' THEN
        word := rtrim(word, E' \t\n\r\f\v');
    END IF;
    IF word ~ '^[ \t\n\r\f\v]|[ \t\n\r\f\v]$' THEN
        PERFORM fence._tokens_refuse(value,
            format('Entry %s: the %s "%s" starts or ends with whitespace; write it in double quotes.', entry, what, word));
    END IF;
END
$$;

-- Add an entry to the parsed set: the same resource twice only if both
-- entries say the same.
CREATE FUNCTION fence._tokens_add(value text, parsed jsonb, resource text, token bigint, owner text)
RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    entry jsonb := jsonb_build_array(token, owner);
BEGIN
    IF parsed ? resource AND parsed -> resource <> entry THEN
        PERFORM fence._tokens_refuse(value,
            format('Resource "%s" has two entries with different tokens or owners.', resource));
    END IF;
    RETURN parsed || jsonb_build_object(resource, entry);
END
$$;

-- The whole value, one character at a time, as fence_tokens_check() in
-- extension/tokens.c: the authority on what is well formed, and on what
-- a malformed value's detail says.
CREATE FUNCTION fence._tokens_parse_slowly(value text)
RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    space constant text := E' \t\n\r\f\v';
    len int := length(value);
    pos int := 1;
    n int := 0;
    w record;
    resource text;
    owner text;
    digits text;
    negative boolean;
    entries jsonb := '[]';
    e jsonb;
    parsed jsonb := '{}';
BEGIN
    LOOP
        WHILE pos <= len AND strpos(space, substr(value, pos, 1)) > 0 LOOP
            pos := pos + 1;
        END LOOP;
        EXIT WHEN pos > len AND n = 0;          -- an empty value: no entries
        IF pos > len OR substr(value, pos, 1) = ',' THEN
            PERFORM fence._tokens_refuse(value, format('Entry %s is empty.', n + 1));
        END IF;
        n := n + 1;

        w := fence._tokens_word(value, pos, '=,', 'resource', n);
        resource := w.word;
        pos := w.next;
        IF substr(value, pos, 1) <> '=' OR pos > len THEN
            PERFORM fence._tokens_refuse(value,
                format('Entry %s: expected ''='' and a token after resource "%s".', n, resource));
        ELSIF resource = '' THEN
            PERFORM fence._tokens_refuse(value, format('Entry %s: the resource name is empty.', n));
        ELSIF octet_length(resource) > 1024 THEN
            PERFORM fence._tokens_refuse(value,
                format('Entry %s: the resource name has %s bytes; the limit is %s.', n, octet_length(resource), 1024));
        END IF;

        pos := pos + 1;
        negative := substr(value, pos, 1) = '-';
        IF negative THEN
            pos := pos + 1;
        END IF;
        digits := substring(substr(value, pos) FROM '^[0-9]*');
        -- the C parser stops at the first digit that overflows
        IF ltrim(digits, '0') <> '' AND
           (length(ltrim(digits, '0')) > 19 OR ltrim(digits, '0')::numeric > 9223372036854775807) THEN
            PERFORM fence._tokens_refuse(value,
                format('Entry %s: the token of resource "%s" is larger than 9223372036854775807.', n, resource));
        END IF;
        pos := pos + length(digits);
        IF digits = '' OR (pos <= len AND substr(value, pos, 1) NOT IN (',', '/')
                           AND strpos(space, substr(value, pos, 1)) = 0) THEN
            PERFORM fence._tokens_refuse(value,
                format('Entry %s: the token of resource "%s" must be written with digits only.', n, resource));
        END IF;

        owner := NULL;
        IF substr(value, pos, 1) = '/' THEN
            w := fence._tokens_word(value, pos + 1, ',', 'owner', n);
            owner := w.word;
            pos := w.next;
            IF owner = '' THEN
                PERFORM fence._tokens_refuse(value,
                    format('Entry %s: the owner of resource "%s" is empty; leave out the ''/'' for no owner.', n, resource));
            END IF;
        END IF;
        WHILE pos <= len AND strpos(space, substr(value, pos, 1)) > 0 LOOP
            pos := pos + 1;
        END LOOP;
        IF pos <= len AND substr(value, pos, 1) <> ',' THEN
            PERFORM fence._tokens_refuse(value,
                format('Entry %s: unexpected text after the entry of resource "%s".', n, resource));
        END IF;
        entries := entries || jsonb_build_array(jsonb_build_array(
                       resource, (CASE WHEN negative THEN -1 ELSE 1 END) * digits::bigint, owner));
        EXIT WHEN pos > len;
        pos := pos + 1;                          -- the ','
    END LOOP;
    -- a resource named twice, once every entry is read (as build_set())
    FOR e IN SELECT * FROM jsonb_array_elements(entries) LOOP
        parsed := fence._tokens_add(value, parsed, e ->> 0, (e ->> 1)::bigint, e ->> 2);
    END LOOP;
    RETURN parsed;
END
$$;

-- fence.tokens as {"resource": [token, owner or null], ...}: the entries
-- matched by one regular expression and built into the set by one query,
-- in C (two thousand entries in milliseconds), when every entry is well
-- formed; the slow parser above for anything it is unsure of, which also
-- says what is wrong.
CREATE FUNCTION fence._tokens_parse(value text)
RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    -- one entry; no group captures, so that the whole value is matched by
    -- the regular expression engine's fast path
    entry constant text := '[ \t\n\r\f\v]*(?:"(?:[^"]|"")*"|[^",=\\]*)=-?[0-9]+(?:/(?:"(?:[^"]|"")*"|[^",\\]*))?[ \t\n\r\f\v]*';
    twice text;
    unsound boolean;
    parsed jsonb;
BEGIN
    IF value ~ '^[ \t\n\r\f\v]*$' THEN
        RETURN '{}';
    END IF;
    IF value !~ ('^' || entry || '(?:,' || entry || ')*$') THEN
        RETURN fence._tokens_parse_slowly(value);
    END IF;
    WITH m AS (
        SELECT CASE WHEN left(x[1], 1) = '"' THEN replace(substr(x[1], 2, length(x[1]) - 2), '""', '"')
                    ELSE x[1] END AS resource,
               left(x[1], 1) = '"' AS quoted,
               x[2] AS digits,
               CASE WHEN left(x[3], 1) = '"' THEN replace(substr(x[3], 2, length(x[3]) - 2), '""', '"')
                    ELSE rtrim(x[3], E' \t\n\r\f\v') END AS owner,
               left(x[3], 1) = '"' AS owner_quoted,
               ord
          FROM regexp_matches(value,
                 '[ \t\n\r\f\v]*("(?:[^"]|"")*"|[^",=\\]*)=(-?[0-9]+)(?:/("(?:[^"]|"")*"|[^",\\]*))?[ \t\n\r\f\v]*(?:,|$)',
                 'g') WITH ORDINALITY AS t(x, ord)
    ), firsts AS (
        SELECT DISTINCT ON (resource) resource, digits, owner FROM m ORDER BY resource, ord
    )
    SELECT (SELECT bool_or(resource = '' OR octet_length(resource) > 1024 OR owner = ''
                           OR (NOT quoted AND resource ~ '[ \t\n\r\f\v]$')
                           OR (NOT owner_quoted AND owner ~ '^[ \t\n\r\f\v]')
                           OR length(ltrim(digits, '-0')) > 19
                           OR (ltrim(digits, '-0') <> '' AND ltrim(digits, '-0')::numeric > 9223372036854775807))
              FROM m),
           (SELECT m.resource FROM m JOIN firsts f USING (resource)
             WHERE m.digits::numeric <> f.digits::numeric OR m.owner IS DISTINCT FROM f.owner
             ORDER BY m.ord LIMIT 1),
           (SELECT jsonb_object_agg(resource, jsonb_build_array(digits::numeric, owner)) FROM firsts)
      INTO unsound, twice, parsed;
    -- what the slow parser refuses, and says where
    IF unsound THEN
        RETURN fence._tokens_parse_slowly(value);
    ELSIF twice IS NOT NULL THEN
        PERFORM fence._tokens_refuse(value,
            format('Resource "%s" has two entries with different tokens or owners.', twice));
    END IF;
    RETURN parsed;
END
$$;

-- fence.tokens's entry for "resource": present, and its token and owner.
-- The parsed value is kept in the session (fence_registry.tokens: the md5
-- of the value, then ";<md5 of the resource><token>/<owner in hex, or
-- ->" for each entry), so that a key-mode statement over a thousand rows
-- parses it once, and each row finds its entry with one strpos().  Like the registry, the
-- cache is anybody's to write: what it gives is checked by the rule, and
-- forging it is no more than setting fence.tokens.  A caller that also
-- sets fence.resource to the resource with another token or owner gave
-- two tokens for one resource: LF003, never a guess between them.
CREATE FUNCTION fence._tokens_find(resource text, OUT present boolean, OUT token bigint, OUT owner text)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    value text := current_setting('fence.tokens', true);
    cached text;
    at int;
    entry text;
    setting_token text;
    setting_owner text;
BEGIN
    present := false;
    IF value IS NULL OR value = '' THEN
        RETURN;
    END IF;
    cached := current_setting('fence_registry.tokens', true);
    IF cached IS NULL OR left(cached, 32) <> md5(value) THEN
        PERFORM fence._check_encoding(value, 'the value of parameter "fence.tokens"');
        SELECT md5(value) || COALESCE(string_agg(';' || md5(j.key) || (j.e ->> 0) || '/'
                                                 || COALESCE(encode(convert_to(j.e ->> 1, 'UTF8'), 'hex'), '-'), ''), '')
          INTO cached FROM jsonb_each(fence._tokens_parse(value)) AS j(key, e);
        PERFORM set_config('fence_registry.tokens', cached, false);
    END IF;
    at := strpos(cached, ';' || md5(resource));
    IF at = 0 THEN
        RETURN;
    END IF;
    entry := split_part(substr(cached, at + 33), ';', 1);
    present := true;
    token := split_part(entry, '/', 1)::bigint;
    owner := CASE WHEN split_part(entry, '/', 2) <> '-'
                  THEN convert_from(decode(split_part(entry, '/', 2), 'hex'), 'UTF8') END;

    -- fence.resource without fence.token carries no token to disagree with
    setting_token := NULLIF(current_setting('fence.token', true), '');
    IF current_setting('fence.resource', true) = resource AND setting_token IS NOT NULL THEN
        setting_owner := NULLIF(current_setting('fence.owner', true), '');
        IF setting_token !~ '^[0-9]{1,19}$' OR setting_token::numeric = 0
           OR setting_token::numeric <> token
           OR setting_owner IS DISTINCT FROM owner THEN
            RAISE EXCEPTION 'two fencing tokens for resource "%"', resource
                USING ERRCODE = 'LF003',
                      DETAIL = format('fence.tokens gives token %s%s, and fence.resource names the same resource with fence.token "%s"%s.',
                                      token, COALESCE(' for owner ' || owner, ''),
                                      setting_token, COALESCE(' for owner ' || setting_owner, '')),
                      HINT = 'Give each resource''s token once: in fence.tokens, or in fence.resource and fence.token.';
        END IF;
    END IF;
END
$$;

-- The owner the session's settings give "resource": its entry's in
-- fence.tokens, else fence.owner when fence.resource names it
-- (fence_session_owner() in extension/fence.c).
CREATE FUNCTION fence._session_owner(resource text)
RETURNS text
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e record;
BEGIN
    SELECT * INTO e FROM fence._tokens_find(resource);
    IF e.present THEN
        RETURN e.owner;
    ELSIF current_setting('fence.resource', true) = resource THEN
        PERFORM fence._check_encoding(current_setting('fence.owner', true), 'the value of parameter "fence.owner"');
        RETURN NULLIF(current_setting('fence.owner', true), '');
    END IF;
    RETURN NULL;
END
$$;

-- Guard trigger ---------------------------------------------------------------

-- The token a guarded write carries for "resource", checked by the rule:
-- what fence.advance() registered in this transaction, else the
-- resource's entry in fence.tokens, else fence.token when fence.resource
-- names the resource (extension/guard.c).
CREATE FUNCTION fence._guard_accept(resource text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
AS $$
DECLARE
    -- the registry's entry (fence._registry_set): ";<md5><token>/<owner in hex>"
    h text := md5(resource);
    bucket text := current_setting('fence_registry.b' || left(h, 2), true);
    at int := COALESCE(strpos(bucket, ';' || h), 0);
    registered text;
    setting_resource text := NULLIF(current_setting('fence.resource', true), '');
    text_token text := NULLIF(current_setting('fence.token', true), '');
    entry record;
    token bigint;
BEGIN
    -- No search path of its own: only fence's owner may call it, from the
    -- guard, whose path it runs under; the helpers only where they have
    -- something to say (a value with a byte above 127 or a backslash, a
    -- fence.tokens that is set)
    IF strpos(encode(textsend(setting_resource), 'escape'), '\') > 0 THEN
        PERFORM fence._check_encoding(setting_resource, 'the value of parameter "fence.resource"');
    END IF;
    IF at > 0 THEN
        registered := split_part(substr(bucket, at + 33), ';', 1);
        token := split_part(registered, '/', 1)::bigint;
        PERFORM fence._check(resource, token, NULLIF(convert_from(decode(split_part(registered, '/', 2), 'hex'), 'UTF8'), ''), false);
        RETURN token;
    END IF;
    IF COALESCE(current_setting('fence.tokens', true), '') <> '' THEN
        SELECT * INTO entry FROM fence._tokens_find(resource);
        IF entry.present THEN
            -- 0 or negative: LF003 from the rule
            PERFORM fence._check(resource, entry.token, entry.owner, false);
            RETURN entry.token;
        END IF;
    END IF;
    IF setting_resource IS NULL THEN
        RAISE EXCEPTION 'missing fencing token for resource "%"', resource
            USING ERRCODE = 'LF002',
                  DETAIL = 'No token was accepted for this resource in this transaction, fence.tokens has no entry for it, and fence.resource is not set.',
                  HINT = 'Call fence.advance() in this transaction, or set fence.tokens (or fence.resource and fence.token) with SET LOCAL, SET or PGOPTIONS.';
    ELSIF setting_resource <> resource THEN
        RAISE EXCEPTION 'missing fencing token for resource "%"', resource
            USING ERRCODE = 'LF002',
                  DETAIL = format('No token was accepted for this resource in this transaction, fence.tokens has no entry for it, and fence.resource is "%s".',
                                  setting_resource),
                  HINT = 'Call fence.advance() in this transaction, or set fence.tokens (or fence.resource and fence.token) with SET LOCAL, SET or PGOPTIONS.';
    ELSIF text_token IS NULL THEN
        RAISE EXCEPTION 'missing fencing token for resource "%"', resource
            USING ERRCODE = 'LF002',
                  DETAIL = 'The setting fence.resource names this resource, but fence.token is not set.',
                  HINT = 'Set fence.token to the token of your lease.';
    END IF;
    -- digits only, 1 to 2^63 - 1: '12abc' is not token 12
    IF btrim(text_token, '0123456789') <> '' OR length(text_token) > 19 OR text_token::numeric > 9223372036854775807
       OR text_token::numeric = 0 THEN
        RAISE EXCEPTION 'invalid fencing token "%" for resource "%"', text_token, resource
            USING ERRCODE = 'LF003',
                  DETAIL = 'The setting fence.token must be a whole number from 1 to 9223372036854775807, written with digits only.',
                  HINT = 'Set fence.token to the token of your lease.';
    END IF;
    token := text_token::bigint;
    IF strpos(encode(textsend(current_setting('fence.owner', true)), 'escape'), '\') > 0 THEN
        PERFORM fence._check_encoding(current_setting('fence.owner', true), 'the value of parameter "fence.owner"');
    END IF;
    PERFORM fence._check(resource, token, NULLIF(current_setting('fence.owner', true), ''), false);
    RETURN token;
END
$$;
REVOKE ALL ON FUNCTION fence._guard_accept(text) FROM PUBLIC;

-- The resource of one row of a key-mode table, whose key column reads
-- "key_text" (fence._guard_read).
CREATE FUNCTION fence._guard_row_resource(base text, keycol text, tbl text, key_text text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    name text;
BEGIN
    IF key_text IS NULL THEN
        RAISE EXCEPTION 'null value in key column "%" of protected table "%"', keycol, tbl
            USING ERRCODE = 'null_value_not_allowed',
                  DETAIL = format('The row''s fencing resource is "%s:" followed by its key, so the key must not be null.', base);
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

-- The query that reads a row's token column (bigint) and the text of its
-- key column (the key type's output function, as fence.key_resource and
-- the C guard use; NULL for a null key), either NULL when the guard has no
-- such column; the row is its parameter.  It never converts a whole row.
CREATE FUNCTION fence._guard_read(tokcol text, keycol text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT format('SELECT %s, %s',
                  CASE WHEN $1 IS NULL THEN 'NULL::pg_catalog.int8'
                       ELSE format('($1).%I', $1) END,
                  CASE WHEN $2 IS NULL THEN 'NULL::pg_catalog.text'
                       ELSE format('CASE WHEN ($1).%1$I IS NOT NULL THEN pg_catalog.format(''%%s'', ($1).%1$I) END', $2) END)
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
    old_key text;
    new_key text;
    old_stored bigint;
    new_stored bigint;
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
    IF current_setting('transaction_read_only') = 'on' THEN
        PERFORM fence._refuse_read_only('fence.guard()');
    END IF;
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

    -- Only the key and token columns are read, each with its type's own
    -- output function (fence._guard_columns has just checked their types,
    -- for which nobody but a superuser can define a cast or an output
    -- function): this function runs as fence's owner, and converting the
    -- whole row (to_jsonb) would run the casts to json that the table's
    -- owner may define for the types of its other columns (an enum, a
    -- range) with the owner's rights over fence.fences.
    IF TG_OP <> 'INSERT' THEN
        EXECUTE fence._guard_read(tokcol, keycol) INTO old_stored, old_key USING OLD;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        EXECUTE fence._guard_read(tokcol, keycol) INTO new_stored, new_key USING NEW;
    END IF;
    IF keycol IS NULL THEN
        res := base;
        new_res := base;
    ELSE
        res := fence._guard_row_resource(base, keycol, TG_TABLE_NAME,
                                         CASE WHEN TG_OP = 'INSERT' THEN new_key ELSE old_key END);
        new_res := CASE WHEN TG_OP = 'UPDATE'
                        THEN fence._guard_row_resource(base, keycol, TG_TABLE_NAME, new_key)
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

    IF tokcol IS NOT NULL AND TG_OP <> 'INSERT' THEN
        stored := old_stored;
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
    IF tokcol IS NOT NULL AND new_stored IS DISTINCT FROM token THEN
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

-- The name of a type as the caller's search path shows it (the C
-- extension's messages name it so), for a function that pins its own.
CREATE FUNCTION fence._type_name(typ regtype, path text)
RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    name text;
BEGIN
    PERFORM set_config('search_path', path, true);
    name := pg_catalog.format_type(typ, NULL);
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    RETURN name;
END
$$;

CREATE FUNCTION fence._protect_check_column(tbl regclass, colname name, role text, path text)
RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
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
                  DETAIL = format('Column "%s" of table "%s" is of type %s.', colname, fence._relname(tbl), fence._type_name(a.typ, path));
    ELSIF role = 'key' AND NOT fence._key_type_allowed(a.typ) THEN
        RAISE EXCEPTION 'key column "%" has type %, which cannot name a resource', colname, fence._type_name(a.typ, path)
            USING ERRCODE = 'datatype_mismatch', DETAIL = fence._key_type_detail(),
                  HINT = 'Use a key column of one of these types.';
    END IF;
END
$$;

-- With the caller's privileges: CREATE TRIGGER checks that the caller owns
-- the table.  fence.protect passes on the caller's search path, which
-- only names types in messages; fence._protect, open to all, checks that
-- its caller may call fence.protect.
CREATE FUNCTION fence._protect(path text, tbl regclass, resource text,
                               token_column name, key_column name)
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c record;
    row_level boolean := token_column IS NOT NULL OR key_column IS NOT NULL;
    later name;
BEGIN
    IF NOT has_function_privilege('fence.protect(regclass, text, name, name)', 'EXECUTE') THEN
        RAISE EXCEPTION 'permission denied for function protect' USING ERRCODE = 'insufficient_privilege';
    END IF;
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
        PERFORM fence._protect_check_column(tbl, token_column, 'token', path);
    END IF;
    IF key_column IS NOT NULL THEN
        PERFORM fence._protect_check_column(tbl, key_column, 'key', path);
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

CREATE FUNCTION fence.protect(tbl regclass, resource text,
                              token_column name DEFAULT NULL,
                              key_column name DEFAULT NULL)
RETURNS void
LANGUAGE sql VOLATILE PARALLEL UNSAFE
AS $$ SELECT fence._protect(pg_catalog.current_setting('search_path'), $1, $2, $3, $4) $$;
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
GRANT EXECUTE ON FUNCTION fence.floor_prefix(text) TO PUBLIC;
GRANT EXECUTE ON FUNCTION fence.edition() TO PUBLIC;
GRANT EXECUTE ON FUNCTION fence.mark(text) TO pg_monitor;
-- what the SECURITY DEFINER functions and the guard call on behalf of anyone
GRANT EXECUTE ON FUNCTION fence._refuse_read_only(text), fence._check_resource_name(text),
                          fence._check_encoding(text, text),
                          fence._registry_find(text), fence._key_type_allowed(regtype),
                          fence._key_type_detail(), fence._check_key_base(text),
                          fence._key_name(text, text), fence._guard_row_resource(text, text, text, text), fence._guard_read(text, text),
                          fence._protect_check_column(regclass, name, text, text),
                          fence._protect(text, regclass, text, name, name), fence._type_name(regtype, text), fence._guard_columns(oid, name, text, text),
                          fence._relname(regclass), fence._fenced_statement(text, text[], bigint[], boolean, text, text[], regtype),
                          fence._fenced_update(text, text, bigint, text, text[]),
                          fence._fenced_update_many(text, text[], bigint[], text, text[]),
                          fence._check_resource_list(text[], bigint[], text[]),
                          fence._tokens_refuse(text, text), fence._tokens_word(text, int, text, text, int),
                          fence._tokens_add(text, jsonb, text, bigint, text), fence._tokens_parse_slowly(text),
                          fence._tokens_parse(text), fence._tokens_find(text), fence._session_owner(text)
    TO PUBLIC;
