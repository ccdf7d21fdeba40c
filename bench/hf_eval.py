#!/usr/bin/python3
"""The transformers reference for `linsweep eval` throughput: loads an HF directory with
AutoModelForCausalLM (GPT2LMHeadModel, LlamaForCausalLM, ...), scores the same windows as `linsweep eval --start 0 --tokens N --context T`
(consecutive non-overlapping windows of T tokens; position t predicts t + 1; log-softmax in
float64, docs/methods.md) and prints one JSON line: tokens, tokens_scored, nll_sum, ppl,
eval_seconds (after one warm-up batch, CUDA synchronised) and tokens_per_second.
Exits 3 when transformers cannot be imported (the caller records a skip).
Usage: hf_eval.py MODEL_DIR TOKENS_NPY [--tokens N] [--context T] [--batch B]
       [--device D] [--dtype float32|bfloat16]"""
import argparse
import json
import math
import sys
import time

import numpy as np
import torch


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("corpus")
    ap.add_argument("--tokens", type=int, default=65536)
    ap.add_argument("--context", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--device", default="cuda:0" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    a = ap.parse_args()
    try:
        from transformers import AutoModelForCausalLM
    except ImportError as e:
        print(json.dumps({"skipped": f"transformers is not importable: {e}"}))
        sys.exit(3)
    dtype = torch.float32 if a.dtype == "float32" else torch.bfloat16
    model = AutoModelForCausalLM.from_pretrained(a.model, torch_dtype=dtype).to(a.device).eval()
    stream = np.load(a.corpus).astype(np.int64)
    n = min(a.tokens, len(stream)) // a.context
    if n == 0:
        print(f"hf_eval.py: fewer than {a.context} tokens", file=sys.stderr)
        sys.exit(2)
    windows = torch.from_numpy(stream[: n * a.context].reshape(n, a.context))

    def score(ids):
        ids = ids.to(a.device)
        logits = model(ids).logits[:, :-1].double()
        logp = torch.log_softmax(logits, dim=-1)
        return -logp.gather(-1, ids[:, 1:].unsqueeze(-1)).sum()

    def sync():
        if a.device.startswith("cuda"):
            torch.cuda.synchronize()

    with torch.inference_mode():
        score(windows[: a.batch])  # warm-up: kernels, allocator
        sync()
        start = time.perf_counter()
        total = torch.zeros((), dtype=torch.float64, device=a.device)
        for i in range(0, n, a.batch):
            total += score(windows[i:i + a.batch])
        sync()
        seconds = time.perf_counter() - start
    scored = n * (a.context - 1)
    nll = float(total)
    print(json.dumps({"tokens": n * a.context, "tokens_scored": scored, "nll_sum": nll, "ppl": math.exp(nll / scored),
                      "eval_seconds": seconds, "tokens_per_second": n * a.context / seconds, "device": a.device,
                      "dtype": a.dtype, "transformers_model": type(model).__name__}))


if __name__ == "__main__":
    main()
