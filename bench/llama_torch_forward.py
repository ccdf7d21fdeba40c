#!/usr/bin/python3
"""The same forward as `linsweep` in plain PyTorch, for the throughput of a big Llama-shaped
checkpoint on the CPU: reads config.json and the safetensors files (one file or the hub's
shards with model.safetensors.index.json) tensor by tensor, keeps the weights in bfloat16 (or
float32), scores consecutive windows of T tokens (position t predicts t + 1, log-softmax in
float32) and prints one JSON line: tokens, nll_sum, ppl, seconds, tokens_per_second,
peak_rss_mib. Written from Llama's definition (RMSNorm, rotary on the whole head with the
config's rope_theta, grouped key/value heads, SwiGLU), not from linsweep's code.
With --widen every product takes its bfloat16 operands to float32 and rounds the result once,
as linsweep does on a CPU without bfloat16 GEMMs (engine/model/widened_gemm.hpp): there
PyTorch 1.13's own bfloat16 F.linear runs scalar code, far slower than float32
(docs/benchmarks.md names the CPU and the ratio).
Usage: llama_torch_forward.py MODEL_DIR TOKENS_NPY [--tokens N] [--context T] [--batch B]
       [--threads K] [--dtype bfloat16|float32] [--widen]"""
import argparse
import json
import math
import os
import resource
import struct
import time

import numpy as np
import torch
import torch.nn.functional as F


def tensors(model_dir):
    """{name: tensor} read file by file, each tensor copied out of the mapped file."""
    index = os.path.join(model_dir, "model.safetensors.index.json")
    files = sorted(set(json.load(open(index))["weight_map"].values())) if os.path.exists(index) else ["model.safetensors"]
    out = {}
    for name in files:
        path = os.path.join(model_dir, name)
        with open(path, "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            header = json.loads(f.read(n))
        raw = np.memmap(path, dtype=np.uint8, mode="r")
        for key, t in header.items():
            if key == "__metadata__":
                continue
            begin, end = (8 + n + o for o in t["data_offsets"])
            if t["dtype"] == "BF16":
                a = torch.from_numpy(np.array(raw[begin:end]).view(np.int16)).view(torch.bfloat16)
            elif t["dtype"] == "F32":
                a = torch.from_numpy(np.array(raw[begin:end]).view(np.float32))
            else:
                raise SystemExit(f"{path}: {key}: dtype {t['dtype']} not handled")
            out[key] = a.reshape(t["shape"])
        del raw
    return out


def rms_norm(x, w, eps):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w


def rotate(x, cos, sin):  # x [B, H, T, hd]; rotary over halves, as Llama's HF checkpoints store q and k
    h = x.shape[-1] // 2
    x1, x2 = x[..., :h], x[..., h:]
    return (x * cos + torch.cat((-x2, x1), dim=-1) * sin).to(x.dtype)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("corpus")
    ap.add_argument("--tokens", type=int, default=512)
    ap.add_argument("--context", type=int, default=256)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--dtype", choices=["bfloat16", "float32"], default="bfloat16")
    ap.add_argument("--widen", action="store_true", help="products in float32 from the stored operands")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    dtype = getattr(torch, a.dtype)

    def linear(x, weight):
        return F.linear(x.float(), weight.float()).to(dtype) if a.widen else F.linear(x, weight)
    c = json.load(open(os.path.join(a.model, "config.json")))
    d, heads, layers = c["hidden_size"], c["num_attention_heads"], c["num_hidden_layers"]
    kv = c.get("num_key_value_heads", heads)
    hd = d // heads
    eps = c.get("rms_norm_eps", 1e-6)
    theta = c.get("rope_theta") or (c.get("rope_parameters") or {}).get("rope_theta", 10000.0)
    w = {k: v.to(dtype) for k, v in tensors(a.model).items()}
    head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
    ids_all = np.load(a.corpus)[: a.tokens].astype(np.int64)
    windows = torch.from_numpy(ids_all[: (len(ids_all) // a.context) * a.context]).view(-1, a.context)
    T = a.context
    inv = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    ang = torch.outer(torch.arange(T, dtype=torch.float64), inv)
    cos = torch.cat((ang.cos(), ang.cos()), -1).float()
    sin = torch.cat((ang.sin(), ang.sin()), -1).float()
    mask = torch.full((T, T), float("-inf")).triu(1)
    nll, scored = 0.0, 0
    start = time.perf_counter()
    with torch.inference_mode():
        for first in range(0, windows.shape[0], a.batch):
            ids = windows[first:first + a.batch]
            B = ids.shape[0]
            x = F.embedding(ids, w["model.embed_tokens.weight"])
            for i in range(layers):
                p = f"model.layers.{i}."
                h = rms_norm(x, w[p + "input_layernorm.weight"], eps)
                q = linear(h, w[p + "self_attn.q_proj.weight"]).view(B, T, heads, hd).transpose(1, 2)
                k = linear(h, w[p + "self_attn.k_proj.weight"]).view(B, T, kv, hd).transpose(1, 2)
                v = linear(h, w[p + "self_attn.v_proj.weight"]).view(B, T, kv, hd).transpose(1, 2)
                q, k = rotate(q.float(), cos, sin), rotate(k.float(), cos, sin)
                k, v = k.repeat_interleave(heads // kv, 1), v.float().repeat_interleave(heads // kv, 1)
                att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(hd) + mask, -1)
                o = (att @ v).transpose(1, 2).reshape(B, T, d).to(dtype)
                x = x + linear(o, w[p + "self_attn.o_proj.weight"])
                h = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
                g = F.silu(linear(h, w[p + "mlp.gate_proj.weight"])) * linear(h, w[p + "mlp.up_proj.weight"])
                x = x + linear(g, w[p + "mlp.down_proj.weight"])
            logits = linear(rms_norm(x, w["model.norm.weight"], eps), head).float()
            logp = torch.log_softmax(logits[:, :-1], -1)
            nll -= logp.gather(-1, ids[:, 1:, None]).sum().item()
            scored += B * (T - 1)
    seconds = time.perf_counter() - start
    print(json.dumps({"tokens": int(windows.numel()), "tokens_scored": scored, "nll_sum": nll,
                      "ppl": math.exp(nll / scored), "seconds": seconds,
                      "tokens_per_second": windows.numel() / seconds, "threads": a.threads, "dtype": a.dtype, "widen": a.widen,
                      "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


if __name__ == "__main__":
    main()
