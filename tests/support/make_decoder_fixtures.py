"""Writes small random pre-norm decoder checkpoints (Llama, Mistral, Qwen2, Gemma, StableLM) in HF's file
layout (config.json, model.safetensors) in float32, bfloat16 and float16, and a token stream:

    make_decoder_fixtures.py OUT_DIR  ->  OUT_DIR/tiny-<arch>-<dtype>/, OUT_DIR/tokens.npy

Written from HF's published file layout (tensor names, [out, in] weights), not from linsweep's
code. Each architecture exercises its own features: grouped- and multi-query attention, q/k/v
biases, tied and untied heads, a head size that is not d/heads, Gemma's 1 + w norms, and the
rope scalings (llama3, linear, dynamic) in both config dialects. Norm weights sit away from 1
and biases away from 0, so that a loader that skips one is caught.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from benchlib import to_bfloat16_bits, write_safetensors  # noqa: E402

VOCAB, D, LAYERS = 512, 64, 2


def write_checkpoint(path, tensors, dtype):
    """tensors {name: float32 array} as a safetensors file of dtype F32, F16 or BF16."""
    def blob(a):
        if dtype == "BF16":
            return to_bfloat16_bits(a.astype(np.float32)).tobytes()
        return a.astype(np.float32 if dtype == "F32" else np.float16).tobytes()

    write_safetensors(path, [(n, a.shape) for n, a in tensors.items()], dtype, (blob(a) for a in tensors.values()))


def variants():
    """(arch, config without dtype keys, features) for each architecture."""
    common = {"vocab_size": VOCAB, "hidden_size": D, "num_hidden_layers": LAYERS, "max_position_embeddings": 256,
              "bos_token_id": 1, "eos_token_id": 2}
    return [
        ("llama", {**common, "architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_attention_heads": 4,
                   "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 160, "hidden_act": "silu",
                   "rms_norm_eps": 1e-5, "attention_bias": False, "mlp_bias": False, "tie_word_embeddings": False}),
        ("mistral", {**common, "architectures": ["MistralForCausalLM"], "model_type": "mistral",
                     "num_attention_heads": 4, "num_key_value_heads": 1, "intermediate_size": 192,
                     "hidden_act": "silu", "rms_norm_eps": 1e-5, "sliding_window": 128,
                     "tie_word_embeddings": False}),
        ("qwen2", {**common, "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "num_attention_heads": 4,
                   "num_key_value_heads": 2, "intermediate_size": 160, "hidden_act": "silu", "rms_norm_eps": 1e-6,
                   "use_sliding_window": False, "sliding_window": 16, "tie_word_embeddings": True}),
        ("stablelm", {**common, "architectures": ["StableLmForCausalLM"], "model_type": "stablelm",
                      "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 160,
                      "hidden_act": "silu", "layer_norm_eps": 1e-5, "partial_rotary_factor": 0.25,
                      "use_qkv_bias": True, "tie_word_embeddings": False}),
        ("gemma", {**common, "architectures": ["GemmaForCausalLM"], "model_type": "gemma", "num_attention_heads": 4,
                   "num_key_value_heads": 1, "head_dim": 32, "intermediate_size": 128,
                   "hidden_act": "gelu_pytorch_tanh", "rms_norm_eps": 1e-6, "tie_word_embeddings": True}),
    ]


# Per dtype: the rope settings (5.x rope_parameters, or 4.x rope_theta/rope_scaling) and dialect.
ROPES = {
    "f32": {"rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
                                "high_freq_factor": 4.0, "original_max_position_embeddings": 16}, "dtype": "float32"},
    "bf16": {"rope_theta": 10000.0, "rope_scaling": {"type": "linear", "factor": 2.0}, "torch_dtype": "bfloat16"},
    "f16": {"rope_theta": 1000000.0, "torch_dtype": "float16",
            "rope_scaling": {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 16}},
}
SAFETENSORS_DTYPE = {"f32": "F32", "bf16": "BF16", "f16": "F16"}


def weights(config, rng):
    c = config
    heads, kv = c["num_attention_heads"], c["num_key_value_heads"]
    hd = c.get("head_dim", D // heads)
    f = c["intermediate_size"]
    gemma = c["model_type"] == "gemma"
    normal = lambda *shape, s=0.08: rng.normal(0, s, shape).astype(np.float32)  # noqa: E731
    norm = lambda: (normal(D, s=0.2) if gemma else 1 + normal(D, s=0.2))  # noqa: E731
    stablelm = c["model_type"] == "stablelm"
    w = {"model.embed_tokens.weight": normal(VOCAB, D, s=0.1)}
    for layer in range(LAYERS):
        p = f"model.layers.{layer}."
        w[p + "input_layernorm.weight"] = norm()
        w[p + "self_attn.q_proj.weight"] = normal(heads * hd, D)
        w[p + "self_attn.k_proj.weight"] = normal(kv * hd, D)
        w[p + "self_attn.v_proj.weight"] = normal(kv * hd, D)
        if stablelm:  # LayerNorm biases
            w[p + "input_layernorm.bias"] = normal(D, s=0.2)
        if c["model_type"] in ("qwen2", "stablelm"):
            for name, n in (("q", heads * hd), ("k", kv * hd), ("v", kv * hd)):
                w[p + f"self_attn.{name}_proj.bias"] = normal(n, s=0.3)
        w[p + "self_attn.o_proj.weight"] = normal(D, heads * hd)
        w[p + "post_attention_layernorm.weight"] = norm()
        if stablelm:
            w[p + "post_attention_layernorm.bias"] = normal(D, s=0.2)
        w[p + "mlp.gate_proj.weight"] = normal(f, D, s=0.15)
        w[p + "mlp.up_proj.weight"] = normal(f, D, s=0.15)
        w[p + "mlp.down_proj.weight"] = normal(D, f, s=0.15)
    w["model.norm.weight"] = norm()
    if stablelm:
        w["model.norm.bias"] = normal(D, s=0.2)
    if not c["tie_word_embeddings"]:
        w["lm_head.weight"] = normal(VOCAB, D, s=0.1)
    return w


def main(out):
    rng = np.random.default_rng(37)
    for arch, config in variants():
        for dtype, rope in ROPES.items():
            c = {**config, **rope}
            d = os.path.join(out, f"tiny-{arch}-{dtype}")
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "config.json"), "w") as f:
                json.dump(c, f, indent=2)
            write_checkpoint(os.path.join(d, "model.safetensors"), weights(c, rng), SAFETENSORS_DTYPE[dtype])
    # A stream with repeats (so that fits and gates have something to learn), every id < VOCAB.
    base = rng.integers(3, VOCAB, 64)
    stream = np.concatenate([rng.permutation(base) if i % 3 else rng.integers(3, VOCAB, 64) for i in range(96)])
    np.save(os.path.join(out, "tokens.npy"), stream.astype(np.int32))


if __name__ == "__main__":
    main(sys.argv[1])
