#!/usr/bin/python3
"""Compares the result tables of two stores (read with h5py only) with the bounds of
docs/numerics.md.

Usage: compare_stores.py STORE_A STORE_B [--exact | --devices] [--ignore=TABLE ...]

Both stores must hold the same rows (keyed by model, corpus, layer, ...); fits and all_linear
must have rows. Then:

--exact   every value bitwise equal: two runs whose units each ran whole on one rank with the
          same threads per rank (-n 1 against -n 2 or -n 3 with groups of one rank, a resumed run
          against an uninterrupted one of the same layout). docs/numerics.md, "Bitwise equal".
default   the stores may differ in worker-group size (ranks_per_group). The one operation whose
          order depends on it is the float64 sum of the normal equations over the group, so:
          - fits: within the float64 summation bound (numerics.md, "Fits across group sizes"):
            cond relative, r2 and rel_mse absolute, each ≤ 10·n·u64·cond;
          - every surrogate is rounded to float32 before use. For each (model, corpus) whose
            float32 surrogates are bitwise equal in both stores (the usual case), every row that
            depends on them must be bitwise equal: the rank layout may not change a forward
            pass. Where an element differs by a float32 rounding, perplexities and Δ% of that
            (model, corpus) are compared within the float32 forward bound (numerics.md,
            "Float32 forward passes"), and values decided by thresholds (AUCs, shares, counts,
            the selected gate, clusters) are listed, not compared.
--ignore=TABLE  leaves a table out (a test experiment that one run adds only to take time, such
          as the tests' `toy`).
--devices the stores were computed on different devices (a CPU and a GPU, in float32): every
          forward pass rounds differently, so every perplexity (ppl_base included) and Δ% is
          compared within the float32 forward bound and the fits within the cross-device fit
          bound (numerics.md, "CPU against GPU"); threshold-decided values, hard-routed
          perplexities (gates, compound) among them, are listed.
"""
import glob
import math
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from numerics import device_fit_bound, fit_bound, forward_bound, model_shapes  # noqa: E402
from unit_files import Unit, unit_paths  # noqa: E402

# Each table's rows are matched by the columns its `keys` attribute names (every stored table
# carries it: docs/store.md). Not compared: tables of wall-clock measurements (timed), and those
# keyed by a training step (training runs are compared by tests/experiments/training_test.sh).
TIMED = {"speed", "speed_decode"}
REQUIRED = {"fits", "all_linear"}
# Columns with a continuous float32-forward bound: perplexities (relative) and Δ% (absolute).
PPL_COLUMNS = {"ppl_base", "ppl_linear", "ppl"}
# Tables whose values follow per-position routing decisions (p > 0.5): with --devices, listed.
ROUTED = {"gates", "gate_curve", "compound"}
DELTA_COLUMNS = {"delta_pct", "ci_low", "ci_high"}


def decode(v):
    return v.decode() if isinstance(v, bytes) else v


def stored_keys(dataset):
    keys = dataset.attrs.get("keys")
    if keys is None:
        sys.exit(f"{dataset.name}: no `keys` attribute (a store written before tables recorded their keys)")
    return tuple(decode(keys).split(","))


def compared_tables(store):
    """{table: keys} of the store's tables that are compared."""
    out = {}
    with h5py.File(f"{store}/store.h5", "r") as f:
        for name in f["tables"]:
            if name == "units" or name in TIMED:
                continue
            keys = stored_keys(f[f"tables/{name}"])
            if "step" not in keys:
                out[name] = keys
    return out


def read_rows(store, table):
    with h5py.File(f"{store}/store.h5", "r") as f:
        if f"tables/{table}" not in f:
            return {}, (), ()
        keys = stored_keys(f[f"tables/{table}"])
        t = f[f"tables/{table}"][:]
    columns = tuple(c for c in t.dtype.names if c not in keys and c != "unit")
    return {tuple(decode(r[k]) for k in keys): r for r in t}, keys, columns


