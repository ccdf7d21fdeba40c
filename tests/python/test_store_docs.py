#!/usr/bin/python3
"""Runs the Python examples of docs/store.md ("Reading a store from Python"), in order and in one
namespace, from a directory where runs/demo/store is the fixture store of
examples/fixture_measure.yaml and tests/ the repository's, with python/ on the path (as PYTHONPATH=python would put it).

Usage: test_store_docs.py SOURCE_DIR STORE
"""
import os
import re
import sys
import tempfile
import traceback

src, store = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
with open(os.path.join(src, "docs", "store.md"), encoding="utf-8") as f:
    blocks = re.findall(r"^```python\n(.*?)^```$", f.read(), flags=re.S | re.M)
if len(blocks) < 3:
    sys.exit(f"test_store_docs: docs/store.md has {len(blocks)} python blocks; expected the reader's examples")
sys.path.insert(0, os.path.join(src, "python"))
with tempfile.TemporaryDirectory() as work:
    os.makedirs(os.path.join(work, "runs", "demo"))
    os.symlink(store, os.path.join(work, "runs", "demo", "store"))
    os.symlink(os.path.join(src, "tests"), os.path.join(work, "tests"))  # the fixture models, as in the repository
    os.chdir(work)
    namespace = {"__name__": "__docs__"}
    for i, code in enumerate(blocks, 1):
        try:
            exec(compile(code, f"docs/store.md python block {i}", "exec"), namespace)
        except Exception:
            traceback.print_exc()
            sys.exit(f"test_store_docs: block {i} of docs/store.md failed")
print(f"test_store_docs: {len(blocks)} blocks of docs/store.md ran")
