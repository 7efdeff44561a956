"""python/tests/test_docs.py: docs/python.md works as shown.

Every ```python block after a "<!-- pytest -->" line runs, in order, each
in a process of its own, as a reader would run them one after the other:
against a fresh database with the fence extension (PGDATABASE) and the
suite's Redis (the recipes' token counters only grow, which they allow).
"""
import os
import subprocess

import psycopg

from conftest import PY, TOP, env_with

DOC = os.path.join(TOP, "docs", "python.md")


def blocks():
    text = open(DOC).read().splitlines()
    found, i = [], 0
    while i < len(text):
        if text[i].strip() == "<!-- pytest -->" and i + 1 < len(text) and text[i + 1].startswith("```python"):
            j = i + 2
            while not text[j].startswith("```"):
                j += 1
            found.append((i + 2, "\n".join(text[i + 2:j]) + "\n"))
            i = j
        i += 1
    return found


def test_docs_python_recipes_run_as_shown(fence_ext):
    found = blocks()
    assert len(found) >= 5, "docs/python.md marks %d blocks" % len(found)
    with psycopg.connect("", autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS py_docs")
        conn.execute("CREATE DATABASE py_docs")
    with psycopg.connect("dbname=py_docs", autocommit=True) as conn:
        conn.execute("CREATE EXTENSION fence")
    env = env_with(PGDATABASE="py_docs")
    for line, code in found:
        r = subprocess.run([PY, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        print(r.stdout)
        assert r.returncode == 0, "docs/python.md line %d:\n%s%s" % (line, r.stdout, r.stderr)
    with psycopg.connect("", autocommit=True) as conn:
        conn.execute("DROP DATABASE py_docs")
