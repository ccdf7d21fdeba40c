#!/usr/bin/python3
"""Writes a Llama-shaped HF directory with random weights (numpy only): config.json (5.x form)
and model.safetensors with LlamaForCausalLM's tensor names and nn.Linear weights [out, in],
written tensor by tensor so memory stays at one tensor. With --tokens N also OUT_DIR/tokens.npy:
N random token ids. Default shape: TinyLlama 1.1B (d=2048, 22 layers, 32 heads sharing 4
key/value heads, d_ff 5632, vocab 32000, 2048 positions, untied head): about 4.4 GB in float32,
2.2 GB in bfloat16.
With --shard-mib M the weights go to shards of about M MiB and model.safetensors.index.json, as
the hub stores large checkpoints.
Usage: llama_checkpoint.py OUT_DIR [--dtype float32|bfloat16] [--layers N] [--d D] [--heads H]
       [--kv-heads K] [--ff F] [--vocab V] [--ctx T] [--tokens N] [--seed S] [--shard-mib M]"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import int_options, write_random_checkpoint  # noqa: E402


def tensor_list(a):
    """(name, shape, std) in the order LlamaForCausalLM's state dict lists them; std None: ones."""
    d, hd = a.d, a.d // a.heads
    proj_std = 0.02 / np.sqrt(2 * a.layers)
    out = [("model.embed_tokens.weight", (a.vocab, d), 0.02)]
    for i in range(a.layers):
        p = f"model.layers.{i}."
        out += [(p + "self_attn.q_proj.weight", (a.heads * hd, d), 0.02),
                (p + "self_attn.k_proj.weight", (a.kv_heads * hd, d), 0.02),
                (p + "self_attn.v_proj.weight", (a.kv_heads * hd, d), 0.02),
                (p + "self_attn.o_proj.weight", (d, a.heads * hd), proj_std),
                (p + "mlp.gate_proj.weight", (a.ff, d), 0.02), (p + "mlp.up_proj.weight", (a.ff, d), 0.02),
                (p + "mlp.down_proj.weight", (d, a.ff), proj_std),
                (p + "input_layernorm.weight", (d,), None), (p + "post_attention_layernorm.weight", (d,), None)]
    out += [("model.norm.weight", (d,), None), ("lm_head.weight", (a.vocab, d), 0.02)]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    int_options(ap, layers=22, d=2048, heads=32, kv_heads=4, ff=5632, vocab=32000, ctx=2048, tokens=0, seed=0,
                shard_mib=0)
    a = ap.parse_args()
    if a.d % a.heads or a.heads % a.kv_heads or min(a.layers, a.d, a.heads, a.kv_heads, a.ff, a.vocab, a.ctx) <= 0:
        print("llama_checkpoint.py: --heads must divide --d, --kv-heads divide --heads, all sizes positive",
              file=sys.stderr)
        sys.exit(2)
    os.makedirs(a.out, exist_ok=True)
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": a.vocab,
              "hidden_size": a.d, "intermediate_size": a.ff, "num_hidden_layers": a.layers,
              "num_attention_heads": a.heads, "num_key_value_heads": a.kv_heads, "hidden_act": "silu",
              "max_position_embeddings": a.ctx, "rms_norm_eps": 1e-5, "tie_word_embeddings": False,
              "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}, "rope_theta": 10000.0,
              "attention_bias": False, "mlp_bias": False, "bos_token_id": 1, "eos_token_id": 2, "dtype": a.dtype,
              "torch_dtype": a.dtype}
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    params, size = write_random_checkpoint(a.out, tensor_list(a), a.dtype, np.random.default_rng(a.seed), a.tokens,
                                           a.vocab, "llama_checkpoint", shard_bytes=a.shard_mib << 20)
    print(json.dumps({"dir": a.out, "parameters": params, "bytes": size, "dtype": a.dtype}))


if __name__ == "__main__":
    main()
