#!/usr/bin/python3
"""Compares every result table of two stores computed on different devices (a CPU and a GPU),
for scripts/gpu_check.sh, with the bounds of docs/numerics.md, "CPU against GPU" (taken from
tests/support/numerics.py; the models' shapes from the stores' specs):

- rows are matched on each table's key columns (the `units` table, hosts and times, is left
  out); both stores must hold the same rows;
- --dtype float32 (the default): perplexities within relative 2·eps_F, Δ% and its interval
  ends within 100·2·eps_F·(1 + |Δ%|/100) points, training rows (a `step` column) within the
  training bound of their step, losses within it in nats, fits (cond relative, r2 and rel_mse
  absolute) within the cross-device fit bound; every other float column is reported, not
  gated (AUCs, shares, counts, and every value of a hard-routed forward pass: gates,
  gate_curve and compound, whose routing is threshold-decided);
- --dtype bfloat16: every difference is reported as a fraction of the bfloat16 bound eps_B,
  nothing is gated (numerics.md: a bound on another model, of the size of the NLL);
- a selection that differs (a gate's `selected` or `auc_pick`, gate_curve's `gate`) is reported
  with both values, not a failure, when either the two variants' select-split values are within
  the forward bound in both stores (a near-tie), or a variant's own select-split value moved
  between the stores by more than that bound (a trained gate that routes positions the other
  way: a hard-routed value, which no rounding bound covers) and each store chose the best
  variant by its own values; a flip between values that agree across the stores is a failure;
- --exact instead requires every value to be bitwise equal (two runs on the same CPU).

Without h5py (a device's Python) the tables are read with `linsweep query` (--linsweep BIN).

Usage: gpu_compare_tables.py STORE_A STORE_B [--exact] [--dtype float32|bfloat16] [--json FILE]
                             [--linsweep BIN]
Exit: 0 agree, 1 a difference over its bound (or any with --exact), 2 bad usage or rows differ."""
import argparse
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support"))
from numerics import (bfloat16_forward_bound, device_fit_bound, forward_bound, model_shapes,  # noqa: E402
                      training_bound)

try:
    import h5py
except ImportError:
    h5py = None

SKIP_TABLES = {"units"}  # the units themselves: hosts, times, versions
DECIDED = {"gate", "selected", "auc_pick"}  # selections: a difference may be a near-tie
# Tables whose values follow per-position routing decisions (p > threshold): another device may
# route a position the other way, so only their base perplexity has a continuous bound.
ROUTED = {"gates", "gate_curve", "compound"}
PPL = {"ppl", "ppl_base", "ppl_linear"}
LOSS = {"loss", "train_loss"}


def is_delta(col):
    return col == "delta_pct" or col.endswith("_delta_pct") or col in ("ci_low", "ci_high") or \
        col.endswith("_ci_low") or col.endswith("_ci_high")


def decode(v):
    return v.decode() if isinstance(v, bytes) else v


def tables_h5py(store):
    """{table: (keys, rows)}: keys from each stored table's `keys` attribute (docs/store.md)."""
    out = {}
    with h5py.File(f"{store}/store.h5", "r") as f:
        for name in sorted(set(f["tables"] if "tables" in f else ()) - SKIP_TABLES):
            ds = f[f"tables/{name}"]
            keys = decode(ds.attrs["keys"]).split(",") if "keys" in ds.attrs else None
            t = ds[:]
            out[name] = (keys, [{c: decode(r[c]) if t.dtype[c].kind in "SOU" else r[c].item() for c in t.dtype.names}
                                for r in t])
    return out


def tables_query(store, linsweep):
    """The same through `linsweep query STORE TABLE --json`, every table of `linsweep catalogue`."""
    catalogue = json.loads(subprocess.run([linsweep, "catalogue", "--json"], capture_output=True, text=True,
                                          check=True).stdout)
    out = {}
    for t in catalogue:
        if t["name"] in SKIP_TABLES:
            continue
        r = subprocess.run([linsweep, "query", store, t["name"], "--json"], capture_output=True, text=True)
        rows = json.loads(r.stdout) if r.returncode == 0 and r.stdout.strip() else []
        if rows:
            out[t["name"]] = (t["keys"], rows)
    return out


