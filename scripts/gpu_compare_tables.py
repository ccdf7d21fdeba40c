#!/usr/bin/python3
"""Compares every result table of two stores (STORE/store.h5, h5py only) computed on different
devices, for scripts/gpu_check.sh. tests/orchestrator/compare_stores.py bounds differences that
the rank layout makes on one kind of CPU; a GPU changes every forward pass, so here:

Rows are matched on their string and integer columns and λ (the `unit` id aside; the `units`
table, which holds hosts and times, is left out); both stores must
hold the same rows. For every float column the worst relative difference |a-b| / max(|a|,
1e-12) is reported. Perplexity columns (ppl, ppl_base, ppl_linear) must agree within
--ppl-rtol; the rest (fits, AUCs, Δ%, losses) are reported, not gated, as threshold-decided and
conditioning-amplified values have no device-independent bound. --exact instead requires every
value to be bitwise equal (two runs on the same CPU).

Without h5py (a device's Python) the tables are read with `linsweep query` (--linsweep BIN).

Usage: gpu_compare_tables.py STORE_A STORE_B [--exact] [--ppl-rtol R] [--json FILE] [--linsweep BIN]
Exit: 0 agree, 1 a difference over the bound (or any with --exact), 2 bad usage or rows differ."""
import argparse
import json
import math
import sys

import subprocess

try:
    import h5py
except ImportError:
    h5py = None

PPL_COLUMNS = {"ppl", "ppl_base", "ppl_linear"}
FLOAT_KEYS = {"lambda"}  # a float column that tells rows apart (fits: one row per λ)
SKIP_TABLES = {"units"}  # the units themselves: hosts, times, versions


def decode(v):
    return v.decode() if isinstance(v, bytes) else v


# The tables docs/store.md lists (for reading through `linsweep query` without h5py).
KNOWN_TABLES = ("fits", "all_linear", "gates", "token_context", "nofly", "clusters", "compound", "progressive",
                "finetune", "training_loss", "soft_gates", "token_classes", "token_regression")


def tables_h5py(store):
    """{table: [row dict]} and the key columns of each table (strings and integers, not `unit`)."""
    out, keys = {}, {}
    with h5py.File(f"{store}/store.h5", "r") as f:
        for name in sorted(set(f["tables"] if "tables" in f else ()) - SKIP_TABLES):
            t = f[f"tables/{name}"][:]
            keys[name] = [c for c in t.dtype.names if c != "unit" and (t.dtype[c].kind in "SOUiu" or c in FLOAT_KEYS)]
            out[name] = [{c: decode(r[c]) if t.dtype[c].kind in "SOU" else r[c].item() for c in t.dtype.names}
                         for r in t]
    return out, keys


def tables_query(store, linsweep):
    """The same through `linsweep query STORE TABLE --json` (JSON numbers do not say whether a
    column is an integer: the keys are the string columns plus layer and step)."""
    out, keys = {}, {}
    for name in KNOWN_TABLES:
        r = subprocess.run([linsweep, "query", store, name, "--json"], capture_output=True, text=True)
        rows = json.loads(r.stdout) if r.returncode == 0 and r.stdout.strip() else []
        if rows:
            out[name] = rows
            keys[name] = [c for c in rows[0] if c != "unit" and (isinstance(rows[0][c], str) or c in ("layer", "step", *FLOAT_KEYS))]
    return out, keys


def tables(store, linsweep):
    if h5py is not None:
        return tables_h5py(store)
    if not linsweep:
        print("gpu_compare_tables: h5py is not importable; pass --linsweep BIN to read through linsweep query",
              file=sys.stderr)
        sys.exit(2)
    return tables_query(store, linsweep)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--exact", action="store_true")
    ap.add_argument("--ppl-rtol", type=float, default=1e-3)
    ap.add_argument("--json")
    ap.add_argument("--linsweep", help="linsweep binary, to read the tables when h5py is not importable")
    args = ap.parse_args()
    (ta, keys_of), (tb, _) = tables(args.a, args.linsweep), tables(args.b, args.linsweep)
    if not ta:
        print(f"gpu_compare_tables: {args.a} has no tables", file=sys.stderr)
        sys.exit(2)
    if set(ta) != set(tb):
        print(f"gpu_compare_tables: tables differ: {sorted(ta)} vs {sorted(tb)}", file=sys.stderr)
        sys.exit(2)
    report, failures, rows = {}, [], 0
    for name in sorted(ta):
        a, b = ta[name], tb[name]
        keys = keys_of[name]
        values = [c for c in a[0] if c not in keys and c != "unit"] if a else []
        ra = {tuple(decode(r[k]) for k in keys): r for r in a}
        rb = {tuple(decode(r[k]) for k in keys): r for r in b}
        if set(ra) != set(rb) or len(ra) != len(a) or len(rb) != len(b):
            print(f"gpu_compare_tables: {name}: rows differ ({len(a)} vs {len(b)}, keys {keys})", file=sys.stderr)
            sys.exit(2)
        rows += len(ra)
        for col in values:
            worst, where = 0.0, None
            for k in ra:
                x, y = ra[k][col], rb[k][col]
                if not isinstance(x, float) or not isinstance(y, (int, float)):
                    if x != y:
                        failures.append(f"{name} {k} {col}: {x!r} vs {y!r}")
                    continue
                x, y = float(x), float(y)
                if x == y or (math.isnan(x) and math.isnan(y)):
                    continue
                if args.exact:
                    failures.append(f"{name} {k} {col}: {x!r} vs {y!r} (bitwise equality expected)")
                rel = abs(x - y) / max(abs(x), 1e-12) if not (math.isnan(x) or math.isnan(y)) else math.inf
                if rel > worst:
                    worst, where = rel, k
            gated = col in PPL_COLUMNS and not args.exact
            if gated and worst > args.ppl_rtol:
                failures.append(f"{name} {where} {col}: relative difference {worst:.3g} > {args.ppl_rtol:g}")
            report[f"{name}.{col}"] = {"worst_rel": worst, "gated": gated or args.exact}
    ok = not failures
    summary = {"a": args.a, "b": args.b, "exact": args.exact, "ppl_rtol": None if args.exact else args.ppl_rtol,
               "rows": rows, "ok": ok, "failures": failures[:20], "columns": report}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=2)
    worst_ppl = max((v["worst_rel"] for c, v in report.items() if c.split(".")[-1] in PPL_COLUMNS), default=0.0)
    print(f"gpu_compare_tables: {args.a} vs {args.b}: {len(ta)} tables, {rows} rows, "
          f"{'bitwise' if args.exact else 'ppl rtol ' + format(args.ppl_rtol, 'g')}: "
          f"{'ok' if ok else 'FAILED'}; worst ppl relative difference {worst_ppl:.3g}")
    for line in failures[:20]:
        print(f"  {line}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
