#!/usr/bin/python3
"""Writes a GPT-NeoX (Pythia) shaped HF directory with random bfloat16 weights: config.json and
model.safetensors, tensor by tensor (memory stays at one tensor). Default shape: Pythia-1B
(d=2048, 16 layers, 8 heads, d_ff 8192, vocab 50304, rotary 25 %), about 2 GB.
Usage: neox_checkpoint.py OUT_DIR [--layers N] [--d D] [--heads H] [--vocab V] [--seed S]"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import int_options, to_bfloat16_bits, write_safetensors  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    int_options(ap, layers=16, d=2048, heads=8, vocab=50304, seed=0)
    a = ap.parse_args()
    d, ff = a.d, 4 * a.d
    os.makedirs(a.out, exist_ok=True)
    config = {"architectures": ["GPTNeoXForCausalLM"], "model_type": "gpt_neox", "vocab_size": a.vocab,
              "hidden_size": d, "num_hidden_layers": a.layers, "num_attention_heads": a.heads,
              "intermediate_size": ff, "hidden_act": "gelu", "rotary_pct": 0.25, "rotary_emb_base": 10000,
              "max_position_embeddings": 2048, "layer_norm_eps": 1e-5, "use_parallel_residual": True,
              "tie_word_embeddings": False, "attention_bias": True, "bos_token_id": 0, "eos_token_id": 0,
              "torch_dtype": "bfloat16"}
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    shapes = [("gpt_neox.embed_in.weight", (a.vocab, d), 0.02)]
    for i in range(a.layers):
        p = f"gpt_neox.layers.{i}."
        shapes += [(p + "input_layernorm.weight", (d,), None), (p + "input_layernorm.bias", (d,), 0.0),
                   (p + "post_attention_layernorm.weight", (d,), None), (p + "post_attention_layernorm.bias", (d,), 0.0),
                   (p + "attention.query_key_value.weight", (3 * d, d), 0.02),
                   (p + "attention.query_key_value.bias", (3 * d,), 0.0),
                   (p + "attention.dense.weight", (d, d), 0.02), (p + "attention.dense.bias", (d,), 0.0),
                   (p + "mlp.dense_h_to_4h.weight", (ff, d), 0.02), (p + "mlp.dense_h_to_4h.bias", (ff,), 0.0),
                   (p + "mlp.dense_4h_to_h.weight", (d, ff), 0.02), (p + "mlp.dense_4h_to_h.bias", (d,), 0.0)]
    shapes += [("gpt_neox.final_layer_norm.weight", (d,), None), ("gpt_neox.final_layer_norm.bias", (d,), 0.0),
               ("embed_out.weight", (a.vocab, d), 0.02)]
    rng = np.random.default_rng(a.seed)
    ones = np.uint16(0x3F80)  # bfloat16 1.0

    def blobs():
        for _, shape, std in shapes:
            if std is None:
                yield np.full(shape, ones, dtype=np.uint16).tobytes()
            elif std == 0.0:
                yield np.zeros(shape, dtype=np.uint16).tobytes()
            else:
                yield to_bfloat16_bits(rng.standard_normal(shape, dtype=np.float32) * np.float32(std)).tobytes()

    write_safetensors(os.path.join(a.out, "model.safetensors"), [(n, s) for n, s, _ in shapes], "BF16", blobs())
    params = sum(int(np.prod(s)) for _, s, _ in shapes)
    print(f"{a.out}: {params:,} parameters, {2 * params / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
