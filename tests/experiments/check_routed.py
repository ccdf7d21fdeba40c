#!/usr/bin/python3
"""Checks a store's `speed` units against its `compound` and `gate` units, and the routed models
`linsweep export` wrote from it, with h5py and numpy (no project code).

Usage: check_routed.py STORE EXPORTS_DIR   (EXPORTS_DIR/<model>.<corpus>/routed.{json,safetensors})
  speed:   per unit: the forwards plain, each of compound's layers alone (with more than one) and
           compound; the compound forward's PPL, Δ%, share routed and per-window NLL equal the
           compound unit's (same code, same batches, same binary and threads: bitwise,
           docs/numerics.md "Routed forward"), the plain forward's its ppl_base; each single
           layer's PPL and share equal the gates table's chosen row; predicted saving equals
           compound's total_flops_saved_pct (relative 1e-12); timings positive and ordered
           (min ≤ median ≤ max, low ≤ saving ≤ high, tokens/s = tokens / seconds); the machine
           and kernels recorded.
  decode:  per speed unit, one speed_decode row per decode batch size, on compound's layer set:
           pairs within the unit's bounds (at least decode_min_pairs unless capped), the interval
           around the saving, tokens/s positive, the predicted saving 100·(1 − routed/plain bytes)
           and the roofline bandwidth / plain bytes from the row's own columns, at batch 1 a
           routed share > 0 predicting a saving, the load and machine recorded.
  export:  routed.json names the compound unit's layers, λ and gate variants; each surrogate is
           the fit unit's W and b rounded to float32, bit for bit; each gate tensor is the gate
           unit's stored chosen array; the gate computed by docs/methods.md's formula from the
           exported tensors alone routes the captured eval X of its layer at the gates table's
           share (rows within the float16 capture's bound of the threshold may fall either way).
Exits 77 (skipped) without h5py and numpy.
"""
import json
import os
import struct
import sys

try:
    import h5py  # noqa: F401  (unit_files needs it)
    import numpy as np
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from unit_files import Unit, unit_paths  # noqa: E402

store, exports = sys.argv[1], sys.argv[2]


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


def check_decode():
    count = 0
    for f, prov in units("speed"):
        params = prov["params"]
        if not params["decode"]:
            continue
        rows = sorted(rows_of(f, "speed_decode"), key=lambda r: r["batch"])
        (layer_set,) = {r["layer_set"] for r in rows_of(f, "speed")}
        if [r["batch"] for r in rows] != sorted(params["decode_batches"]):
            fail(f"speed_decode: batches {[r['batch'] for r in rows]}, asked {params['decode_batches']}")
        for r in rows:
            what = f"speed_decode {r['model']}/{r['corpus']} batch {r['batch']}"
            close = lambda a, b: abs(a - b) <= 1e-9 * max(1.0, abs(b))
            ok = (r["layer_set"] == layer_set and r["routed_layers"] == len(params["layers"])
                  and r["prompt_tokens"] == params["decode_prompt"] and r["new_tokens"] == params["decode_new"]
                  and 1 <= r["pairs"] <= params["decode_max_pairs"]
                  and (r["pairs"] >= params["decode_min_pairs"] or r["capped"] == 1)
                  and (r["pairs"] < 2 or r["saving_low"] <= r["saving_pct"] <= r["saving_high"])
                  and r["plain_tokens_per_s"] > 0 and r["routed_tokens_per_s"] > 0 and r["seconds"] > 0
                  and 0 <= r["pct_routed"] <= 100 and 0 <= r["same_tokens_pct"] <= 100
                  and r["plain_bytes_per_token"] > 0 and r["routed_bytes_per_token"] > 0
                  and close(r["predicted_saving_pct"], 100 * (1 - r["routed_bytes_per_token"] / r["plain_bytes_per_token"]))
                  and r["bandwidth_gb_s"] > 0
                  and close(r["roofline_tokens_per_s"], r["bandwidth_gb_s"] * 1e9 / r["plain_bytes_per_token"])
                  and r["ppl_plain_text"] > 0 and r["ppl_routed_text"] > 0
                  and close(r["text_delta_pct"], 100 * (r["ppl_routed_text"] / r["ppl_plain_text"] - 1))
                  and r["load_before"] >= 0 and r["load_after"] >= 0 and r["cpu_share"] > 0
                  and r["machine"] and r["kernels"] and r["dtype"] == "float32")
            if not ok:
                fail(f"{what}: columns {r}")
            if r["batch"] == 1 and r["pct_routed"] > 0 and not r["predicted_saving_pct"] > 0:
                fail(f"{what}: {r['pct_routed']}% routed at batch 1 predicts no saving")
            count += 1
    return count


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    types = {"F32": np.float32, "F64": np.float64}
    return {name: np.frombuffer(raw[8 + n + t["data_offsets"][0]:8 + n + t["data_offsets"][1]],
                                dtype=types[t["dtype"]]).reshape(t["shape"])
            for name, t in header.items() if name != "__metadata__"}


