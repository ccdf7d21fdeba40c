#!/usr/bin/python3
"""Checks a store's `speed` units against its `compound` and `gate` units, with h5py and numpy
(no project code).

Usage: check_routed.py STORE
  speed:   per unit: the forwards plain, each of compound's layers alone (with more than one) and
           compound; the compound forward's PPL, Δ%, share routed and per-window NLL equal the
           compound unit's (same code, same batches, same binary and threads: bitwise,
           docs/numerics.md "Routed forward"), the plain forward's its ppl_base; each single
           layer's PPL and share equal the gates table's chosen row; predicted saving equals
           compound's total_flops_saved_pct (relative 1e-12); timings positive and ordered
           (min ≤ median ≤ max, low ≤ saving ≤ high, tokens/s = tokens / seconds); the machine
           and kernels recorded.
Exits 77 (skipped) without h5py and numpy.
"""
import json
import os
import sys

try:
    import h5py  # noqa: F401  (unit_files needs it)
    import numpy as np
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from unit_files import Unit, unit_paths  # noqa: E402

store = sys.argv[1]


def fail(msg):
    sys.exit(f"check_routed: FAIL: {msg}")


def rows_of(f, table):
    t = f[f"tables/{table}"][:]
    return [{k: (r[k].decode() if isinstance(r[k], bytes) else r[k].item()) for k in t.dtype.names} for r in t]


def units(kind):
    for path in unit_paths(store, kind):
        with Unit(path) as f:
            yield f, json.loads(f.attrs["params"])


def compound_units():
    """(model, corpus, layer_set) -> (compound row, provenance, {series: per-window NLL})."""
    out = {}
    for f, prov in units("compound"):
        (row,) = rows_of(f, "compound")
        key = f"arrays/nll/{row['model']}/{row['corpus']}/compound"
        nll = {s: f[f"{key}/{s}"][:] for s in ("base", "gated")}
        unit_id = f.attrs["unit_id"]
        out[(row["model"], row["corpus"], row["layer_set"])] = (row, prov, nll, unit_id.decode() if isinstance(unit_id, bytes) else unit_id)
    return out


def chosen_gates():
    """(model, corpus, layer) -> the gates table's chosen row."""
    out = {}
    for f, _ in units("gate"):
        for r in rows_of(f, "gates"):
            if r["selected"] == 1:
                out[(r["model"], r["corpus"], r["layer"])] = r
    return out


def check_speed():
    compound, gates, count = compound_units(), chosen_gates(), 0
    for f, prov in units("speed"):
        rows = sorted(rows_of(f, "speed"), key=lambda r: r["order"])
        model, corpus, layer_set = rows[0]["model"], rows[0]["corpus"], rows[0]["layer_set"]
        layers = prov["params"]["layers"]
        names = ["plain"] + ([f"layer {l}" for l in layers] if len(layers) > 1 and prov["params"]["per_layer"] else [])
        if [r["forward"] for r in rows] != names + ["compound"]:
            fail(f"speed {model}/{corpus}: forwards {[r['forward'] for r in rows]}")
        if (model, corpus, layer_set) not in compound:
            fail(f"speed {model}/{corpus}: no compound unit with layers {layer_set}")
        c, _, c_nll, _ = compound[(model, corpus, layer_set)]
        plain, routed = rows[0], rows[-1]
        if plain["ppl"] != c["ppl_base"] or routed["ppl"] != c["ppl"] or routed["delta_pct"] != c["delta_pct"]:
            fail(f"speed {model}/{corpus}: PPL {plain['ppl']}/{routed['ppl']} (Δ% {routed['delta_pct']}), compound "
                 f"{c['ppl_base']}/{c['ppl']} (Δ% {c['delta_pct']})")
        if routed["pct_linear"] != c["pct_linear"] or routed["routed_layers"] != c["layers"]:
            fail(f"speed {model}/{corpus}: share {routed['pct_linear']}, compound {c['pct_linear']}")
        if abs(routed["predicted_saving_pct"] - c["total_flops_saved_pct"]) > 1e-12 * abs(c["total_flops_saved_pct"]):
            fail(f"speed {model}/{corpus}: predicted {routed['predicted_saving_pct']}, compound {c['total_flops_saved_pct']}")
        key = f"arrays/nll/{model}/{corpus}/speed"
        if not (np.array_equal(f[f"{key}/plain"][:], c_nll["base"]) and np.array_equal(f[f"{key}/compound"][:], c_nll["gated"])):
            fail(f"speed {model}/{corpus}: per-window NLL differs from compound's")
        for r in rows[1:-1]:
            g = gates[(model, corpus, int(r["forward"].split()[1]))]
            if (r["ppl"], r["pct_linear"]) != (g["ppl"], g["pct_linear"]):
                fail(f"speed {model}/{corpus} {r['forward']}: PPL {r['ppl']} share {r['pct_linear']}, gate {g['ppl']} {g['pct_linear']}")
        for r in rows:
            ok = (0 < r["seconds_min"] <= r["seconds"] <= r["seconds_max"] and r["repeats"] == prov["params"]["repeats"]
                  and abs(r["tokens_per_s"] * r["seconds"] - r["tokens"]) <= 1e-9 * r["tokens"]
                  and r["saving_low"] <= r["saving_pct"] <= r["saving_high"] and r["machine"] and r["kernels"])
            if not ok:
                fail(f"speed {model}/{corpus} {r['forward']}: timing columns {r}")
        if plain["saving_pct"] != 0 or plain["predicted_saving_pct"] != 0:
            fail(f"speed {model}/{corpus}: the plain forward saves {plain['saving_pct']}%")
        count += 1
    return count


counts = {"speed": check_speed()}
if min(counts.values()) == 0:
    fail("nothing to check for " + ", ".join(k for k, v in counts.items() if v == 0))
print("check_routed: " + ", ".join(f"{v} {k}" for k, v in counts.items()) + " checked")
