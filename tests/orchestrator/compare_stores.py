#!/usr/bin/python3
"""Compares the fits and all_linear tables of two stores (read with h5py only).

Usage: compare_stores.py STORE_A STORE_B
Float64 statistics (r2, rel_mse, cond, ppl_base) must agree to relative 1e-9, Δ% and its
interval to 1e-6 absolute; both stores must hold the same rows.
"""
import sys

import h5py
import numpy as np


def rows(store, table, keys):
    with h5py.File(f"{store}/store.h5", "r") as f:
        t = f[f"tables/{table}"][:]
    return {tuple(r[k] for k in keys): r for r in t}


def main():
    a, b = sys.argv[1], sys.argv[2]
    checks = {
        "fits": (("model", "corpus", "layer", "lambda"), {"r2": ("rel", 1e-9), "rel_mse": ("rel", 1e-9), "cond": ("rel", 1e-9), "tokens": ("eq", 0)}),
        "all_linear": (("model", "corpus", "layer"), {"ppl_base": ("rel", 1e-9), "delta_pct": ("abs", 1e-6), "ci_low": ("abs", 1e-6), "ci_high": ("abs", 1e-6), "tokens": ("eq", 0)}),
    }
    worst = {}
    for table, (keys, cols) in checks.items():
        ra, rb = rows(a, table, keys), rows(b, table, keys)
        if set(ra) != set(rb) or not ra:
            sys.exit(f"{table}: rows differ: {len(ra)} vs {len(rb)}")
        for k in ra:
            for col, (kind, tol) in cols.items():
                x, y = float(ra[k][col]), float(rb[k][col])
                err = abs(x - y) if kind != "rel" else abs(x - y) / max(abs(x), 1e-300)
                worst[(table, col)] = max(worst.get((table, col), 0.0), err)
                if err > tol:
                    sys.exit(f"{table} {k} {col}: {x!r} vs {y!r} ({kind} difference {err:.3g} > {tol})")
    print(f"{a} == {b}: " + ", ".join(f"{t}.{c} {e:.1e}" for (t, c), e in sorted(worst.items())))


if __name__ == "__main__":
    main()
