#!/usr/bin/python3
"""Checks the training experiments' stores (read with h5py only).

Usage: check_training.py STORE_A STORE_B MODE [LINSWEEP_BINARY SOURCE_DIR]
       check_training.py STORE steps0 SOURCE_DIR
MODE "exact": B (interrupted with SIGKILL and resumed) must hold exactly A's rows in the
progressive, finetune, training_loss and soft_gates tables (bitwise floats), B's journal
must show a unit resumed from a checkpoint, and the exported weights must be equal bytes.
MODE "same": the same as "exact" without the resume (B ran otherwise, e.g. over stages).
MODE "close": B (another worker-group size) must hold the same rows with PPL and losses within
the training bound of docs/numerics.md (tests/support/numerics.py: 3 forward bounds per step). Both modes also check A on its own: a training_loss row for every step of
every unit, the loss lower at the end than at the start, a control beside every finetune
variant and every progressive unit, progressive's post_lin rows (the model right after each
replacement), its order (cheapest first by the store's all_linear Δ% on the select split when it has one), its
first refitted surrogate against the fit unit's (the same untouched model and data), and
(with the binary) `linsweep eval` of an exported model reproducing the unit's last PPL.
MODE "steps0": STORE ran progressive with steps_per_layer 0, so the model that replaces layer
k is the untouched one with the earlier layers replaced. With refitted surrogates each must be
the ridge fit (λ of the unit) of that model's MLP activations on the fit split computed by
tests/support/reference_forward.py (float64, no project code); with frozen ones, the fit
unit's; and every post_lin row's PPL must be the reference's with those layers replaced.
"""
import json
import os
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from numerics import forward_bound, model_shapes, training_bound  # noqa: E402
from unit_files import Unit, unit_paths  # noqa: E402

# A table's rows are keyed by its stored `keys` attribute (docs/store.md); the training tables
# are those keyed by a step.


def stored_keys(f, table):
    return tuple(dec(f[f"tables/{table}"].attrs["keys"]).split(","))


def training_tables(store):
    with h5py.File(f"{store}/store.h5", "r") as f:
        return [name for name in f["tables"] if name != "units" and "step" in stored_keys(f, name)]


def dec(v):
    return v.decode() if isinstance(v, bytes) else v


def rows_all(store, table):
    with h5py.File(f"{store}/store.h5", "r") as f:
        return f[f"tables/{table}"][:] if f"tables/{table}" in f else []


def rows(store, table):
    with h5py.File(f"{store}/store.h5", "r") as f:
        if f"tables/{table}" not in f:
            return {}
        keys = stored_keys(f, table)
        t = f[f"tables/{table}"][:]
    return {tuple(dec(r[k]) for k in keys): r for r in t}


def progressive_units(store):
    """(unit, params) of every progressive unit that linearizes (not the controls)."""
    for path in unit_paths(store, "progressive"):
        u = Unit(path)
        p = json.loads(u.attrs["params"])["params"]
        if p["variant"] == "progressive":
            yield u, p


def refitted(u, model, corpus, layer):
    key = f"arrays/progressive/{model}/{corpus}/layer{layer}"
    return u[f"{key}/W"][:], u[f"{key}/b"][:]


