#!/usr/bin/python3
"""Eager PyTorch GPT-2 used as the benchmark reference for `linsweep eval`.

make:  writes a random GPT-2-architecture HF directory (config.json + model.safetensors,
       written by hand: no safetensors package needed) and a random token stream (.npy).
run:   loads that directory into a plain eager PyTorch GPT-2 (the structure of HF's
       GPT2LMHeadModel: Conv1D, gelu_new, tied head), evaluates the same windows as
       `linsweep eval` and prints JSON with tokens/s and the perplexity.
"""
import argparse
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import int_options, write_safetensors  # noqa: E402


def make(args):
    torch.manual_seed(args.seed)
    d, L, V, P = args.d_model, args.layers, args.vocab, args.positions
    tensors = {"wte.weight": torch.randn(V, d) * 0.02, "wpe.weight": torch.randn(P, d) * 0.01}
    for i in range(L):
        p = f"h.{i}."
        tensors.update({
            p + "ln_1.weight": 1 + 0.1 * torch.randn(d), p + "ln_1.bias": 0.1 * torch.randn(d),
            p + "attn.c_attn.weight": torch.randn(d, 3 * d) * 0.02, p + "attn.c_attn.bias": torch.zeros(3 * d),
            p + "attn.c_proj.weight": torch.randn(d, d) * 0.02, p + "attn.c_proj.bias": torch.zeros(d),
            p + "ln_2.weight": 1 + 0.1 * torch.randn(d), p + "ln_2.bias": 0.1 * torch.randn(d),
            p + "mlp.c_fc.weight": torch.randn(d, 4 * d) * 0.02, p + "mlp.c_fc.bias": torch.zeros(4 * d),
            p + "mlp.c_proj.weight": torch.randn(4 * d, d) * 0.02, p + "mlp.c_proj.bias": torch.zeros(d),
        })
    tensors["ln_f.weight"] = torch.ones(d)
    tensors["ln_f.bias"] = torch.zeros(d)
    write_safetensors(f"{args.dir}/model.safetensors", [(name, tuple(t.shape)) for name, t in tensors.items()], "F32",
                      (t.float().contiguous().numpy().tobytes() for t in tensors.values()))
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": V, "n_positions": P,
              "n_embd": d, "n_layer": L, "n_head": args.heads, "n_inner": None, "activation_function": "gelu_new",
              "layer_norm_epsilon": 1e-5, "tie_word_embeddings": True, "eos_token_id": V - 1}
    with open(f"{args.dir}/config.json", "w") as f:
        json.dump(config, f, indent=1)
    rng = np.random.default_rng(args.seed)
    np.save(f"{args.dir}/tokens.npy", rng.integers(0, V, size=args.tokens, dtype=np.int32))


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        out[name] = torch.frombuffer(bytearray(data[a:b]), dtype=torch.float32).reshape(info["shape"])
    return out


class Conv1D(torch.nn.Module):
    def __init__(self, w, b):
        super().__init__()
        self.weight, self.bias = torch.nn.Parameter(w), torch.nn.Parameter(b)

    def forward(self, x):
        size_out = x.size()[:-1] + (self.weight.size(-1),)
        return torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight).view(size_out)


def gelu_new(x):  # HF's NewGELUActivation
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Block(torch.nn.Module):
    def __init__(self, w, p, d, heads):
        super().__init__()
        self.heads, self.d = heads, d
        self.ln_1 = torch.nn.LayerNorm(d, eps=1e-5)
        self.ln_2 = torch.nn.LayerNorm(d, eps=1e-5)
        for ln in ("ln_1", "ln_2"):
            getattr(self, ln).weight.data = w[p + ln + ".weight"]
            getattr(self, ln).bias.data = w[p + ln + ".bias"]
        self.c_attn = Conv1D(w[p + "attn.c_attn.weight"], w[p + "attn.c_attn.bias"])
        self.c_proj = Conv1D(w[p + "attn.c_proj.weight"], w[p + "attn.c_proj.bias"])
        self.c_fc = Conv1D(w[p + "mlp.c_fc.weight"], w[p + "mlp.c_fc.bias"])
        self.mlp_proj = Conv1D(w[p + "mlp.c_proj.weight"], w[p + "mlp.c_proj.bias"])

    def attn(self, x, mask):
        B, T, d = x.shape
        hd = d // self.heads
        q, k, v = self.c_attn(x).split(d, dim=2)
        q, k, v = (t.view(B, T, self.heads, hd).transpose(1, 2) for t in (q, k, v))
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(hd)
        w = torch.where(mask[:, :, :T, :T], w, torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype))
        w = torch.softmax(w, dim=-1)
        o = torch.matmul(w, v).transpose(1, 2).contiguous().view(B, T, d)
        return self.c_proj(o)

    def forward(self, h, mask):
        h = h + self.attn(self.ln_1(h), mask)
        return h + self.mlp_proj(gelu_new(self.c_fc(self.ln_2(h))))


class Gpt2(torch.nn.Module):
    def __init__(self, model_dir):
        super().__init__()
        cfg = json.load(open(f"{model_dir}/config.json"))
        w = load_safetensors(f"{model_dir}/model.safetensors")
        d, P = cfg["n_embd"], cfg["n_positions"]
        self.wte, self.wpe = w["wte.weight"], w["wpe.weight"]
        self.blocks = torch.nn.ModuleList(Block(w, f"h.{i}.", d, cfg["n_head"]) for i in range(cfg["n_layer"]))
        self.ln_f = torch.nn.LayerNorm(d, eps=1e-5)
        self.ln_f.weight.data, self.ln_f.bias.data = w["ln_f.weight"], w["ln_f.bias"]
        self.register_buffer("mask", torch.tril(torch.ones(P, P, dtype=torch.bool)).view(1, 1, P, P))

    def forward(self, ids):
        h = self.wte[ids] + self.wpe[torch.arange(ids.size(1))]
        for b in self.blocks:
            h = b(h, self.mask)
        return self.ln_f(h) @ self.wte.t()


def run(args):
    torch.set_num_threads(args.threads)
    model = Gpt2(args.dir).eval()
    stream = torch.from_numpy(np.load(f"{args.dir}/tokens.npy").astype(np.int64))
    T = args.context
    n = (args.tokens // T)
    windows = stream[: n * T].view(n, T)
    nll_sum = 0.0
    with torch.inference_mode():
        t0 = time.perf_counter()
        for i in range(0, n, args.batch):
            ids = windows[i:i + args.batch]
            logp = torch.log_softmax(model(ids)[:, :-1].double(), dim=-1)
            nll_sum -= logp.gather(-1, ids[:, 1:].unsqueeze(-1)).sum().item()
        seconds = time.perf_counter() - t0
    scored = n * (T - 1)
    print(json.dumps({"tokens": n * T, "tokens_scored": scored, "nll_sum": nll_sum, "ppl": math.exp(nll_sum / scored),
                      "eval_seconds": seconds, "tokens_per_second": n * T / seconds, "threads": args.threads}))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["make", "run"])
    ap.add_argument("--dir", required=True)
    int_options(ap, d_model=512, layers=8, heads=8, vocab=50257, positions=1024, tokens=4096, context=512, batch=4,
                threads=2, seed=0)
    args = ap.parse_args()
    make(args) if args.command == "make" else run(args)


if __name__ == "__main__":
    sys.exit(main())
