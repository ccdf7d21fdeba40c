#!/usr/bin/python3
"""Writes a GPT-2 shaped HF directory with random weights (numpy only): config.json and
model.safetensors in the layout of tests/data/models/tiny-gpt2 (Conv1D weights [in, out], tied
head, no attn.bias buffers: linsweep and transformers ignore or rebuild them), written tensor by
tensor so memory stays at one tensor. With --tokens N also OUT_DIR/tokens.npy: N random token ids
(uint16 when the vocabulary fits). Default shape: GPT-2 Large (d=1280, 36 layers, 20 heads,
vocab 50257, n_ctx 1024): about 3.1 GB in float32, 1.6 GB in bfloat16.
Usage: gpt2_checkpoint.py OUT_DIR [--dtype float32|bfloat16] [--layers N] [--d D] [--heads H]
       [--vocab V] [--ctx T] [--tokens N] [--seed S]"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import int_options, write_random_checkpoint  # noqa: E402


def tensor_list(layers, d, vocab, ctx):
    """(name, shape, std) in the order GPT2LMHeadModel's state dict lists them."""
    out = [("wte.weight", (vocab, d), 0.02), ("wpe.weight", (ctx, d), 0.01)]
    proj_std = 0.02 / np.sqrt(2 * layers)  # GPT-2's scaled init of the residual projections
    for i in range(layers):
        p = f"h.{i}."
        out += [(p + "ln_1.weight", (d,), None), (p + "ln_1.bias", (d,), 0.0),
                (p + "attn.c_attn.weight", (d, 3 * d), 0.02), (p + "attn.c_attn.bias", (3 * d,), 0.0),
                (p + "attn.c_proj.weight", (d, d), proj_std), (p + "attn.c_proj.bias", (d,), 0.0),
                (p + "ln_2.weight", (d,), None), (p + "ln_2.bias", (d,), 0.0),
                (p + "mlp.c_fc.weight", (d, 4 * d), 0.02), (p + "mlp.c_fc.bias", (4 * d,), 0.0),
                (p + "mlp.c_proj.weight", (4 * d, d), proj_std), (p + "mlp.c_proj.bias", (d,), 0.0)]
    out += [("ln_f.weight", (d,), None), ("ln_f.bias", (d,), 0.0)]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    int_options(ap, layers=36, d=1280, heads=20, vocab=50257, ctx=1024, tokens=0, seed=0)
    a = ap.parse_args()
    if a.d % a.heads or min(a.layers, a.d, a.heads, a.vocab, a.ctx) <= 0 or a.tokens < 0:
        print("gpt2_checkpoint.py: --d must be a multiple of --heads and all sizes positive", file=sys.stderr)
        sys.exit(2)
    os.makedirs(a.out, exist_ok=True)
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": a.vocab,
              "n_positions": a.ctx, "n_ctx": a.ctx, "n_embd": a.d, "n_layer": a.layers, "n_head": a.heads,
              "n_inner": None, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
              "scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": False,
              "reorder_and_upcast_attn": False, "tie_word_embeddings": True,
              "bos_token_id": a.vocab - 1, "eos_token_id": a.vocab - 1, "torch_dtype": a.dtype}
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)

    tensors = tensor_list(a.layers, a.d, a.vocab, a.ctx)
    params, size = write_random_checkpoint(a.out, tensors, a.dtype, np.random.default_rng(a.seed), a.tokens, a.vocab,
                                           "gpt2_checkpoint")
    print(json.dumps({"out": a.out, "dtype": a.dtype, "parameters": params, "bytes": size,
                      "tokens": a.tokens}))


if __name__ == "__main__":
    main()