def row_keys(keys, rows):
    """The table's key columns, or for a table without them its string and integer columns."""
    if keys:
        return [k for k in keys if k in rows[0]]
    return [c for c, v in rows[0].items() if c != "unit" and c not in DECIDED and isinstance(v, (str, int))
            and not isinstance(v, bool)]


def gate_select_by(store):
    """The gate experiment's `select_by` ("delta" or "auc") from the spec and overrides that
    STORE/run.json records; None when they cannot be read (then either rule is accepted)."""
    try:
        import yaml

        with open(f"{store}/run.json") as f:
            run = json.load(f)
        with open(run["spec"]) as f:
            spec = yaml.safe_load(f)
    except (OSError, KeyError, ValueError, ImportError):
        return None
    value = ((spec.get("experiments") or {}).get("gate") or {}).get("select_by", "delta")
    for o in run.get("overrides", []):
        k, _, v = o.lstrip("+").partition("=")
        if k == "experiments.gate.select_by":
            value = v.strip()
    return value


class Bounds:
    """The bound of one value, by table and column (docs/numerics.md, "CPU against GPU")."""

    def __init__(self, shapes, dtype, select_by=None):
        self.shapes, self.dtype, self.select_by = shapes, dtype, select_by

    def select_tie(self, row, x):
        """The forward bound of a select-split Δ% x of `row`'s model (at its base NLL), or None."""
        shape = self.shapes.get(row.get("model"))
        if shape is None:
            return None
        return 100 * 2 * forward_bound(shape, math.log(max(float(row["ppl_base"]), 1.0))) * (1 + abs(x) / 100)

    def of(self, table, row, col, x):
        """(bound, relative?) or None when the column is reported, not bounded."""
        shape = self.shapes.get(row.get("model"))
        if shape is None or (table in ROUTED and col != "ppl_base"):
            return None
        ppl = row.get("ppl_base", row.get("ppl"))
        nll = abs(x) if col in LOSS else math.log(max(float(ppl), 1.0)) if ppl else 0.0
        if self.dtype == "bfloat16":
            eps = bfloat16_forward_bound(shape, nll)
        elif "step" in row and table not in ("gate_curve",):
            eps = training_bound(shape, nll, int(row["step"]))
        else:
            eps = forward_bound(shape, nll)
        if table == "fits":
            b = device_fit_bound(float(row["tokens"]), float(row["cond"]), int(row["layer"]), shape[1])
            return (b, True) if col == "cond" else (b, False) if col in ("r2", "rel_mse") else None
        if col in PPL:
            return 2 * eps, True
        if is_delta(col):
            return 100 * 2 * eps * (1 + abs(x) / 100), False
        if col in LOSS:
            return eps, False
        return None


def variants_of(tables, row):
    key = (row.get("model"), row.get("corpus"), row.get("layer"))
    return {r["gate"]: r for r in tables.get("gates", []) if (r["model"], r["corpus"], r["layer"]) == key}


def best(variants, col, higher):
    """The variant with the best finite `col` (the first in order on ties), as gate.cpp chooses."""
    finite = [(g, r[col]) for g, r in variants.items() if isinstance(r.get(col), (int, float)) and math.isfinite(r[col])]
    if not finite:
        return None
    return (max if higher else min)(finite, key=lambda gv: gv[1])[1]


def moved(va, vb, g, bounds, by_auc):
    """Whether variant g's value that decides the choice moved between the stores: its select
    AUC at all (reported, never bounded), or its select-split Δ% beyond the forward bound."""
    if by_auc:
        return va[g].get("select_auc") != vb[g].get("select_auc")
    x, y = va[g].get("select_delta_pct"), vb[g].get("select_delta_pct")
    limit = bounds.select_tie(va[g], x) if isinstance(x, (int, float)) else None
    return limit is None or not isinstance(y, (int, float)) or abs(x - y) > 2 * limit


