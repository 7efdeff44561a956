#!/usr/bin/python3
"""test/drivers/fenced_python.py: fence.fenced_update from asyncpg, psycopg 3
and psycopg2, with values passed the way each driver takes them and no
casts in the SQL; and what each of them makes of "fence run".

    fenced_python.py asyncpg|psycopg|psycopg2
    fenced_python.py asyncpg|psycopg|psycopg2 probe plain|options|local

Connects with the PG* environment variables.  DRV_RESOURCE, DRV_TOKEN and
DRV_STALE name the resource, the token of the accepted write and the
(lower) token of the refused one.  Exit 0 when the first write updated one
row and the second was refused with LF001 as the driver reports it.

"probe", under "fence run": one guarded write of the row of PROBE_DRIVER
in drv_guard, which records the fence.token the session saw; prints
"write=ok" or "write=SQLSTATE".  "plain" connects as the program always
did; for asyncpg, which does not read PGOPTIONS, "options" passes it on
itself and "local" sets the token from FENCE_RESOURCE and FENCE_TOKEN in
the transaction, as behind a pooler.
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


PROBE_WRITE = ("UPDATE drv_guard SET n = n + 1, "
               "token_seen = current_setting('fence.token', true) WHERE driver = %s")
PROBE_DRIVER = os.environ.get("PROBE_DRIVER", "")


# psycopg2 and psycopg 3 are on libpq, which reads PGOPTIONS: "plain" is
# all they need, and their MODE is not looked at.
def probe_psycopg2(mode):
    import psycopg2

    conn = psycopg2.connect("")
    try:
        with conn, conn.cursor() as cur:
            cur.execute(PROBE_WRITE, (PROBE_DRIVER,))
        return "ok"
    except psycopg2.Error as e:
        return e.pgcode


def probe_psycopg(mode):
    import psycopg

    with psycopg.connect("") as conn:
        try:
            conn.execute(PROBE_WRITE, (PROBE_DRIVER,))
            conn.commit()
            return "ok"
        except psycopg.Error as e:
            return e.sqlstate


async def probe_asyncpg_main(mode):
    import asyncpg

    if mode == "options":
        # asyncpg does not read PGOPTIONS: the one line that passes it on
        conn = await asyncpg.connect(server_settings={"options": os.environ["PGOPTIONS"]})
    else:
        conn = await asyncpg.connect()
    try:
        async with conn.transaction():
            if mode == "local":
                await conn.execute("SELECT set_config('fence.resource', $1, true), "
                                   "set_config('fence.token', $2, true)",
                                   os.environ["FENCE_RESOURCE"], os.environ["FENCE_TOKEN"])
            await conn.execute(PROBE_WRITE.replace("%s", "$1"), PROBE_DRIVER)
        return "ok"
    except asyncpg.PostgresError as e:
        return e.sqlstate
    finally:
        await conn.close()


def probe_asyncpg(mode):
    return asyncio.run(probe_asyncpg_main(mode))


if __name__ == "__main__":
    driver = sys.argv[1]
    if len(sys.argv) == 4 and sys.argv[2] == "probe":
        probe = {"asyncpg": probe_asyncpg, "psycopg": probe_psycopg, "psycopg2": probe_psycopg2}[driver]
        print("write=%s" % probe(sys.argv[3]))
    else:
        {"asyncpg": run_asyncpg, "psycopg": run_psycopg, "psycopg2": run_psycopg2}[driver]()
