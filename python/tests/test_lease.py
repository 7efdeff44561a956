"""python/tests/test_lease.py: a lease and a set of leases from Python,
against the real Redis and PostgreSQL, and each exception for its cause."""
import os
import threading
import time

import psycopg
import psycopg2
import pytest

import pgfence
from conftest import PY, env_with


def mark(conn, resource):
    row = conn.execute("SELECT token, owner FROM fence.fences WHERE resource = %s", (resource,)).fetchone()
    conn.rollback()
    return row


def test_lease_gives_token_owner_and_announces(client, pgconn, resource):
    with client.lease(resource, ttl="5s") as lease:
        assert lease.resource == resource
        assert lease.token >= 1
        assert len(lease.owner) == 32
        assert lease.held and lease.state == "held"
        assert lease.tokens == "%s=%d/%s" % (resource, lease.token, lease.owner)
        # announced before the block ran: PostgreSQL's mark is this token
        assert mark(pgconn, resource) == (lease.token, lease.owner)
        first = lease.token
    assert not lease.held
    assert not lease.lost.is_set()
    # released: the next holder gets it at once, with a higher token
    with client.lease(resource, ttl="5s") as again:
        assert again.token > first


def test_release_lets_a_waiter_in_and_tokens_grow(client, resource):
    tokens = []
    with client.lease(resource, ttl="10s") as lease:
        tokens.append(lease.token)
        got = []

        def waiter():
            with pgfence.Client(pg="") as other:
                with other.lease(resource, ttl="10s", wait="10s") as l2:
                    got.append(l2.token)

        t = threading.Thread(target=waiter)
        t.start()
        time.sleep(0.3)
        assert not got  # queued behind us
    t.join(10)
    assert got and got[0] > tokens[0]


def test_owner_name_goes_in_front_of_the_owner_id(resource):
    with pgfence.Client(owner_name="billing-7") as c:
        with c.lease(resource, announce=False) as lease:
            assert lease.owner.startswith("billing-7/")


def test_heartbeat_renews_past_the_ttl(client, resource):
    with client.lease(resource, ttl="300ms") as lease:
        time.sleep(1.0)
        lease.check()
        assert lease.state == "held"
        lease.extend("2s")
        assert lease.ttl == 2.0


def test_set_of_leases_in_canonical_order_one_owner(client, pgconn, resource):
    a, b = resource + ":b", resource + ":a"
    with client.leases([a, b], ttl="5s") as s:
        assert s.resources == sorted([a, b])
        assert len({m.owner for m in s}) == 1 and s.owner == s.members[0].owner
        assert s.tokens == ",".join("%s=%d/%s" % (m.resource, m.token, m.owner) for m in s)
        for m in s:
            assert mark(pgconn, m.resource) == (m.token, m.owner)
        assert s.token_of(a) == s.members[1].token
    assert not s.held


def test_wait_ran_out_raises_not_acquired(client, resource):
    with client.lease(resource, ttl="10s"):
        with pgfence.Client() as other:
            t0 = time.monotonic()
            with pytest.raises(pgfence.NotAcquired) as e:
                other.lease(resource, wait="400ms").acquire()
            assert 0.3 < time.monotonic() - t0 < 3
            assert e.value.code == 5  # FENCE_ERR_TIMEOUT
            with pytest.raises(pgfence.NotAcquired) as e:
                other.lease(resource).acquire()  # no wait: busy
            assert e.value.code == 4  # FENCE_ERR_BUSY


def test_set_not_acquired_gives_back_what_it_took(client, resource):
    with client.lease(resource + ":2", ttl="10s"):
        with pytest.raises(pgfence.NotAcquired):
            client.leases([resource + ":1", resource + ":2"], wait="200ms").acquire()
    # :1 was given back: free at once
    with client.lease(resource + ":1", announce=False):
        pass


def test_redis_down_raises_unreachable(redis_server, resource):
    r = redis_server()
    url = r.url
    c = pgfence.Client(url, connect_timeout=1, command_timeout=1)
    with c.lease(resource, ttl="5s"):
        pass
    r.stop()
    with pytest.raises(pgfence.Unreachable):
        c.lease(resource).acquire()
    c.close()
    with pytest.raises(pgfence.Unreachable):
        pgfence.Client(url, connect_timeout=1)


def test_acl_refusal_raises_configuration_error(redis_server, resource):
    r = redis_server()
    # a user that may log in but not run scripts: the lease is refused
    r.cli("ACL", "SETUSER", "noscripts", "on", ">pw", "~*", "+@all", "-@scripting")
    with pytest.raises(pgfence.ConfigurationError) as e:
        with pgfence.Client("redis://noscripts:pw@127.0.0.1:%d" % r.port) as c:
            c.lease(resource).acquire()
    assert e.value.code == 13  # FENCE_ERR_AUTH
    # a wrong password: refused at login
    with pytest.raises(pgfence.ConfigurationError):
        pgfence.Client("redis://noscripts:wrong@127.0.0.1:%d" % r.port)