def check_progressive(store):
    pr = rows(store, "progressive")
    assert pr, f"{store}: no progressive rows"
    al = rows_all(store, "all_linear")
    for model in sorted({k[0] for k in pr}):
        assert any(k[:2] == (model, "control") for k in pr), f"{model}: no progressive control"
        mine = sorted((k for k in pr if k[:2] == (model, "progressive") and k[3] == "stream-a"), key=lambda k: k[2])
        final = pr[max(mine, key=lambda k: (k[2], k[4] == "final"))]
        order = [int(v) for v in dec(final["layers"]).split(",")]
        post = [pr[k] for k in mine if k[4].startswith("post_lin layer ")]
        assert [dec(r["phase"]) for r in post] == [f"post_lin layer {l}" for l in order], (model, post)
        assert [int(r["n_linear"]) for r in post] == list(range(1, len(order) + 1)), model
        if len(al):
            # Chosen on the select split; eval's Δ% only reports.
            delta = {int(r["layer"]): float(r["select_delta_pct"]) for r in al if dec(r["model"]) == model and dec(r["corpus"]) == "stream-a"}
            assert order == sorted(order, key=lambda l: delta[l]), f"{model}: order {order} is not cheapest first by {delta}"
        print(f"{model}: progressive order {order}, {len(post)} post_lin rows, a control")
    # The first replacement refits on the untouched model and the fit split: the fit unit's surrogate.
    for u, p in progressive_units(store):
        prov = json.loads(u.attrs["params"])
        t = u["tables/progressive"][:]
        model, first = dec(t["model"][0]), int(dec(t["layers"][-1]).split(",")[0])
        w, b = refitted(u, model, "stream-a", first)
        fit = Unit(f"{store}/units/{prov['deps'][0]}.h5")
        key = f"arrays/surrogates/{model}/stream-a/layer{first}/lambda={p['lambda']:g}"
        fw, fb = fit[f"{key}/W"][:], fit[f"{key}/b"][:]
        rel = max(np.abs(w - fw).max() / np.abs(fw).max(), np.abs(b - fb).max() / np.abs(fb).max())
        print(f"{model}: refitted surrogate of layer {first} (step 0) vs the fit unit's: relative {rel:.2e}")
        assert rel < 1e-6, (model, first, rel)


def check_steps0(store, src):
    import math

    import torch
    from reference_forward import ReferenceModel, nll_sum, ridge
    shapes, checked = model_shapes(store), set()
    stream = np.load(f"{src}/tests/data/models/tiny-gpt2.tokens.npy").astype(np.int64)

    def windows(split, ctx):
        n = split["tokens"] // ctx
        return torch.from_numpy(stream[split["start"]:split["start"] + n * ctx].reshape(n, ctx))

    for u, p in progressive_units(store):
        assert p["steps_per_layer"] == 0, f"{store}: this check needs steps_per_layer 0"
        prov, t = json.loads(u.attrs["params"]), u["tables/progressive"][:]
        model, order = dec(t["model"][0]), [int(v) for v in dec(t["layers"][-1]).split(",")]
        ref, ctx, lam = ReferenceModel(f"{src}/tests/data/models/{model}"), p["context"], p["lambda"]
        if p["surrogates"] == "refit":
            used = {l: refitted(u, model, "stream-a", l) for l in order}
        else:
            fit = Unit(f"{store}/units/{prov['deps'][0]}.h5")
            key = f"arrays/surrogates/{model}/stream-a/layer{{}}/lambda={lam:g}"
            used = {l: (fit[key.format(l) + "/W"][:], fit[key.format(l) + "/b"][:]) for l in order}
            assert u.arrays is None or "arrays/progressive" not in u.arrays, "frozen surrogates stored as refitted"
        used = {l: tuple(torch.from_numpy(a) for a in wb) for l, wb in used.items()}
        fit_ids = windows(p["fit"], ctx) if p["surrogates"] == "refit" else None
        eval_ids = windows(next(e["split"] for e in p["eval"] if e["corpus"] == "stream-a"), ctx)
        for k, layer in enumerate(order):
            if p["surrogates"] == "refit":
                # The model that refits layer k: untouched, earlier layers replaced (no steps).
                ref.affine, ref.capture = {l: used[l] for l in order[:k]}, {layer: []}
                with torch.no_grad():
                    ref.forward(fit_ids)
                x, y = (torch.cat([pair[i] for pair in ref.capture[layer]]) for i in (0, 1))
                x, y = x.reshape(-1, x.shape[-1]), y.reshape(-1, y.shape[-1])
                rw, rb = ridge(x, y, lam)
                w, b = used[layer]
                # Normwise backward error of ours in the reference's normal equations: ours
                # solved them from float32 activations, each within one forward bound ε of the
                # reference's (relative), so XcᵀXc and XcᵀYc within 2ε: η ≤ 4ε covers both.
                xc, yc = x - x.mean(0), y - y.mean(0)
                a, rhs = xc.T @ xc + lam * torch.eye(x.shape[1], dtype=x.dtype), xc.T @ yc
                eta = ((a @ w - rhs).norm() / (a.norm() * w.norm() + rhs.norm())).item()
                tol = 4 * forward_bound(shapes[model], 0.0)
                bias = ((b - (y.mean(0) - x.mean(0) @ w)).abs().max() / y.abs().max()).item()
                pred = ((x @ (w - rw) + (b - rb)).abs().max() / y.abs().max()).item()
                print(f"{model}: step {k}, layer {layer}: refitted surrogate in the reference's normal equations: "
                      f"backward error {eta:.2e} (bound {tol:.2e}), bias {bias:.2e}; predictions vs its ridge "
                      f"fit {pred:.2e} of max |Y|")
                assert eta < tol and bias < tol, (model, layer, eta, bias, tol)
            # The post_lin row: the reference's eval PPL with layers order[:k+1] replaced.
            ref.affine, ref.capture = {l: used[l] for l in order[:k + 1]}, {}
            with torch.no_grad():
                _, logits = ref.forward(eval_ids)
            nll = nll_sum(logits, eval_ids) / (eval_ids.shape[0] * (ctx - 1))
            row = t[(t["phase"] == f"post_lin layer {layer}".encode()) & (t["corpus"] == b"stream-a")][0]
            diff, tol = abs(math.log(row["ppl"]) - nll), forward_bound(shapes[model], nll)
            print(f"{model} ({p['surrogates']}): post_lin layer {layer}: PPL {row['ppl']:.6f}, reference "
                  f"{math.exp(nll):.6f}, |Δ NLL| {diff:.2e} (bound {tol:.2e})")
            assert diff < tol, (model, layer, diff, tol)
        checked.add(p["surrogates"])
    assert checked, f"{store}: no progressive unit"
    return checked


