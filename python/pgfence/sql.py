"""pgfence.sql: a lease's tokens into SQL, for psycopg 3, psycopg2 and asyncpg.

Two ways, as the README's "From a driver" shows them for any language:

- set_tokens() puts the lease's tokens into ``fence.tokens`` for the current
  transaction (``set_config(..., true)``, which is ``SET LOCAL`` with a
  parameter), so that plain SQL on guarded tables is fenced without change;
- fenced_update() runs one statement through ``fence.fenced_update`` (or
  ``fence.fenced_update_many`` for a set), which checks and advances the
  token and runs the statement in the caller's transaction, in one round
  trip, with the statement's values sent as parameters.

The asyncpg variants are coroutines: aset_tokens(), afenced_update().

Both need a transaction: psycopg 3 and psycopg2 open one by themselves
unless the connection is in autocommit mode, where ``SET LOCAL`` would end
with its own statement; with asyncpg use ``async with conn.transaction()``.
"""
from __future__ import annotations

from typing import Any, Union

from .client import Lease, LeaseSet
from .errors import ConfigurationError

Held = Union[Lease, LeaseSet]

_SET = "SELECT pg_catalog.set_config('fence.tokens', {0}, true)"


def _driver(obj: Any) -> str:
    module = type(obj).__module__
    for name in ("psycopg2", "psycopg", "asyncpg"):
        if module == name or module.startswith(name + "."):
            return name
    raise ConfigurationError(
        "%s.%s is not a connection or cursor of psycopg 3, psycopg2 or asyncpg"
        % (module, type(obj).__name__),
        10,
    )


def _call(lease: Held, query: str, params, mark: str):
    """The fenced_update statement, with fence.tokens set first so that the
    owners are checked too, and its arguments in the order of their marks
    in the text ("mark": "%s", or "${0}" numbered)."""
    many = isinstance(lease, LeaseSet)
    fn = "fence.fenced_update_many" if many else "fence.fenced_update"
    marks = [mark.format(i + 1) for i in range(4 + len(params))]
    # set_config runs first: a subquery with a volatile target list is
    # not pulled up, and the outer call runs for its one row
    sql = "SELECT %s(%s) FROM (%s) AS fence_tokens" % (
        fn,
        ", ".join(marks[:-1]),
        _SET.format(marks[-1]),
    )
    if many:
        args = [lease.resources, lease.token_list]
    else:
        args = [lease.resource, lease.token]
    return sql, args + [query, *params, lease.tokens]


def set_tokens(conn_or_cursor: Any, lease: Held) -> None:
    """Set ``fence.tokens`` to "lease"'s tokens for the current transaction
    of a psycopg 3 or psycopg2 connection (or cursor)."""
    driver = _driver(conn_or_cursor)
    if driver == "asyncpg":
        raise ConfigurationError("asyncpg: await pgfence.aset_tokens(conn, lease)", 10)
    sql = _SET.format("%s")
    if driver == "psycopg2" and not hasattr(conn_or_cursor, "execute"):
        with conn_or_cursor.cursor() as cur:
            cur.execute(sql, (lease.tokens,))
    else:
        conn_or_cursor.execute(sql, (lease.tokens,))


def fenced_update(conn_or_cursor: Any, lease: Held, query: str, *params: Any) -> int:
    """Run "query" (with ``$1``, ``$2``... for "params") under "lease"
    through fence.fenced_update, in the current transaction of a psycopg 3
    or psycopg2 connection (or cursor); return the rows it processed.  A
    stale token raises the driver's error with SQLSTATE LF001
    (pgfence.is_stale)."""
    driver = _driver(conn_or_cursor)
    if driver == "asyncpg":
        raise ConfigurationError("asyncpg: await pgfence.afenced_update(conn, lease, ...)", 10)
    sql, args = _call(lease, query, params, "%s")
    if driver == "psycopg2":
        if hasattr(conn_or_cursor, "execute"):
            conn_or_cursor.execute(sql, args)
            return conn_or_cursor.fetchone()[0]
        with conn_or_cursor.cursor() as cur:
            cur.execute(sql, args)
            return cur.fetchone()[0]
    # psycopg 3 sends str untyped, which VARIADIC "any" cannot type next to
    # typed values: send it as text (psycopg's advice for variadic
    # functions), on a cursor of our own so the caller's keep their dumpers
    from psycopg.types.string import StrDumper

    conn = getattr(conn_or_cursor, "connection", conn_or_cursor)
    with conn.cursor() as cur:
        cur.adapters.register_dumper(str, StrDumper)
        cur.execute(sql, args)
        return cur.fetchone()[0]


async def aset_tokens(conn: Any, lease: Held) -> None:
    """set_tokens() for asyncpg: inside ``async with conn.transaction()``."""
    await conn.execute(_SET.format("$1"), lease.tokens)


async def afenced_update(conn: Any, lease: Held, query: str, *params: Any) -> int:
    """fenced_update() for asyncpg.  asyncpg is told the statement's values
    are text, so each is sent as str (None stays NULL)."""
    texts = [None if p is None else str(p) for p in params]
    sql, args = _call(lease, query, texts, "${0}")
    return await conn.fetchval(sql, *args)


def server_settings(lease: Held) -> dict:
    """Startup settings that fence a whole connection under "lease", for
    ``asyncpg.connect(server_settings=...)`` (one connection per lease;
    behind a pool, aset_tokens() per transaction instead)."""
    return {"fence.tokens": lease.tokens}
