"""python/tests/test_faults.py: a Python worker paused past its TTL (F1),
and Python, "fence run" and a C worker taking turns on one resource."""
import os
import signal
import subprocess
import threading
import time


import pgfence
from conftest import HERE, PY, TOP, env_with

# A worker: takes the lease (1 s TTL), says its token, waits for a line on
# stdin, then writes under its token and reports what PostgreSQL said and
# whether its lease.lost was set (within 3 s of the write).
PAUSED_WORKER = r"""
import sys, psycopg, pgfence
resource, table = sys.argv[1], sys.argv[2]
client = pgfence.Client(pg="")
lease = client.lease(resource, ttl="1s").acquire()
print("token", lease.token, flush=True)
sys.stdin.readline()
try:
    with psycopg.connect("") as conn:
        pgfence.set_tokens(conn, lease)
        conn.execute("UPDATE %s SET n = n + 1, who = 'paused'" % table)
        conn.commit()
    outcome = "written"
except psycopg.Error as e:
    outcome = "refused " + str(e.sqlstate) + (" stale" if pgfence.is_stale(e) else "")
lost = lease.lost.wait(3)
try:
    lease.release()
    released = "released"
except pgfence.LeaseLost:
    released = "not-ours"
print(outcome, "lost" if lost else "not-lost", released, flush=True)
"""


def test_sigstopped_worker_is_refused_lf001_and_sees_lost(client, pgconn, resource):
    table = "py_paused"
    pgconn.execute("DROP TABLE IF EXISTS %s" % table)
    pgconn.execute("CREATE TABLE %s (n int, who text)" % table)
    pgconn.execute("INSERT INTO %s VALUES (0, NULL)" % table)
    pgconn.execute("SELECT fence.protect(%s, %s)", (table, resource))
    pgconn.commit()
    w = subprocess.Popen([PY, "-c", PAUSED_WORKER, resource, table], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, env=env_with())
    try:
        line = w.stdout.readline().split()
        assert line[0] == "token", line
        old = int(line[1])
        os.kill(w.pid, signal.SIGSTOP)
        time.sleep(1.5)  # past the TTL: the lease expires in Redis
        with client.lease(resource, ttl="10s", wait="5s") as lease:
            assert lease.token > old
            pgfence.set_tokens(pgconn, lease)
            pgconn.execute("UPDATE %s SET n = n + 1, who = 'new'" % table)
            pgconn.commit()
            os.kill(w.pid, signal.SIGCONT)
            out, _ = w.communicate("go\n", timeout=20)
            # the new holder's lease is untouched by the old one's release
            assert lease.state == "held"
        assert out.split() == ["refused", "LF001", "stale", "lost", "not-ours"], out
        assert pgconn.execute("SELECT n, who FROM %s" % table).fetchone() == (1, "new")
        pgconn.rollback()
    finally:
        if w.poll() is None:
            os.kill(w.pid, signal.SIGCONT)
            w.kill()
            w.wait()


# The C worker: libfence from C, the same protocol the binding calls.
C_WORKER = os.path.join(HERE, "c_worker.c")

# Python's turn: read the counter, write it back one higher, log the token.
PY_WORKER = r"""
import sys, psycopg, pgfence
resource, n = sys.argv[1], int(sys.argv[2])
client = pgfence.Client(pg="")
with psycopg.connect("") as conn:
    for i in range(n):
        with client.lease(resource, ttl="5s", wait="60s") as lease:
            pgfence.set_tokens(conn, lease)
            v = conn.execute("SELECT n FROM mix_counter").fetchone()[0]
            conn.execute("UPDATE mix_counter SET n = %s", (v + 1,))
            conn.execute("INSERT INTO mix_log (who, token) VALUES ('python', %s)", (lease.token,))
            conn.commit()
"""

# fence run's turn: psql under the lease, fenced through PGOPTIONS.
RUN_SQL = (
    "UPDATE mix_counter SET n = (SELECT n FROM mix_counter) + 1; "
    "INSERT INTO mix_log (who, token) VALUES ('fence-run', current_setting('fence.token')::bigint)"
)


def test_python_fence_run_and_c_worker_take_turns_tokens_increase_no_lost_update(
        pgconn, resource, tmp_path):
    pgconn.execute("DROP TABLE IF EXISTS mix_counter, mix_log")
    pgconn.execute("CREATE TABLE mix_counter (n int NOT NULL)")
    pgconn.execute("INSERT INTO mix_counter VALUES (0)")
    pgconn.execute("CREATE TABLE mix_log (seq bigserial PRIMARY KEY, who text, token bigint)")
    pgconn.execute("SELECT fence.protect('mix_counter', %s)", (resource,))
    pgconn.commit()
    cc = os.environ.get("CC", "cc")
    worker = str(tmp_path / "c_worker")
    client_dir = os.path.join(TOP, "client")
    pg_inc = subprocess.run(["pg_config", "--includedir"], capture_output=True, text=True).stdout.strip()
    subprocess.run([cc, "-O2", "-Wall", "-Werror", "-I", client_dir, "-I", pg_inc, "-o", worker, C_WORKER,
                    os.path.join(client_dir, "libfence.so.2"), "-lpq", "-Wl,-rpath," + client_dir],
                   check=True)
    fence = os.environ.get("FENCE_BIN", os.path.join(client_dir, "fence"))
    n = 12

    def fence_run_worker():
        for _ in range(n):
            subprocess.run([fence, "run", resource, "--ttl", "5s", "--wait", "60s", "--pg", "", "--",
                            "psql", "-X", "-q", "-1", "-v", "ON_ERROR_STOP=1", "-c", RUN_SQL],
                           check=True, env=env_with())

    procs = [
        subprocess.Popen([PY, "-c", PY_WORKER, resource, str(n)], env=env_with()),
        subprocess.Popen([worker, resource, str(n)], env=env_with()),
    ]
    t = threading.Thread(target=fence_run_worker)
    t.start()
    for p in procs:
        assert p.wait(timeout=240) == 0
    t.join(240)
    rows = pgconn.execute("SELECT who, token FROM mix_log ORDER BY seq").fetchall()
    final = pgconn.execute("SELECT n FROM mix_counter").fetchone()[0]
    pgconn.rollback()
    assert {w for w, _ in rows} == {"python", "fence-run", "c"}
    assert len(rows) == 3 * n
    tokens = [tok for _, tok in rows]
    assert all(a < b for a, b in zip(tokens, tokens[1:])), tokens
    assert final == len(rows)  # no lost update