def check_alone(store, binary, src):
    loss = rows(store, "training_loss")
    assert loss, f"{store}: no training_loss rows"
    units = {}
    for key in loss:
        units.setdefault(key[:3], []).append(key[3])
    for unit, steps in units.items():
        steps.sort()
        assert steps == list(range(1, len(steps) + 1)), f"{unit}: training_loss rows are not steps 1..N: {steps}"
        values = [float(loss[unit + (s,)]["loss"]) for s in steps]
        third = max(1, len(values) // 3)
        first, last = np.mean(values[:third]), np.mean(values[-third:])
        assert last < first, f"{unit}: loss did not go down ({first:.4f} -> {last:.4f})"
        print(f"{'/'.join(unit)}: {len(steps)} steps, loss {first:.4f} -> {last:.4f}")
    check_progressive(store)
    ft = rows(store, "finetune")
    variants = {(k[0], k[1]) for k in ft}
    for model, variant in variants:
        assert (model, "control") in variants, f"{model}/{variant}: no control"
        # The paper's "0 (post-lin)": the linearized model before any step, beside the untouched one.
        post = [k for k in ft if k[:2] == (model, variant) and k[4] == "post_lin"]
        if variant == "control":
            assert not post, f"{model}/control: a post_lin row"
            continue
        assert post and all(k[2] == 0 for k in post), f"{model}/{variant}: no post_lin row at step 0"
        for k in post:
            start = ft[k[:4] + ("start",)]
            assert ft[k]["n_linear"] > 0 and start["n_linear"] == 0, f"{k}: post_lin is not the linearized model"
            assert ft[k]["ppl_base"] == start["ppl_base"], f"{k}: a different base"
    gates = rows(store, "soft_gates")
    if any(v == "two_phase" for _, v in variants):
        assert gates, "two_phase ran but soft_gates is empty"
        for r in gates.values():
            assert 0 <= r["mean_gate"] <= 1 and abs(r["effective_linear"] - (1 - r["mean_gate"])) < 1e-12
    if binary:
        # The exported linearized model, loaded as a plain HF directory, scores the eval split
        # as the unit's last evaluation did.
        for model, variant in sorted(variants):
            if variant == "two_phase":
                continue
            directory = f"{store}/models/{model}.{variant}"
            assert os.path.isfile(f"{directory}/model.safetensors"), f"{directory}: no export"
            mine = [k for k in ft if k[:2] == (model, variant) and k[3] == "stream-a"]
            last = max(mine, key=lambda k: (k[2], k[4] not in ("start", "post_lin")))
            want = float(ft[last]["ppl"])
            out = subprocess.run([binary, "eval", "--model", directory, "--corpus", f"{src}/tests/data/models/tiny-gpt2.tokens.npy",
                                  "--format", "npy", "--start", "2560", "--tokens", "1024", "--context", "32", "--json"],
                                 check=True, capture_output=True, text=True).stdout
            got = json.loads(out)["ppl"]
            rel = abs(got - want) / want
            print(f"{directory}: eval PPL {got:.6f}, unit's last PPL {want:.6f}, relative {rel:.2e}")
            assert rel < 1e-5, f"{directory}: exported model's PPL {got} differs from {want}"


def main():
    if sys.argv[2] == "steps0":
        check_steps0(sys.argv[1], sys.argv[3])
        return
    a, b, mode = sys.argv[1:4]
    binary, src = (sys.argv[4], sys.argv[5]) if len(sys.argv) > 5 else (None, None)
    check_alone(a, binary, src)
    shapes = model_shapes(a)
    worst = 0.0
    tables = training_tables(a)
    assert len(tables) >= 4 and set(tables) == set(training_tables(b)), (tables, training_tables(b))
    for table in tables:
        ra, rb = rows(a, table), rows(b, table)
        assert set(ra) == set(rb), f"{table}: different rows ({len(ra)} vs {len(rb)})"
        for key, r in ra.items():
            for col in r.dtype.names:
                if col == "unit":
                    continue
                x, y = r[col], rb[key][col]
                if isinstance(x, (bytes, str)) or np.issubdtype(type(x), np.integer):
                    assert dec(x) == dec(y), f"{table} {key} {col}: {x} vs {y}"
                elif mode in ("exact", "same"):
                    assert (np.isnan(x) and np.isnan(y)) or x == y, f"{table} {key} {col}: {x!r} vs {y!r}"
                elif not (np.isnan(x) and np.isnan(y)):
                    rel = abs(x - y) / max(abs(x), 1e-12)
                    if col in ("ppl", "ppl_base", "loss", "train_loss"):
                        model = dec(r["model"])
                        assert model in shapes, f"{a}: no config.json found for {model} (run.json)"
                        nll = float(np.log(x)) if col.startswith("ppl") else float(x)
                        tol = training_bound(shapes[model], nll, int(r["step"]))
                        worst = max(worst, rel / tol)
                        assert rel < tol, f"{table} {key} {col}: {x} vs {y} (relative {rel:.3g} > bound {tol:.3g})"
        print(f"{table}: {len(ra)} rows " + ("agree" if mode == "close" else "identical"))
    if mode == "exact":
        with open(f"{b}/journal.jsonl") as f:
            events = [json.loads(line) for line in f if line.strip()]
        resumed = [e for e in events if e.get("event") == "resumed"]
        assert resumed, f"{b}: no unit resumed from a checkpoint"
        for e in resumed:
            print(f"resumed: {e['unit']} {e.get('error', '')}")
    if mode in ("exact", "same"):
        exported = sorted(os.listdir(f"{a}/models")) if os.path.isdir(f"{a}/models") else []  # none: save_model off
        assert exported == (sorted(os.listdir(f"{b}/models")) if os.path.isdir(f"{b}/models") else []), "exports differ"
        for d in exported:
            wa, wb = f"{a}/models/{d}/model.safetensors", f"{b}/models/{d}/model.safetensors"
            with open(wa, "rb") as fa, open(wb, "rb") as fb:
                assert fa.read() == fb.read(), f"{d}: exported weights differ"
        print(f"exported weights: {len(exported)} models byte-identical")
    else:
        print(f"worst relative difference of PPL/loss over its bound: {worst:.2e}")


if __name__ == "__main__":
    main()