def moved_flip(tables_a, tables_b, row, bounds, by_auc):
    """Whether the choice for row's layer differs because the value deciding it (the select AUC
    when `by_auc`, else the select-split Δ%) moved for some variant between the stores, each
    store having chosen the best variant by its own values (select_by delta: lowest Δ%; auc:
    highest AUC; auc_pick: highest AUC)."""
    va, vb = variants_of(tables_a, row), variants_of(tables_b, row)
    if not va or set(va) != set(vb) or not any(moved(va, vb, g, bounds, by_auc) for g in va):
        return False
    for v in (va, vb):
        chosen = [r for r in v.values() if r.get("selected") == 1]
        picked = [r for r in v.values() if r.get("auc_pick") == 1]
        if len(chosen) != 1 or len(picked) != 1 or picked[0]["select_auc"] != best(v, "select_auc", True):
            return False
        by_delta = chosen[0]["select_delta_pct"] == best(v, "select_delta_pct", False)
        by_auc = chosen[0] is picked[0]
        if not {"delta": by_delta, "auc": by_auc}.get(bounds.select_by, by_delta or by_auc):
            return False
    return True


def tie(tables_a, tables_b, row, bounds):
    """Whether the variants the two stores chose for row's (model, corpus, layer) are within the
    forward bound of each other's select-split Δ% in both stores (twice the bound: each store's
    own tie rule used its own select-split perplexity)."""
    key = (row.get("model"), row.get("corpus"), row.get("layer"))
    variants = [{r["gate"]: r for r in t.get("gates", []) if (r["model"], r["corpus"], r["layer"]) == key}
                for t in (tables_a, tables_b)]
    picked = [next((g for g, r in v.items() if r.get("selected") == 1), None) for v in variants]
    if None in picked:
        return False
    for v in variants:
        if not all(g in v for g in picked):
            return False
        x, y = (v[g]["select_delta_pct"] for g in picked)
        limit = bounds.select_tie(v[picked[0]], x)
        if limit is None or abs(x - y) > 2 * limit:
            return False
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--exact", action="store_true")
    ap.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    ap.add_argument("--json")
    ap.add_argument("--linsweep", help="linsweep binary, to read the tables when h5py is not importable")
    args = ap.parse_args()
    if h5py is None and not args.linsweep:
        print("gpu_compare_tables: h5py is not importable; pass --linsweep BIN", file=sys.stderr)
        sys.exit(2)
    read = tables_h5py if h5py is not None else (lambda s: tables_query(s, args.linsweep))
    keyed_a, keyed_b = read(args.a), read(args.b)
    ta = {name: rows for name, (keys, rows) in keyed_a.items()}
    tb = {name: rows for name, (keys, rows) in keyed_b.items()}
    if not ta:
        print(f"gpu_compare_tables: {args.a} has no tables", file=sys.stderr)
        sys.exit(2)
    if set(ta) != set(tb):
        print(f"gpu_compare_tables: tables differ: {sorted(ta)} vs {sorted(tb)}", file=sys.stderr)
        sys.exit(2)
    shapes = model_shapes(args.a)
    bounds = Bounds(shapes, args.dtype, gate_select_by(args.a))
    report, failures, ties, rows = {}, [], [], 0
    # Layers whose chosen gate differs by a near-tie: rows computed from the chosen gate
    # (gate_curve, compound) are then another gate's, listed rather than compared.
    chosen = [{(r["model"], r["corpus"], r["layer"]): r["gate"] for r in t.get("gates", []) if r.get("selected") == 1}
              for t in (ta, tb)]
    flipped = {k for k in chosen[0] if chosen[1].get(k, chosen[0][k]) != chosen[0][k]
               and (tie(ta, tb, dict(zip(("model", "corpus", "layer"), k)), bounds)
                    or moved_flip(ta, tb, dict(zip(("model", "corpus", "layer"), k)), bounds,
                                  bounds.select_by == "auc"))}
    for name in sorted(ta):
        a, b = ta[name], tb[name]
        keys = row_keys(keyed_a[name][0], a) if a else []
        ra = {tuple(r[k] for k in keys): r for r in a}
        rb = {tuple(r[k] for k in keys): r for r in b}
        if set(ra) != set(rb) or len(ra) != len(a) or len(rb) != len(b):
            print(f"gpu_compare_tables: {name}: rows differ ({len(a)} vs {len(b)}, keys {keys})", file=sys.stderr)
            sys.exit(2)
        rows += len(ra)
        values = [c for c in (a[0] if a else {}) if c not in keys and c != "unit"]
        for col in values:
            worst, where, gated = 0.0, None, False
            for k, x_row in ra.items():
                x, y = x_row[col], rb[k][col]
                near_tie = name in ("gate_curve", "compound") and not args.exact and any(
                    f[:2] == (x_row.get("model"), x_row.get("corpus")) and (name == "compound" or f[2] == x_row["layer"])
                    for f in flipped)
                if near_tie and x != y and col not in DECIDED:
                    ties.append(f"{name} {k} {col}: {x!r} vs {y!r} (the chosen gate differs: a near-tie or a moved hard-routed value)")
                    continue
                if x == y or (isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y)):
                    continue
                if args.exact:
                    failures.append(f"{name} {k} {col}: {x!r} vs {y!r} (bitwise equality expected)")
                    continue
                if col in DECIDED:
                    if tie(ta, tb, x_row, bounds):
                        ties.append(f"{name} {k} {col}: {x!r} vs {y!r} (a near-tie: within the forward bound)")
                    elif moved_flip(ta, tb, x_row, bounds, col == "auc_pick" or bounds.select_by == "auc"):
                        ties.append(f"{name} {k} {col}: {x!r} vs {y!r} (a variant's hard-routed select value moved; "
                                    "each store chose the best by its own values)")
                    else:
                        failures.append(f"{name} {k} {col}: {x!r} vs {y!r} (not a near-tie)")
                    continue
                if not isinstance(x, (int, float)) or not isinstance(y, (int, float)):
                    failures.append(f"{name} {k} {col}: {x!r} vs {y!r}")
                    continue
                err = abs(float(x) - float(y))
                limit = bounds.of(name, x_row, col, float(x))
                if limit is None:
                    rel = err / max(abs(float(x)), 1e-12)
                    if rel > worst:
                        worst, where = rel, k
                    continue
                gated = args.dtype == "float32"
                tol, relative = limit
                if relative:
                    err /= max(abs(float(x)), 1e-300)
                if err / tol > worst:
                    worst, where = err / tol, k
                if gated and err > tol:
                    failures.append(f"{name} {k} {col}: {x!r} vs {y!r} (difference {err:.3g} > bound {tol:.3g})")
            report[f"{name}.{col}"] = {"worst": worst, "measure": "difference / bound" if gated or (
                args.dtype == "bfloat16" and bounds.of(name, a[0], col, 0.0) is not None) else "relative difference",
                                       "where": repr(where) if where else None, "gated": gated or args.exact}
    ok = not failures
    summary = {"a": args.a, "b": args.b, "exact": args.exact, "dtype": args.dtype, "rows": rows, "ok": ok,
               "models": {m: list(s) for m, s in shapes.items()}, "failures": failures[:20], "ties": ties,
               "columns": report}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=2)
    worst = max((v["worst"] for v in report.values() if v["measure"] == "difference / bound"), default=0.0)
    print(f"gpu_compare_tables: {args.a} vs {args.b}: {len(ta)} tables, {rows} rows, "
          f"{'bitwise' if args.exact else args.dtype + ' bounds (numerics.md)'}: {'ok' if ok else 'FAILED'}; "
          f"worst difference / bound {worst:.3g}; {len(ties)} near-tie(s)")
    for line in failures[:20] + ties[:20]:
        print(f"  {line}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