def float32_surrogates(store):
    """{(model, corpus): {array name: float32 values}} from the store's fit units."""
    out = {}
    for path in unit_paths(store, "fit"):
        with Unit(path) as f:
            if "arrays/surrogates" not in f:
                continue

            def visit(name, obj):
                if isinstance(obj, h5py.Dataset) and name.split("/")[-1] in ("W", "b"):
                    model, corpus = name.split("/")[:2]
                    out.setdefault((model, corpus), {})[name] = obj[()].astype(np.float32)

            f["arrays/surrogates"].visititems(visit)
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    exact = "--exact" in sys.argv[1:]
    devices = "--devices" in sys.argv[1:]
    if exact and devices:
        sys.exit("compare_stores.py: --exact and --devices exclude each other")
    a, b = args
    shapes = {} if exact else model_shapes(a)
    sur_a, sur_b = ({}, {}) if exact else (float32_surrogates(a), float32_surrogates(b))
    differing = {}  # (model, corpus) -> surrogate elements that differ in float32
    for key in set(sur_a) | set(sur_b):
        xa, xb = sur_a.get(key, {}), sur_b.get(key, {})
        if set(xa) != set(xb):
            sys.exit(f"surrogates of {key}: different arrays in the two stores")
        n = sum(int(np.count_nonzero(xa[k].view(np.uint32) != xb[k].view(np.uint32))) for k in xa)
        if n or devices:  # on another device every forward pass differs, surrogates or not
            differing[key] = n
    worst, exact_rows, bounded_rows, listed = {}, 0, 0, []
    # A table one store lacks (one registered by another build, such as the tests' `toy`) must
    # have no rows in the other.
    ignored = {arg.split("=", 1)[1] for arg in sys.argv[1:] if arg.startswith("--ignore=")}
    tables = {name: keys for name, keys in {**compared_tables(b), **compared_tables(a)}.items() if name not in ignored}
    if REQUIRED - set(tables):
        sys.exit(f"the stores lack the tables {sorted(REQUIRED - set(tables))}")
    for table in sorted(tables):
        ra, keys, cols = read_rows(a, table)
        rb, _, _ = read_rows(b, table)
        if not ra and not rb and table not in REQUIRED:
            continue
        if set(ra) != set(rb) or not ra:
            sys.exit(f"{table}: rows differ: {len(ra)} vs {len(rb)}")
        for k in ra:
            row = dict(zip(keys, k))
            pair = (row.get("model"), row.get("corpus", row.get("source")))
            for col in cols:
                x, y = ra[k][col], rb[k][col]
                if isinstance(x, bytes) or not np.issubdtype(type(x), np.floating):
                    if x != y:
                        if table != "fits" and pair in differing:
                            listed.append(f"{table} {k} {col}: {decode(x)!r} vs {decode(y)!r}")
                            continue
                        sys.exit(f"{table} {k} {col}: {decode(x)!r} vs {decode(y)!r} (must be equal)")
                    continue
                x, y = float(x), float(y)
                if (math.isnan(x) and math.isnan(y)) or x == y:
                    continue
                err = abs(x - y)
                if exact:
                    sys.exit(f"{table} {k} {col}: {x!r} vs {y!r} (bitwise equality expected, --exact)")
                if table == "fits":
                    n, cond = float(ra[k]["tokens"]), float(ra[k]["cond"])
                    tol = fit_bound(n, cond)
                    if devices:
                        if row["model"] not in shapes:
                            sys.exit(f"{table} {k} {col}: {x!r} vs {y!r}: no model shape to bound the difference")
                        tol = device_fit_bound(n, cond, int(row["layer"]), shapes[row["model"]][1])
                    if col in ("cond", "lambda", "tokens"):
                        err /= max(abs(x), 1e-300)
                elif devices and table in ROUTED and col != "ppl_base":
                    listed.append(f"{table} {k} {col}: {x!r} vs {y!r} (routed: threshold-decided)")
                    continue
                elif col == "ppl_base" and not devices:
                    sys.exit(f"{table} {k} {col}: {x!r} vs {y!r}: the base model's perplexity uses no surrogate, so "
                             "the rank layout may not change it")
                elif pair not in differing:
                    sys.exit(f"{table} {k} {col}: {x!r} vs {y!r}: the float32 surrogates of {pair} are bitwise equal in "
                             "both stores, so this row must be too (a forward pass depended on the rank layout)")
                elif col in PPL_COLUMNS or col in DELTA_COLUMNS:
                    if row["model"] not in shapes:
                        sys.exit(f"{table} {k} {col}: {x!r} vs {y!r}: no model shape to bound the difference")
                    ppl_col = "ppl_base" if "ppl_base" in cols else "ppl"
                    eps = forward_bound(shapes[row["model"]], math.log(max(float(ra[k][ppl_col]), 1.0)))
                    if col in PPL_COLUMNS:
                        err /= max(abs(x), 1e-300)
                        tol = 2 * eps
                    else:
                        tol = 100 * 2 * eps * (1 + abs(x) / 100)
                    bounded_rows += 1
                else:
                    listed.append(f"{table} {k} {col}: {x!r} vs {y!r}")
                    continue
                worst[(table, col)] = max(worst.get((table, col), 0.0), err / tol)
                if err > tol:
                    sys.exit(f"{table} {k} {col}: {x!r} vs {y!r} (difference {err:.3g} > bound {tol:.3g})")
            exact_rows += 1
    summary = ", ".join(f"{t}.{c} {e:.1e}" for (t, c), e in sorted(worst.items())) or "bitwise equal"
    print(f"{a} == {b}: {exact_rows} rows; worst difference / bound: {summary}")
    for key, n in sorted(differing.items()):
        print(f"  surrogates of {key}: {n} float32 elements differ (float64 summation order); "
              f"its forward rows compared within the float32 bound")
    for line in listed:
        print(f"  not compared (threshold-decided, surrogate differs): {line}")


if __name__ == "__main__":
    main()