def test_bad_arguments_raise_configuration_error(client, resource):
    with pytest.raises(pgfence.ConfigurationError):
        pgfence.Client("http://nope")
    with pytest.raises(pgfence.ConfigurationError):
        client.lease(resource, ttl="10")  # no unit
    with pytest.raises(pgfence.ConfigurationError):
        client.lease(resource, ttl="ten seconds")
    with pytest.raises(pgfence.ConfigurationError):
        client.lease("", ttl="1s").acquire()
    with pytest.raises(pgfence.ConfigurationError):
        pgfence.Client(owner_name="has/slash")
    assert pgfence.duration_ms("250ms", "ttl") == 250
    assert pgfence.duration_ms(1.5, "ttl") == 1500
    assert pgfence.duration_ms("inf", "wait", allow_inf=True) == 100000000000


def test_database_without_extension_raises_configuration_error_with_hint(fence_ext, resource):
    with psycopg.connect("", autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS py_noext")
        conn.execute("CREATE DATABASE py_noext")
    try:
        with pgfence.Client(pg="dbname=py_noext") as c:
            with pytest.raises(pgfence.ConfigurationError) as e:
                c.lease(resource).acquire()
        assert "CREATE EXTENSION" in (e.value.hint or "")
        # given back: the lease is free again
        with pgfence.Client() as c:
            with c.lease(resource, announce=False):
                pass
    finally:
        with psycopg.connect("", autocommit=True) as conn:
            conn.execute("DROP DATABASE py_noext")


def test_postgres_unreachable_raises_unreachable(resource):
    with pgfence.Client(pg="host=127.0.0.1 port=1 connect_timeout=2") as c:
        with pytest.raises(pgfence.Unreachable):
            c.lease(resource).acquire()


def test_is_stale_from_psycopg3_psycopg2_and_asyncpg(client, pgconn, resource):
    import asyncio

    import asyncpg

    pgconn.execute("CREATE TABLE IF NOT EXISTS py_stale (id int PRIMARY KEY, n int)")
    pgconn.execute("INSERT INTO py_stale VALUES (1, 0) ON CONFLICT DO NOTHING")
    pgconn.commit()
    q = "UPDATE py_stale SET n = n + $1 WHERE id = 1"
    with client.lease(resource, ttl="5s") as old:
        pass
    with client.lease(resource, ttl="5s") as new:
        assert new.token > old.token
        # psycopg 3
        with pytest.raises(psycopg.Error) as e:
            pgfence.fenced_update(pgconn, old, q, 1)
        pgconn.rollback()
        assert pgfence.is_stale(e.value) and e.value.sqlstate == "LF001"
        # psycopg2
        c2 = psycopg2.connect("")
        with pytest.raises(psycopg2.Error) as e:
            pgfence.fenced_update(c2, old, q, 1)
        c2.close()
        assert pgfence.is_stale(e.value)

        # asyncpg
        async def stale():
            conn = await asyncpg.connect(host=os.environ["PGHOST"], port=os.environ["PGPORT"],
                                         user=os.environ["PGUSER"], database=os.environ["PGDATABASE"])
            try:
                async with conn.transaction():
                    await pgfence.afenced_update(conn, old, q, 1)
            except Exception as exc:
                return exc
            finally:
                await conn.close()

        exc = asyncio.run(stale())
        assert exc is not None and pgfence.is_stale(exc)
        # and the fresh token still writes, from each
        assert pgfence.fenced_update(pgconn, new, q, 1) == 1
        pgconn.commit()
    # other errors are not stale
    assert not pgfence.is_stale(ValueError("x"))
    assert pgfence.is_stale(RuntimeError("wrapped").with_traceback(None)) is False
    try:
        try:
            raise pgfence.StaleToken("refused", 8)
        except pgfence.StaleToken as inner:
            raise RuntimeError("job failed") from inner
    except RuntimeError as outer:
        assert pgfence.is_stale(outer)


def test_set_tokens_fences_plain_sql_on_a_guarded_table(client, pgconn, resource):
    table = "py_guarded"
    pgconn.execute("DROP TABLE IF EXISTS %s" % table)
    pgconn.execute("CREATE TABLE %s (id int PRIMARY KEY, n int)" % table)
    pgconn.execute("INSERT INTO %s VALUES (1, 0)" % table)
    pgconn.execute("SELECT fence.protect('%s', %%s)" % table, (resource,))
    pgconn.commit()
    with pytest.raises(psycopg.Error) as e:
        pgconn.execute("UPDATE %s SET n = n + 1" % table)
    assert e.value.sqlstate == "LF002"
    pgconn.rollback()
    with client.lease(resource, ttl="5s") as lease:
        pgfence.set_tokens(pgconn, lease)
        pgconn.execute("UPDATE %s SET n = n + 1" % table)
        pgconn.commit()
        c2 = psycopg2.connect("")
        pgfence.set_tokens(c2, lease)
        with c2.cursor() as cur:
            cur.execute("UPDATE %s SET n = n + 1" % table)
        c2.commit()
        c2.close()
    assert pgconn.execute("SELECT n FROM %s" % table).fetchone()[0] == 2
    pgconn.rollback()


def test_missing_library_names_the_package_and_make_install(tmp_path):
    code = "import pgfence\ntry:\n    pgfence.Client()\nexcept pgfence.LibraryNotFound as e:\n    print(e)\n"
    import subprocess

    out = subprocess.run([PY, "-c", code], capture_output=True, text=True,
                         env=env_with(PGFENCE_LIBFENCE=str(tmp_path / "libfence.so.2")))
    assert "libfence2" in out.stdout and "make install" in out.stdout, out.stdout + out.stderr


def test_lease_lost_sets_the_event_and_leaving_the_block_raises(client, redis_server, resource):
    r = redis_server()
    with pgfence.Client(r.url) as c:
        with pytest.raises(pgfence.LeaseLost):
            with c.lease(resource, ttl="600ms") as lease:
                # another owner's doing, as Redis sees it: the lock is gone
                assert r.cli("DEL", "fence:{%s}:lock" % resource).strip() == "1"
                assert lease.lost.wait(3), "the heartbeat did not report the loss"
                with pytest.raises(pgfence.LeaseLost):
                    lease.check()
                assert lease.state == "lost" and not lease.held
        # the block's own exception wins over the loss
        with pytest.raises(KeyError):
            with c.lease(resource, ttl="600ms") as lease:
                r.cli("DEL", "fence:{%s}:lock" % resource)
                lease.lost.wait(3)
                raise KeyError("mine")


def test_threads_share_one_client_tokens_unique(client, resource):
    tokens, errors = [], []

    def worker():
        try:
            for _ in range(15):
                with client.lease(resource, ttl="5s", wait="30s", announce=False) as lease:
                    tokens.append(lease.token)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert len(tokens) == 60 and len(set(tokens)) == 60
    # taken one at a time, in the order of their tokens
    assert tokens == sorted(tokens)


def test_quorum_of_three_nodes(redis_server, resource):
    nodes = [redis_server() for _ in range(3)]
    url = " ".join(n.url for n in nodes)
    with pgfence.Client(url) as c:
        with c.lease(resource, ttl="5s", announce=False) as lease:
            held = sum(n.cli("EXISTS", "fence:{%s}:lock" % resource).strip() == "1" for n in nodes)
            assert held >= 2
            first = lease.token
        nodes[0].stop()  # a majority is enough
        with c.lease(resource, ttl="5s", announce=False) as lease:
            assert lease.token > first


def test_release_acquire_is_a_worker_loop_step(redis_server, resource):
    """Give one lease back and take the next in one call (one
    round trip on a single node); the release's outcome is told apart from
    the acquire's."""
    r = redis_server()
    r1, r2 = resource + ":1", resource + ":2"
    with pgfence.Client(r.url) as c:
        first = c.lease(r1, ttl=5, heartbeat=False).acquire()
        second = first.release_acquire(r2)
        assert first.release_error is None and not first.held
        assert r.cli("exists", "fence:{%s}:lock" % r1).strip() == "0"
        assert r.cli("get", "fence:{%s}:lock" % r2).strip() == second.owner
        assert second.held and second.token >= 1

        # lost meanwhile: the release says so and touches nothing; the
        # next lease is still taken
        r.cli("set", "fence:{%s}:lock" % r2, "someone-else", "px", "5000")
        third = second.release_acquire(r1)
        assert isinstance(second.release_error, pgfence.LeaseLost)
        assert second.lost.is_set()
        assert r.cli("get", "fence:{%s}:lock" % r2).strip() == "someone-else"
        assert third.held and third.token > first.token

        # the next one busy: NotAcquired, and this one given back all the same
        with pytest.raises(pgfence.NotAcquired):
            third.release_acquire(r2)
        assert third.release_error is None and not third.held
        assert r.cli("exists", "fence:{%s}:lock" % r1).strip() == "0"
