"""python/tests/test_install.py: the package installs from the tree with no
network, into a virtual environment and system-wide (into a staging root,
as "pip install" as root would lay it out under /usr/local), and works
from there."""
import glob
import os
import shutil
import subprocess

import pytest

from conftest import PY, TOP, env_with

# pyproject.toml's [project] table needs setuptools 61 (Debian 12 has 66;
# Debian 11's 52 cannot build it)
setuptools_ok = pytest.mark.skipif(
    subprocess.run([PY, "-c", "import setuptools, sys; sys.exit(int(setuptools.__version__.split('.')[0]) < 61)"]).returncode != 0,
    reason="setuptools older than 61 cannot build pyproject.toml's [project]")

SRC = os.path.join(TOP, "python")
# a proxy that does not exist: any attempt to reach an index fails
OFFLINE = {"PIP_NO_INDEX": "1", "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}

CHECK = ("import pgfence, sys; c = pgfence.Client(); "
         "l = c.lease('py:install', ttl='2s', announce=False).acquire(); "
         "print(pgfence.__file__, l.token); l.release()")


def copy_src(tmp_path):
    # pip builds in the tree it is given: a copy keeps build/ and
    # *.egg-info out of the source tree
    dst = tmp_path / "src"
    shutil.copytree(SRC, dst, ignore=shutil.ignore_patterns("tests", "__pycache__", "*.egg-info", "build"))
    return str(dst)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, "%s\n%s%s" % (" ".join(cmd), r.stdout, r.stderr)
    return r.stdout


@setuptools_ok
def test_pip_install_into_a_venv_offline(tmp_path):
    src = copy_src(tmp_path)
    venv = str(tmp_path / "venv")
    run([PY, "-m", "venv", "--system-site-packages", venv])
    env = env_with(**OFFLINE)
    env.pop("PYTHONPATH")
    run([venv + "/bin/pip", "install", "-q", "--no-build-isolation", "--no-index", src], env=env)
    out = run([venv + "/bin/python", "-c", CHECK], env=env, cwd=str(tmp_path))
    assert out.startswith(venv) and int(out.split()[1]) >= 1, out
    # typed: py.typed is installed
    assert glob.glob(venv + "/lib/python3*/site-packages/pgfence/py.typed")


@setuptools_ok
def test_pip_install_system_wide_layout_offline(tmp_path):
    src = copy_src(tmp_path)
    root = str(tmp_path / "root")
    env = env_with(**OFFLINE)
    env.pop("PYTHONPATH")
    # pip 23 refuses the system's Python (PEP 668) unless told; older
    # pips neither refuse nor know the option
    knows = "--break-system-packages" in run([PY, "-m", "pip", "install", "--help"], env=env)
    run([PY, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-index",
         *(["--break-system-packages"] if knows else []),
         "--root", root, "--no-warn-script-location", src], env=env)
    found = glob.glob(root + "/usr/local/lib/python3*/dist-packages/pgfence/__init__.py")
    assert found, run(["find", root])
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(found[0]))
    out = run([PY, "-c", CHECK], env=env, cwd=str(tmp_path))
    assert out.startswith(root), out
