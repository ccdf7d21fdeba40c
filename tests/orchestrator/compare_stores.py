#!/usr/bin/python3
"""Compares the result tables of two stores (read with h5py only).

Usage: compare_stores.py STORE_A STORE_B
Float64 statistics (r2, rel_mse, cond, perplexities, inertia) must agree to relative 1e-9
(routed perplexities 1e-8: a worker group batches its windows differently),
Δ%, intervals, AUCs, shares and correlations to 1e-6 absolute, counts and the selected gate
exactly; both stores must hold the same rows. fits and all_linear must have rows; the
measurement tables are compared when either store has rows.
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
        "gates": (("model", "corpus", "layer", "gate"), {"params": ("eq", 0), "auc": ("abs", 1e-6), "select_auc": ("abs", 1e-6), "eval_auc": ("abs", 1e-6),
                  "selected": ("eq", 0), "pct_linear": ("abs", 1e-6), "ppl": ("rel", 1e-8), "delta_pct": ("abs", 1e-6), "ci_low": ("abs", 1e-6), "ci_high": ("abs", 1e-6)}),
        "token_context": (("model", "corpus", "layer", "variant"), {"auc": ("abs", 1e-6), "e_norm": ("rel", 1e-9), "c_norm": ("rel", 1e-9), "cosine": ("abs", 1e-6)}),
        "nofly": (("model", "layer", "source", "target"), {"listed": ("eq", 0), "found": ("eq", 0), "still_listed": ("eq", 0), "flipped": ("eq", 0), "pearson_r": ("abs", 1e-6)}),
        "clusters": (("model", "corpus", "layer"), {"pca_var": ("abs", 1e-6), "cluster_auc": ("abs", 1e-6), "clean_clusters": ("eq", 0), "inertia": ("rel", 1e-9)}),
        "compound": (("model", "corpus"), {"pct_linear": ("abs", 1e-6), "ppl": ("rel", 1e-8), "delta_pct": ("abs", 1e-6), "ci_low": ("abs", 1e-6), "ci_high": ("abs", 1e-6),
                     "mlp_flops_saved_pct": ("abs", 1e-6), "total_flops_saved_pct": ("abs", 1e-6)}),
    }
    required = {"fits", "all_linear"}
    worst = {}
    for table, (keys, cols) in checks.items():
        ra, rb = rows(a, table, keys), rows(b, table, keys)
        if not ra and not rb and table not in required:
            continue
        if set(ra) != set(rb) or not ra:
            sys.exit(f"{table}: rows differ: {len(ra)} vs {len(rb)}")
        for k in ra:
            for col, (kind, tol) in cols.items():
                x, y = float(ra[k][col]), float(rb[k][col])
                if np.isnan(x) and np.isnan(y):
                    continue
                err = abs(x - y) if kind != "rel" else abs(x - y) / max(abs(x), 1e-300)
                worst[(table, col)] = max(worst.get((table, col), 0.0), err)
                if err > tol:
                    sys.exit(f"{table} {k} {col}: {x!r} vs {y!r} ({kind} difference {err:.3g} > {tol})")
    print(f"{a} == {b}: " + ", ".join(f"{t}.{c} {e:.1e}" for (t, c), e in sorted(worst.items())))


if __name__ == "__main__":
    main()
