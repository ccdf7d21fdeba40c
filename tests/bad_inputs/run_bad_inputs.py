#!/usr/bin/python3
"""Runs the bad-input catalogue (cases.tsv) against the real binary and checks each refusal.

Usage: run_bad_inputs.py LINSWEEP_BINARY SOURCE_DIR WORK_DIR [CASE_NAME_SUBSTRING ...]

Every case must exit with code 2 (bad usage or input, docs/architecture.md), print nothing on stdout
and exactly one line on stderr containing each expected substring (the offending file or
option, and the problem), die of no signal, print no abort/sanitizer/exception noise, and
leave every file under the fixtures, under each store it names and under its scratch
directory byte-for-byte unchanged (paths and contents, no exceptions: a refusal creates no
store). Cases run in parallel, each in its own scratch directory (its working directory)
with private copies of the stores it names.

make_fixtures.py adds generated_cases.tsv: one case per bounded experiment parameter (a value just
outside its range, from `linsweep experiments --json`).

cases.tsv: one case per line, tab-separated: name, command line (shell words, no shell
features), then one or more expected substrings. Placeholders in the command line:
  {bin}         the linsweep binary
  {data}        tests/data of the source tree
  {fx}          the generated fixtures (make_fixtures.py); read-only for cases
  {tmp}         the case's own empty scratch directory
  {store:NAME}  a private copy of the fixture store fx/stores/NAME (hashed before and after)
Expected substrings may use {fx}, {tmp} and {data} too.
"""
import concurrent.futures
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

NOISE = ("terminate called", "Sanitizer", "core dumped", "Aborted", "Traceback", "internal error",
         "HDF5-DIAG", "Segmentation fault", "c10::Error", "what():")


def tree_hash(root):
    """SHA-256 over every path under root (with its kind) and every file's bytes."""
    h = hashlib.sha256()
    if not os.path.lexists(root):
        return "absent"
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel = os.path.relpath(dirpath, root)
        h.update(b"D\0" + rel.encode("utf-8", "surrogateescape") + b"\0")
        for name in sorted(filenames):
            p = os.path.join(dirpath, name)
            h.update(b"F\0" + os.path.join(rel, name).encode("utf-8", "surrogateescape") + b"\0")
            if os.path.islink(p):
                h.update(b"L\0" + os.readlink(p).encode("utf-8", "surrogateescape") + b"\0")
            else:
                with open(p, "rb") as f:
                    h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()


def load_cases(path):
    cases = []
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) < 3 or not all(c.strip() for c in cols):
            sys.exit(f"{path}:{n}: need name, command and at least one expected substring, tab-separated")
        cases.append({"name": cols[0], "command": cols[1], "expect": cols[2:], "line": n})
    names = [c["name"] for c in cases]
    dup = {x for x in names if names.count(x) > 1}
    if dup:
        sys.exit(f"{path}: duplicate case names: {sorted(dup)}")
    return cases


def run_case(case, binary, src, fx, work):
    tmp = os.path.join(work, "cases", case["name"])
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    stores = {}

    def store(m):
        name = m.group(1)
        dest = os.path.join(tmp, "store-" + name)
        if name not in stores:
            shutil.copytree(os.path.join(fx, "stores", name), dest, symlinks=True)
            stores[name] = dest
        return dest

    def expand(s):
        s = re.sub(r"\{store:([A-Za-z0-9_]+)\}", store, s)
        return s.replace("{bin}", binary).replace("{data}", os.path.join(src, "tests", "data")) \
                .replace("{fx}", fx).replace("{tmp}", tmp)

    argv = [expand(w) for w in shlex.split(case["command"])]
    expect = [expand(e) for e in case["expect"]]
    before = {d: tree_hash(d) for d in stores.values()}
    before_tmp = tree_hash(tmp)  # the stores and anything else: a refusal creates no file anywhere
    env = dict(os.environ, LINSWEEP_THREADS="1", LC_ALL="C.UTF-8")
    env.pop("LINSWEEP_DEADLINE", None)
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, cwd=tmp, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        rc, out, err = p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout", e.stdout or b"", (e.stderr or b"").decode("utf-8", "replace")
    seconds = time.monotonic() - t0
    problems = []
    if rc != 2:
        signal = isinstance(rc, int) and (rc < 0 or rc >= 128)
        problems.append(f"exit code {rc}, expected 2" + (" (killed by a signal)" if signal else ""))
    lines = err[:-1].split("\n") if err.endswith("\n") else err.split("\n")
    if len(lines) != 1 or not lines[0].strip():
        problems.append(f"stderr has {len(lines) if err else 0} lines, expected exactly one")
    if out:
        problems.append(f"stdout is not empty ({len(out)} bytes): a refusal prints only its one line on stderr")
    for noise in NOISE:
        if noise in err:
            problems.append(f"stderr contains '{noise}'")
    for e in expect:
        if e not in err:
            problems.append(f"stderr lacks '{e}'")
    changed = [os.path.basename(d) for d, h in before.items() if tree_hash(d) != h]
    for d in changed:
        problems.append(f"store {d} changed")
    if not changed and tree_hash(tmp) != before_tmp:
        problems.append("the scratch directory changed (a file or directory was created): "
                        + ", ".join(sorted(os.listdir(tmp))))
    return case, problems, err, seconds


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    binary, src, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    only = sys.argv[4:]
    try:
        import h5py  # noqa: F401  (make_fixtures.py needs both)
        import numpy  # noqa: F401
    except ImportError as e:
        print(f"skipped: {e} (install python3-numpy and python3-h5py)")
        return 77
    here = os.path.join(src, "tests", "bad_inputs")
    fx = os.path.join(work, "fixtures")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    t0 = time.monotonic()
    subprocess.run([sys.executable, os.path.join(here, "make_fixtures.py"), binary, src, fx], check=True)
    setup = time.monotonic() - t0
    cases = load_cases(os.path.join(here, "cases.tsv")) + load_cases(os.path.join(fx, "generated_cases.tsv"))
    if only:
        cases = [c for c in cases if any(o in c["name"] for o in only)]
    fx_before = tree_hash(fx)
    failures = 0
    jobs = max(2, os.cpu_count() or 2)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run_case, c, binary, src, fx, work) for c in cases]
        for f in futures:
            case, problems, err, seconds = f.result()
            status = "ok  " if not problems else "FAIL"
            print(f"{status} {case['name']:<34} {seconds:5.2f}s  {err.strip()[:160]}")
            for p in problems:
                print(f"       cases.tsv:{case['line']}: {p}")
            if problems and err.count("\n") > 1:
                print("       stderr:\n" + "\n".join("         " + l for l in err.splitlines()[:20]))
            failures += bool(problems)
    if tree_hash(fx) != fx_before:
        print("FAIL the fixtures changed while the cases ran (a case wrote outside its scratch directory)")
        failures += 1
    print(f"{len(cases)} cases, {failures} failed; fixtures {setup:.1f} s, total {time.monotonic() - t0:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
