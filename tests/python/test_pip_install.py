#!/usr/bin/python3
"""`pip install ./python` works (offline: --no-build-isolation uses Debian's setuptools, --no-index
keeps pip off PyPI), and the installed package reads a store from outside the repository.

Usage: test_pip_install.py SOURCE_DIR STORE
"""
import os
import shutil
import subprocess
import sys
import tempfile

src, store = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
with tempfile.TemporaryDirectory() as work:
    tree, target = os.path.join(work, "python"), os.path.join(work, "site")
    shutil.copytree(os.path.join(src, "python"), tree, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps",
                        "--disable-pip-version-check", "--target", target, tree], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"test_pip_install: pip install exited {r.returncode}: {r.stderr.strip()[-2000:]}")
    code = ("import linsweep_store, sys; s = linsweep_store.open_store(sys.argv[1]); "
            "assert linsweep_store.__file__.startswith(sys.argv[2]), linsweep_store.__file__; "
            "print(len(s.table('fits')), 'fits rows via', linsweep_store.__file__)")
    r = subprocess.run([sys.executable, "-c", code, store, target], capture_output=True, text=True, cwd=work,
                       env={**os.environ, "PYTHONPATH": target})
    if r.returncode != 0:
        sys.exit(f"test_pip_install: the installed package failed: {r.stderr.strip()[-2000:]}")
    print("test_pip_install:", r.stdout.strip())
