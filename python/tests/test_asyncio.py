"""python/tests/test_asyncio.py: ``async with client.lease(...)`` waits in
a thread of its own, so the event loop keeps running; cancelling the
waiting task cancels the wait."""
import asyncio
import os
import time

import pytest

import pgfence


async def ticker(ticks, stop):
    while not stop.is_set():
        ticks.append(time.monotonic())
        await asyncio.sleep(0.01)


def longest_gap(ticks):
    return max(b - a for a, b in zip(ticks, ticks[1:]))


def test_async_waiter_leaves_the_loop_free(client, resource):
    async def main():
        ticks, stop = [], asyncio.Event()
        tick = asyncio.create_task(ticker(ticks, stop))
        holder = client.lease(resource, ttl="10s")
        await holder.acquire_async()
        got = []

        async def waiter():
            async with client.lease(resource, ttl="10s", wait="10s") as lease:
                got.append((time.monotonic(), lease.token))

        w = asyncio.create_task(waiter())
        await asyncio.sleep(1.0)  # the waiter is queued in Redis all along
        assert not got
        released = time.monotonic()
        await holder.release_async()
        await asyncio.wait_for(w, 10)
        stop.set()
        await tick
        return ticks, got, released, holder.token

    ticks, got, released, first = asyncio.run(main())
    assert got[0][1] > first
    assert got[0][0] - released < 1.0  # handed over by the release
    # the ticker kept ticking through the wait: ~100 ticks, none late
    assert len(ticks) > 50
    assert longest_gap(ticks) < 0.25, longest_gap(ticks)


def test_cancelling_the_waiting_task_cancels_the_wait(client, resource):
    async def main():
        async with client.lease(resource, ttl="10s") as holder:
            w = asyncio.create_task(client.lease(resource, ttl="10s", wait="30s").acquire_async())
            await asyncio.sleep(0.5)
            t0 = time.monotonic()
            w.cancel()
            with pytest.raises(asyncio.CancelledError):
                await w
            took = time.monotonic() - t0
            assert holder.held
        return took

    took = asyncio.run(main())
    assert took < 2.0, took
    # nothing left behind: the lease is free
    with client.lease(resource, announce=False):
        pass


def test_async_set_of_leases_and_asyncpg_helpers(client, resource):
    import asyncpg

    async def main():
        conn = await asyncpg.connect(host=os.environ["PGHOST"], port=os.environ["PGPORT"],
                                     user=os.environ["PGUSER"], database=os.environ["PGDATABASE"])
        await conn.execute("DROP TABLE IF EXISTS py_async")
        await conn.execute("CREATE TABLE py_async (id int PRIMARY KEY, bal int)")
        await conn.execute("INSERT INTO py_async VALUES (1, 100), (2, 100)")
        a, b = resource + ":1", resource + ":2"
        async with client.leases([a, b], ttl="5s", wait="5s") as s:
            async with conn.transaction():
                n = await pgfence.afenced_update(
                    conn, s, "UPDATE py_async SET bal = bal + CASE id WHEN 1 THEN -$1::int ELSE $1::int END", 5)
            async with conn.transaction():
                await pgfence.aset_tokens(conn, s)
                seen = await conn.fetchval("SELECT current_setting('fence.tokens')")
        # one connection fenced whole, from its startup settings
        async with client.lease(a, ttl="5s") as one:
            c2 = await asyncpg.connect(host=os.environ["PGHOST"], port=os.environ["PGPORT"],
                                       user=os.environ["PGUSER"], database=os.environ["PGDATABASE"],
                                       server_settings=pgfence.server_settings(one))
            startup = await c2.fetchval("SHOW fence.tokens")
            await c2.close()
        total = await conn.fetchval("SELECT sum(bal) FROM py_async")
        await conn.close()
        return n, seen, s.tokens, startup, one.tokens, total

    n, seen, tokens, startup, one_tokens, total = asyncio.run(main())
    assert n == 2 and seen == tokens and startup == one_tokens and total == 200
