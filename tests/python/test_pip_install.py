#!/usr/bin/python3
"""The install command docs/store.md gives works offline with the system's numpy, h5py and pandas
(Debian registers h5py under another distribution name), and the installed package reads a store
from outside the repository:

    python3 -m venv --system-site-packages VENV && VENV/bin/pip install --no-build-isolation ./python

PIP_NO_INDEX makes any attempt to download fail at once instead of waiting on the network.

Usage: test_pip_install.py SOURCE_DIR STORE
"""
import os
import shutil
import subprocess
import sys
import tempfile

src, store = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])


def run(argv, cwd, env=None):
    r = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env={**os.environ, **(env or {})})
    if r.returncode != 0:
        sys.exit(f"test_pip_install: {' '.join(argv)} exited {r.returncode}: {(r.stdout + r.stderr).strip()[-2000:]}")
    return r.stdout


with tempfile.TemporaryDirectory() as work:
    shutil.copytree(os.path.join(src, "python"), os.path.join(work, "python"),
                    ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    run([sys.executable, "-m", "venv", "--system-site-packages", "VENV"], work)
    pip_env = {"PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    run(["VENV/bin/pip", "install", "--no-build-isolation", "./python"], work, pip_env)
    code = ("import linsweep_store, sys; s = linsweep_store.open_store(sys.argv[1]); "
            "assert '/VENV/' in linsweep_store.__file__, linsweep_store.__file__; "
            "print(len(s.table('fits')), 'fits rows via', linsweep_store.__file__)")
    print("test_pip_install:", run(["VENV/bin/python", "-c", code, store], work).strip())
