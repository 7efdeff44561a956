#!/usr/bin/python3
"""test/drivers/fenced_python.py: fence.fenced_update from asyncpg, psycopg 3
and psycopg2, with values passed the way each driver takes them and no
casts in the SQL.

    fenced_python.py asyncpg|psycopg|psycopg2

Connects with the PG* environment variables.  DRV_RESOURCE, DRV_TOKEN and
DRV_STALE name the resource, the token of the accepted write and the
(lower) token of the refused one.  Exit 0 when the first write updated one
row and the second was refused with LF001 as the driver reports it.
"""
import asyncio
import os
import sys

SQL = "SELECT fence.fenced_update(%s, %s, %s, %s, %s, %s)"
QUERY = "UPDATE drv_stock SET qty = qty - $1 WHERE sku = $2 AND id = $3"
RESOURCE = os.environ["DRV_RESOURCE"]
TOKEN = int(os.environ["DRV_TOKEN"])
STALE = int(os.environ["DRV_STALE"])


def check(rows, sqlstate):
    """The accepted write's row count and the stale write's SQLSTATE."""
    if rows != 1:
        sys.exit("accepted write updated %r rows, expected 1" % (rows,))
    if sqlstate != "LF001":
        sys.exit("stale write: SQLSTATE %r, expected LF001" % (sqlstate,))
    print("ok: 1 row with token %d, LF001 with token %d" % (TOKEN, STALE))


def run_psycopg2():
    import psycopg2

    conn = psycopg2.connect("")
    with conn, conn.cursor() as cur:
        # client-side interpolation: ints as ints, the string as a literal
        cur.execute(SQL, (RESOURCE, TOKEN, QUERY, 1, "widget", 7))
        rows = cur.fetchone()[0]
    try:
        with conn, conn.cursor() as cur:
            cur.execute(SQL, (RESOURCE, STALE, QUERY, 1, "widget", 7))
        sqlstate = None
    except psycopg2.Error as e:
        sqlstate = e.pgcode
    check(rows, sqlstate)


def run_psycopg():
    import psycopg

    from psycopg.types.string import StrDumper

    with psycopg.connect("") as conn:
        # Server-side binding: ints go typed (int2, int4, ... by value), str
        # by default untyped, which a VARIADIC "any" argument cannot type
        # next to typed ones; psycopg's answer for variadic functions is to
        # send str as text, and fenced_update then types it as the
        # statement does.
        conn.adapters.register_dumper(str, StrDumper)
        rows = conn.execute(SQL, (RESOURCE, TOKEN, QUERY, 1, "widget", 7)).fetchone()[0]
        conn.commit()
        try:
            conn.execute(SQL, (RESOURCE, STALE, QUERY, 1, "widget", 7))
            sqlstate = None
        except psycopg.Error as e:
            sqlstate = e.sqlstate
        conn.rollback()
    check(rows, sqlstate)


async def asyncpg_main():
    import asyncpg

    conn = await asyncpg.connect()
    # asyncpg asks the server for the parameter types and encodes the values
    # for them: the token is bigint, the statement's parameters are text
    # (the VARIADIC text[] overload), so they go as str, and fenced_update
    # gives them the types the statement needs.
    sql = "SELECT fence.fenced_update($1, $2, $3, $4, $5, $6)"
    rows = await conn.fetchval(sql, RESOURCE, TOKEN, QUERY, "1", "widget", "7")
    try:
        await conn.fetchval(sql, RESOURCE, STALE, QUERY, "1", "widget", "7")
        sqlstate = None
    except asyncpg.PostgresError as e:
        sqlstate = e.sqlstate
    await conn.close()
    check(rows, sqlstate)


def run_asyncpg():
    asyncio.run(asyncpg_main())


if __name__ == "__main__":
    {"asyncpg": run_asyncpg, "psycopg": run_psycopg, "psycopg2": run_psycopg2}[sys.argv[1]]()
