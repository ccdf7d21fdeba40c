"""The paper's per-layer method in eager PyTorch, the peer of bench/sweep_vs_paper.sh.

For every layer l of a GPT-2 checkpoint written by gpt2_reference.py: one forward pass of the
whole model over the fit windows that keeps layer l's MLP input X (after ln_2) and output Y, a
centred ridge fit in float64 (W = (XcᵀXc + λI)⁻¹XcᵀYc, b = ȳ − x̄W, docs/methods.md
"Surrogate"), and one forward pass over the eval windows with that MLP replaced by X·W + b.
One more pass gives the untouched model's perplexity. So 2·L + 1 full passes, the way the
paper's scripts measure a layer at a time (code/ in pbalogh/half-the-nonlinearity).

Prints one JSON object: base PPL, every layer's Δ% = 100·(PPL_lin/PPL_base − 1), seconds.
Usage: paper_sweep.py --dir MODEL_DIR --fit START:TOKENS --eval START:TOKENS --context T
       --lam LAMBDA --batch B --threads N
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_reference import Gpt2, gelu_new  # noqa: E402


def windows(stream, split, T):
    start, tokens = (int(v) for v in split.split(":"))
    n = tokens // T
    return stream[start:start + n * T].view(n, T)


def forward(model, ids, layer=None, mlp=None):
    """Logits of `ids`; block `layer` uses `mlp(x)` on its ln_2 output instead of its MLP."""
    h = model.wte[ids] + model.wpe[torch.arange(ids.size(1))]
    for i, b in enumerate(model.blocks):
        h = h + b.attn(b.ln_1(h), model.mask)
        x = b.ln_2(h)
        h = h + (mlp(x) if i == layer else b.mlp_proj(gelu_new(b.c_fc(x))))
    return model.ln_f(h) @ model.wte.t()


def ppl(model, wins, batch, layer=None, mlp=None):
    nll, count = 0.0, 0
    for i in range(0, wins.size(0), batch):
        ids = wins[i:i + batch]
        logp = torch.log_softmax(forward(model, ids, layer, mlp)[:, :-1].double(), dim=-1)
        nll -= logp.gather(-1, ids[:, 1:].unsqueeze(-1)).sum().item()
        count += ids.size(0) * (ids.size(1) - 1)
    return math.exp(nll / count)


def capture(model, wins, batch, layer):
    """X and Y of `layer`'s MLP at every position of `wins`, from full forward passes."""
    xs, ys = [], []

    def keep(x):
        y = model.blocks[layer].mlp_proj(gelu_new(model.blocks[layer].c_fc(x)))
        xs.append(x.reshape(-1, x.size(-1)).double())
        ys.append(y.reshape(-1, y.size(-1)).double())
        return y

    for i in range(0, wins.size(0), batch):
        forward(model, wins[i:i + batch], layer, keep)
    return torch.cat(xs), torch.cat(ys)


def ridge(x, y, lam):
    xm, ym = x.mean(0), y.mean(0)
    xc, yc = x - xm, y - ym
    w = torch.linalg.solve(xc.T @ xc + lam * torch.eye(x.size(1), dtype=x.dtype), xc.T @ yc)
    return w.float(), (ym - xm @ w).float()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--fit", required=True)
    ap.add_argument("--eval", required=True)
    ap.add_argument("--context", type=int, required=True)
    ap.add_argument("--lam", type=float, required=True)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    model = Gpt2(args.dir).eval()
    stream = torch.from_numpy(np.load(f"{args.dir}/tokens.npy").astype(np.int64))
    fit, ev = windows(stream, args.fit, args.context), windows(stream, args.eval, args.context)
    deltas = []
    with torch.inference_mode():
        base = ppl(model, ev, args.batch)
        for layer in range(len(model.blocks)):
            w, b = ridge(*capture(model, fit, args.batch, layer), args.lam)
            lin = ppl(model, ev, args.batch, layer, lambda x: torch.addmm(b, x.reshape(-1, x.size(-1)), w).view(x.shape))
            deltas.append(100 * (lin / base - 1))
    print(json.dumps({"ppl_base": base, "delta_pct": deltas, "seconds": time.perf_counter() - t0,
                      "passes": 2 * len(deltas) + 1, "torch": torch.__version__, "threads": args.threads}))


if __name__ == "__main__":
    main()