def logit(t, p, x):
    """docs/methods.md, "Exported routed model", from the exported tensors alone; and per row how
    far the live float32 X's logit can be from the float16-captured row's (as check_references.py)."""
    s = (x - t[p + "gate.scaler.mean"]) / t[p + "gate.scaler.scale"]
    scale = t[p + "gate.scaler.scale"]
    if p + "gate.mlp.P" in t:
        P, v = t[p + "gate.mlp.P"], t[p + "gate.mlp.v"]
        z, sens = np.maximum(s @ P.T, 0) @ v + t[p + "gate.mlp.c"][0], np.abs(P).T @ np.abs(v)
    elif p + "gate.pca.components" in t:
        C, w = t[p + "gate.pca.components"], t[p + "gate.logistic.weight"]
        z, sens = ((s - t[p + "gate.pca.mean"]) @ C.T) @ w + t[p + "gate.logistic.bias"][0], np.abs(C).T @ np.abs(w)
    else:
        w = t[p + "gate.logistic.weight"]
        z, sens = s @ w + t[p + "gate.logistic.bias"][0], np.abs(w)
    return z, 1.01 * ((np.abs(x) * 2.0**-11 + 2.0**-25) @ (sens / scale)) + 1e-9


def captured_eval(capture_id, layer):
    with Unit(f"{store}/units/{capture_id}.h5") as u:
        n = int(u["arrays/capture/parts"][0])
    xs = []
    for part in range(n):
        with h5py.File(f"{store}/activations/{capture_id}/eval/layer{layer}.part{part}.h5", "r") as f:
            xs.append(f["X"][:].astype(np.float64))
    return np.concatenate(xs)


def check_export():
    compound, gates, count = compound_units(), chosen_gates(), 0
    for name in sorted(os.listdir(exports)):
        with open(f"{exports}/{name}/routed.json") as f:
            index = json.load(f)
        t = read_safetensors(f"{exports}/{name}/{index['tensors']}")
        model, corpus = index["model"], index["corpus"]
        found = [v for k, v in compound.items() if k[:2] == (model, corpus) and v[3] == index["compound_unit"]]
        if len(found) != 1:
            fail(f"export {name}: {index['compound_unit']} is not a committed compound unit of {model}/{corpus}")
        (row, prov, _, unit_id), = found
        params = prov["params"]
        if [r["layer"] for r in index["routed_layers"]] != params["layers"] or index["lambda"] != params["lambda"]:
            fail(f"export {name}: layers/λ {index['routed_layers']} {index['lambda']}, compound {params}")
        if index["compound_unit"] != unit_id or index["compound"]["delta_pct"] != row["delta_pct"]:
            fail(f"export {name}: compound row {index['compound']}")
        with Unit(f"{store}/units/{prov['deps'][0]}.h5") as fit:
            for r in index["routed_layers"]:
                group = f"arrays/surrogates/{model}/{corpus}/layer{r['layer']}"
                (key,) = [f"{group}/{k}" for k in fit[group] if k.startswith("lambda=")
                          and float(k[len("lambda="):]) == params["lambda"]]
                W, b = fit[f"{key}/W"][:].astype(np.float32), fit[f"{key}/b"][:].astype(np.float32)
                p = r["prefix"]
                if not (np.array_equal(t[p + "surrogate.weight"], W.reshape(t[p + "surrogate.weight"].shape))
                        and np.array_equal(t[p + "surrogate.bias"], b.reshape(-1))):
                    fail(f"export {name}: layer {r['layer']}'s surrogate is not the fit's, rounded to float32")
        for k, r in enumerate(index["routed_layers"]):
            layer, p = r["layer"], r["prefix"]
            with Unit(f"{store}/units/{prov['deps'][1 + k]}.h5") as g:
                gkey = f"arrays/gates/{model}/{corpus}/layer{layer}/chosen"
                for tensor, stored in ((n, n[len(p) + 5:].replace(".", "/")) for n in t if n.startswith(p + "gate.")):
                    if not np.array_equal(t[tensor], g[f"{gkey}/{stored}"][:].reshape(t[tensor].shape)):
                        fail(f"export {name}: {tensor} is not the stored {gkey}/{stored}")
                gate_prov = json.loads(g.attrs["params"])
            z, band = logit(t, p, captured_eval(gate_prov["deps"][0], layer))
            lo, hi = 100 * np.mean(z - band > 0), 100 * np.mean(z + band > 0)
            share = gates[(model, corpus, layer)]["pct_linear"]
            if not lo - 1e-9 <= share <= hi + 1e-9:
                fail(f"export {name} layer {layer}: the formula routes {lo:.3f}..{hi:.3f}%, the gate {share:.3f}%")
        count += 1
    return count


counts = {"speed": check_speed(), "decode": check_decode(), "export": check_export()}
if min(counts.values()) == 0:
    fail("nothing to check for " + ", ".join(k for k, v in counts.items() if v == 0))
print("check_routed: " + ", ".join(f"{v} {k}" for k, v in counts.items()) + " checked")
