#!/usr/bin/python3
"""Eager PyTorch side of bench/training_throughput.sh: the training loop linsweep's Trainer runs.

A GPT-2 written by hand (token + position embeddings; per block ln_1, fused qkv Linear(d, 3d),
causal attention softmax(q·kᵀ/√hd + mask)·v, output projection, ln_2, Linear(d, 4d),
gelu(approximate='tanh'), Linear(4d, d); final LayerNorm; head tied to the token embedding),
initialised like linsweep's build_model (normal 0.02, position embeddings 0.01), trained with
torch.optim.AdamW(lr 1e-3, weight_decay 0.01), clip_grad_norm_(1.0) and F.cross_entropy of
positions 0..T-2 predicting t+1, on windows of a seeded uniform random token stream in a
seeded order. Warm-up steps are not timed; prints JSON with tokens/s = steps × batch × context
/ seconds. --breakdown N times forward + loss, backward, clipping and AdamW apart afterwards.
"""
import argparse
import json
import math
import time

import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, d, heads, d_ff):
        super().__init__()
        self.heads = heads
        self.ln_1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.ln_2 = torch.nn.LayerNorm(d)
        self.fc = torch.nn.Linear(d, d_ff)
        self.fc_proj = torch.nn.Linear(d_ff, d)

    def attention(self, x, mask):
        B, T, d = x.shape
        hd = d // self.heads
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, hd).permute(2, 0, 3, 1, 4)  # each [B, H, T, hd]
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        probs = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        return self.proj((probs @ v).transpose(1, 2).reshape(B, T, d))

    def forward(self, h, mask):
        h = h + self.attention(self.ln_1(h), mask)
        return h + self.fc_proj(F.gelu(self.fc(self.ln_2(h)), approximate="tanh"))


class Gpt2(torch.nn.Module):
    def __init__(self, vocab, d, layers, heads, d_ff, positions):
        super().__init__()
        self.wte = torch.nn.Embedding(vocab, d)
        self.wpe = torch.nn.Embedding(positions, d)
        self.blocks = torch.nn.ModuleList(Block(d, heads, d_ff) for _ in range(layers))
        self.ln_f = torch.nn.LayerNorm(d)
        for name, p in self.named_parameters():
            if name.endswith("bias"):
                torch.nn.init.zeros_(p)
            elif "ln" not in name:
                torch.nn.init.normal_(p, 0.0, 0.01 if name == "wpe.weight" else 0.02)

    def forward(self, ids):
        T = ids.shape[1]
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
        h = self.wte(ids) + self.wpe(torch.arange(T))
        for block in self.blocks:
            h = block(h, mask)
        return self.ln_f(h) @ self.wte.weight.t()  # tied head


def main():
    ap = argparse.ArgumentParser()
    for name, default in (("threads", 2), ("warmup", 3), ("steps", 20), ("batch", 8), ("context", 128),
                          ("windows", 256), ("seed", 0), ("breakdown", 0)):
        ap.add_argument(f"--{name}", type=int, default=default)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    B, T, V = args.batch, args.context, 4096
    model = Gpt2(V, 192, 6, 6, 768, 1024)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    g = torch.Generator().manual_seed(args.seed)
    windows = torch.randint(0, V, (args.windows, T), generator=g)
    order = torch.cat([torch.randperm(args.windows, generator=g)
                       for _ in range((args.warmup + args.steps) * B // args.windows + 1)])

    def loss_of(ids):
        logits = model(ids)
        return F.cross_entropy(logits[:, :-1].reshape(-1, V), ids[:, 1:].reshape(-1))

    def step(s):
        ids = windows[order[s * B:(s + 1) * B]]
        opt.zero_grad(set_to_none=True)
        loss = loss_of(ids)
        value = loss.item()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return value

    first = None
    for s in range(args.warmup):
        loss = step(s)
        first = loss if first is None else first
    t0 = time.perf_counter()
    for s in range(args.warmup, args.warmup + args.steps):
        loss = step(s)
    seconds = time.perf_counter() - t0
    out = {"side": "python", "tokens_per_second": args.steps * B * T / seconds, "seconds": seconds,
           "steps": args.steps, "warmup": args.warmup, "batch": B, "context": T,
           "threads": torch.get_num_threads(), "parameters": sum(p.numel() for p in model.parameters()),
           "first_loss": first, "final_loss": loss, "torch": torch.__version__}
    if args.breakdown > 0:
        ids, parts = windows[:B], {"forward_s": 0.0, "backward_s": 0.0, "clip_s": 0.0, "adamw_s": 0.0}
        for _ in range(args.breakdown):
            opt.zero_grad(set_to_none=True)
            t = time.perf_counter()
            loss = loss_of(ids)
            loss.item()
            parts["forward_s"] += time.perf_counter() - t
            t = time.perf_counter()
            loss.backward()
            parts["backward_s"] += time.perf_counter() - t
            t = time.perf_counter()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            parts["clip_s"] += time.perf_counter() - t
            t = time.perf_counter()
            opt.step()
            parts["adamw_s"] += time.perf_counter() - t
        out["breakdown_steps"] = args.breakdown
        out.update({k: v / args.breakdown for k, v in parts.items()})
    print(json.dumps(out))


main()
