"""python/tests/conftest.py: fixtures for the pgfence tests.

The tests run against the servers test/run.sh starts ("suite_python"):
the Redis in FENCE_REDIS_URL and the PostgreSQL in the PG* variables, with
the fence extension installed.  PGFENCE_LIBFENCE names the libfence.so.2 of
the tree under test.  Servers of their own (a Redis to stop, one with an
ACL) are started here, on spare ports, and stopped by their pid.
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))

import pgfence  # noqa: E402

PY = "/usr/bin/python3"


# test/run.sh reads a skip's reason from its verbose line, "NAME SKIPPED
# (REASON)", as pytest 7 and later print it; pytest 6 (Debian 11) prints
# "SKIPPED" alone, so the reason is added here.  (Feature, not version:
# the pytests that print it have _get_raw_skip_reason.)
try:
    from _pytest.terminal import _get_raw_skip_reason  # noqa: F401
except ImportError:
    def pytest_report_teststatus(report, config):
        if report.skipped and not hasattr(report, "wasxfail") and isinstance(report.longrepr, tuple):
            reason = report.longrepr[2]
            if reason.startswith("Skipped: "):
                reason = reason[len("Skipped: "):]
            return "skipped", "s", "SKIPPED (%s)" % reason
        return None


def pytest_configure(config):
    for name in ("FENCE_REDIS_URL", "PGHOST", "PGPORT"):
        if not os.environ.get(name):
            raise pytest.UsageError("%s is not set: run these tests through test/run.sh (FENCE_SUITES=python)" % name)


@pytest.fixture
def resource(request):
    """A resource name no other test uses."""
    return "py:%s:%s" % (request.node.name[:40], uuid.uuid4().hex[:8])


@pytest.fixture
def client(fence_ext):
    c = pgfence.Client(pg="")
    yield c
    c.close()


@pytest.fixture(scope="session")
def fence_ext():
    try:
        import psycopg
    except ImportError:
        # a Debian without psycopg 3 (bullseye): the tests that need no
        # driver of their own still run, the extension made with psycopg2
        import psycopg2

        conn = psycopg2.connect("")
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("SET client_min_messages = warning")
            cur.execute("CREATE EXTENSION IF NOT EXISTS fence")
        conn.close()
        return
    with psycopg.connect("", autocommit=True) as conn:
        conn.execute("SET client_min_messages = warning")
        conn.execute("CREATE EXTENSION IF NOT EXISTS fence")


@pytest.fixture
def pgconn(fence_ext):
    import psycopg

    conn = psycopg.connect("")
    yield conn
    conn.close()


def spare_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class RedisServer:
    """A redis-server of a test's own."""

    def __init__(self, *args):
        self.dir = tempfile.mkdtemp(prefix="pgfence-py-redis.")
        self.port = spare_port()
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
             "--dir", self.dir, "--save", "", "--appendonly", "no",
             "--logfile", os.path.join(self.dir, "redis.log"), *args],
        )
        for _ in range(100):
            if self.cli("ping").strip() == "PONG":
                break
            time.sleep(0.1)
        else:
            raise RuntimeError("redis-server on port %d did not start" % self.port)

    @property
    def url(self):
        return "redis://127.0.0.1:%d" % self.port

    def cli(self, *args):
        r = subprocess.run(["redis-cli", "-p", str(self.port), *args],
                           capture_output=True, text=True)
        return r.stdout

    def stop(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def redis_server():
    servers = []

    def start(*args):
        s = RedisServer(*args)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.stop()


def env_with(**kw):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(HERE)
    env.update(kw)
    return env
