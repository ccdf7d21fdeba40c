#!/usr/bin/python3
"""Recomputes a store's `experts` rows of one mixture-of-experts model with the independent float64
reference forward (tests/support/reference_zoo.py) and numpy, from docs/methods.md, "Experts":
each expert's routed fit rows, its centred ridge surrogate and R², the eval perplexity with that
expert alone replaced, and the router's shares and entropies; every value must agree with the
store's within float32 rounding (the bounds below, with the measured worst case printed).

Usage: check_experts.py BINARY STORE MODEL MODEL_DIR TOKENS_NPY CONTEXT LAMBDA FIT_START FIT_TOKENS
                        EVAL_START EVAL_TOKENS
"""
import json
import math
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import reference_zoo  # noqa: E402

# linsweep computes in float32 and the reference in float64: R² and entropies agree to float32
# rounding of the captured rows, Δ% to that of each window's NLL over a few layers.
# Measured on the decoder sweep's Qwen2-MoE: R² 1.4e-8, Δ% 5.3e-6 (points), PPL 5.2e-8 relative;
# shares are counts and agree exactly unless a router decision flips.
BOUNDS = {"r2": 1e-6, "rel_mse": 1e-6, "delta_pct": 5e-4, "share": 1e-12, "mean_weight": 1e-6,
          "router_entropy": 1e-6, "topk_entropy": 1e-6, "ppl_base": 1e-6}
RELATIVE = {"ppl_base"}  # compared as |a − b| / b


def windows(stream, start, tokens, context):
    n = tokens // context
    return torch.as_tensor(stream[start:start + n * context].reshape(n, context), dtype=torch.int64)


def entering(dec, ids, layer):
    """The stream entering `layer`, and routing of the layers before it recorded in dec.routing."""
    h = dec.embed(ids)
    for l in range(layer):
        h = dec.block(l, h, lambda x, mlp: mlp(x))
    return h


def window_nll(dec, ids, layer, h):
    """Per-window NLL sums of ids [W, T] from the stream h entering `layer`."""
    for l in range(layer, dec.c["num_hidden_layers"]):
        h = dec.block(l, h, lambda x, mlp: mlp(x))
    logp = torch.log_softmax(dec.logits(h), -1)
    return -logp[:, :-1].gather(-1, ids[:, 1:, None])[..., 0].sum(-1)


def prefix_of(dec, layer):
    return f"model.layers.{layer}." + ("block_sparse_moe." if dec.mt == "mixtral" else "mlp.")


def names_of(dec):
    return ("w1", "w3", "w2") if dec.mt == "mixtral" else ("gate_proj", "up_proj", "down_proj")


def fit_experts(dec, ids, layer, lam):
    """{expert: (W, b, r2, rel_mse, rows)} from the fit windows' rows routed to each expert."""
    x = dec.mlp_input(layer, entering(dec, ids, layer)).reshape(-1, dec.c["hidden_size"])
    r = dec.route(prefix_of(dec, layer), x)
    out = {}
    for e in range(r["router_logits"].shape[-1]):
        rows = (r["experts"] == e).any(-1)
        if not bool(rows.any()):
            continue
        xe = x[rows].numpy()
        ye = dec._gated(f"{prefix_of(dec, layer)}experts.{e}.", x[rows], names_of(dec)).numpy()
        mx, my = xe.mean(0), ye.mean(0)
        xc, yc = xe - mx, ye - my
        w = np.linalg.solve(xc.T @ xc + lam * np.eye(xc.shape[1]), xc.T @ yc)
        rss = ((yc - xc @ w) ** 2).sum()
        out[e] = (torch.as_tensor(w), torch.as_tensor(my - mx @ w), 1 - rss / (yc ** 2).sum(),
                  rss / (ye ** 2).sum(), int(rows.sum()))
    return out


def expected_rows(dec, fit_ids, eval_ids, layer, lam):
    fits = fit_experts(dec, fit_ids, layer, lam)
    h = entering(dec, eval_ids, layer)
    base = window_nll(dec, eval_ids, layer, h)
    r = dec.routing[layer]
    k, experts = r["experts"].shape[-1], r["router_logits"].shape[-1]
    chosen = r["experts"].reshape(-1, k)
    weights = r["weights"].reshape(-1, k)
    p = torch.softmax(r["router_logits"].reshape(-1, experts), -1)
    q = weights / weights.sum(-1, keepdim=True)
    entropy = float(-(torch.special.xlogy(p, p)).sum(-1).mean())
    topk_entropy = float(-(torch.special.xlogy(q, q)).sum(-1).mean())
    tokens = eval_ids.shape[0] * (eval_ids.shape[1] - 1)
    ppl_base = math.exp(float(base.sum()) / tokens)
    gated = dec._gated
    rows = {}
    for e in range(experts):
        mask = chosen == e
        row = {"share": float(mask.sum()) / chosen.numel(), "mean_weight": float(weights[mask].mean()),
               "router_entropy": entropy, "topk_entropy": topk_entropy, "ppl_base": ppl_base}
        if e in fits:
            w, b, r2, rel_mse, n = fits[e]
            target = f"{prefix_of(dec, layer)}experts.{e}."
            dec._gated = lambda prefix, x, names=None, t=target, g=gated, w=w, b=b: (
                x @ w + b if prefix == t else g(prefix, x, names) if names else g(prefix, x))
            replaced = window_nll(dec, eval_ids, layer, h)
            dec._gated = gated
            row.update(r2=r2, rel_mse=rel_mse, fit_rows=n,
                       delta_pct=100 * (math.exp(float(replaced.sum()) / tokens) / ppl_base - 1))
        rows[e] = row
    return rows


def main():
    binary, store, model, model_dir, tokens_npy = sys.argv[1:6]
    context, lam = int(sys.argv[6]), float(sys.argv[7])
    fit_start, fit_tokens, eval_start, eval_tokens = (int(v) for v in sys.argv[8:12])
    stored = [r for r in json.loads(subprocess.run([binary, "query", store, "experts", "--format", "json"],
                                                   capture_output=True, text=True, check=True).stdout)
              if r["model"] == model]
    assert stored, f"no experts rows of {model}"
    dec = reference_zoo.load(model_dir)
    stream = np.load(tokens_npy)
    fit_ids = windows(stream, fit_start, fit_tokens, context)
    eval_ids = windows(stream, eval_start, eval_tokens, context)
    worst = {k: 0.0 for k in BOUNDS}
    with torch.no_grad():
        for layer in sorted({r["layer"] for r in stored}):
            want = expected_rows(dec, fit_ids, eval_ids, layer, lam)
            for r in (r for r in stored if r["layer"] == layer):
                w = want[r["expert"]]
                assert r.get("fit_rows") == w.get("fit_rows", 0), (r, w)
                for key, bound in BOUNDS.items():
                    if key not in w:
                        continue
                    err = abs(r[key] - w[key]) / (abs(w[key]) if key in RELATIVE else 1)
                    worst[key] = max(worst[key], err)
                    assert err <= bound, f"layer {layer} expert {r['expert']}: {key} {r[key]} vs {w[key]} (bound {bound})"
    print(f"check_experts: {len(stored)} rows of {model} agree with the float64 reference; worst |difference|: " +
          ", ".join(f"{k} {v:.1e}" for k, v in worst.items()))


if __name__ == "__main__":
    main()
