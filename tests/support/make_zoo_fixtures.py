"""Writes, from each checkpoint of /work/shared/fixtures/hf_zoo (HF hub layout, 4.x config), its
float32, bfloat16 and float16 forms and its config in the transformers 5.x dialect:

    make_zoo_fixtures.py [SRC_DIR] OUT_DIR  ->  OUT_DIR/zoo-<family>-{f32,bf16,f16}/ (4.x config),
                                                OUT_DIR/zoo-<family>-v5/ (5.x config, source dtype),
                                                OUT_DIR/tokens.npy

Weights are re-encoded from the stored values (float32 exactly; bfloat16 and float16 rounded to
nearest even), tensor names and file order kept; the v5 form links the weights of the form of
the source's dtype. The 5.x dialect is transformers 5's configuration_<family>.py written out:
`dtype` for `torch_dtype`; `rope_parameters` (rope_theta, rope_type and the scaling keys, and
Phi-3's partial_rotary_factor) for `rope_theta` / `rope_scaling`; Gemma 3's rope_parameters per
layer type ({"full_attention": {… rope_scaling …, rope_theta}, "sliding_attention": {default,
rope_local_base_freq}}) and `layer_types` for `sliding_window_pattern`; `layer_types` for the
families whose 5.x config has it (gemma2, gemma3_text, qwen3, qwen2_moe). Mixture-of-experts
weights stay one tensor per expert, as published checkpoints hold them.

tokens.npy is chosen so that, read as the parity test reads it (the first TOKENS ids in windows of
CONTEXT), every router decision of every MoE form is at least ROUTING_MARGIN from a tie (the k-th
largest expert probability minus the (k+1)-th, by the float64 reference): a float32 forward moves
those probabilities by ~1e-6, so it picks the reference's experts and the comparison measures
arithmetic, not a coin flip between near-equal experts. main() checks it.
"""
import json
import os
import struct
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
sys.path.insert(0, HERE)  # reference_zoo, for the margin check
from benchlib import to_bfloat16_bits, write_safetensors  # noqa: E402

SRC = "/work/shared/fixtures/hf_zoo"
DTYPES = {"f32": ("F32", "float32"), "bf16": ("BF16", "bfloat16"), "f16": ("F16", "float16")}
_NP = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16}
V5_VERSION = "5.17.0"  # the dialect of tests/data/models/hf_transformers5
TOKENS, CONTEXT = 256, 32  # how the parity test reads tokens.npy
ROUTING_MARGIN = 1e-4
STREAM_SEED = 145  # margin 1.23e-4 (of seeds 0-145, 133 and 141 also clear 1e-4, with less room)


def read_raw(path):
    """([(name, shape)] in file order, {name: float32 array}, metadata) of a safetensors file."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    order, values = [], {}
    for name, t in sorted(((k, v) for k, v in header.items() if k != "__metadata__"),
                          key=lambda kv: kv[1]["data_offsets"][0]):
        begin, end = t["data_offsets"]
        a = np.frombuffer(raw[8 + n + begin:8 + n + end], dtype=_NP[t["dtype"]]).reshape(t["shape"])
        if t["dtype"] == "BF16":
            a = (a.astype(np.uint32) << 16).view(np.float32)
        order.append((name, tuple(t["shape"])))
        values[name] = a.astype(np.float32)
    return order, values, header.get("__metadata__")


def write_form(path, order, values, metadata, dtype):
    def blob(a):
        if dtype == "BF16":
            return to_bfloat16_bits(np.ascontiguousarray(a, np.float32)).tobytes()
        return np.ascontiguousarray(a, np.float32 if dtype == "F32" else np.float16).tobytes()

    write_safetensors(path, order, dtype, (blob(values[n]) for n, _ in order), metadata)


def _rope_parameters(theta, scaling):
    p = {k: v for k, v in (scaling or {}).items() if k != "type"}
    p["rope_type"] = (scaling or {}).get("rope_type", (scaling or {}).get("type", "default"))
    p["rope_theta"] = theta
    return p


def layer_types(c):
    """The 5.x configs' default layer_types (configuration_<family>.py __post_init__)."""
    n, mt = c["num_hidden_layers"], c["model_type"]
    if c.get("layer_types"):
        return c["layer_types"]
    if mt == "gemma2":
        sliding = [(i + 1) % 2 == 1 for i in range(n)]
    elif mt == "gemma3_text":
        sliding = [(i + 1) % c.get("sliding_window_pattern", 6) != 0 for i in range(n)]
    elif mt == "qwen3":
        window = c.get("sliding_window") if c.get("use_sliding_window") else None
        sliding = [window is not None and i >= c.get("max_window_layers", 28) for i in range(n)]
    else:  # qwen2_moe
        sliding = [c.get("use_sliding_window", False) and (i + 1) % 2 == 1 and i < c.get("max_window_layers", 28)
                   for i in range(n)]
    return ["sliding_attention" if s else "full_attention" for s in sliding]


def to_v5(config):
    """config.json of the 4.x dialect -> the 5.x dialect (see the module's docstring)."""
    c = dict(config)
    mt = c["model_type"]
    c["dtype"] = c.pop("torch_dtype")
    theta, scaling = c.pop("rope_theta"), c.pop("rope_scaling", None)
    if mt == "gemma3_text":
        c["layer_types"] = layer_types(c)
        c.pop("sliding_window_pattern", None)
        c["rope_parameters"] = {"full_attention": _rope_parameters(theta, scaling),
                                "sliding_attention": _rope_parameters(c.pop("rope_local_base_freq"), None)}
    else:
        c["rope_parameters"] = _rope_parameters(theta, scaling)
        if "partial_rotary_factor" in c:  # 5.x copies it into rope_parameters and keeps the key
            c["rope_parameters"]["partial_rotary_factor"] = c["partial_rotary_factor"]
    if mt in ("gemma2", "qwen3", "qwen2_moe"):
        c["layer_types"] = layer_types(c)
    if mt == "qwen3" and not c.get("use_sliding_window"):
        c["sliding_window"] = None  # Qwen3Config.__post_init__
    if mt == "qwen2_moe" and not c.get("use_sliding_window"):
        c["sliding_window"] = 0  # Qwen2MoeConfig.__post_init__ writes 0, not null
    c["transformers_version"] = V5_VERSION
    return c


def family(name):
    """'gemma3-text-f32' -> 'gemma3-text'."""
    base, _, suffix = name.rpartition("-")
    return base if suffix in DTYPES else name


def write_config(path, config):
    with open(path, "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)


def convert(src_dir, out):
    """The four forms of one source checkpoint; returns their directories."""
    with open(os.path.join(src_dir, "config.json")) as f:
        config = json.load(f)
    order, values, metadata = read_raw(os.path.join(src_dir, "model.safetensors"))
    name, dirs = family(os.path.basename(src_dir.rstrip("/"))), []
    for short, (st, torch_name) in DTYPES.items():
        d = os.path.join(out, f"zoo-{name}-{short}")
        os.makedirs(d, exist_ok=True)
        write_config(os.path.join(d, "config.json"), {**config, "torch_dtype": torch_name})
        write_form(os.path.join(d, "model.safetensors"), order, values, metadata, st)
        dirs.append(d)
    short = {v[1]: k for k, v in DTYPES.items()}[config["torch_dtype"]]
    d = os.path.join(out, f"zoo-{name}-v5")
    os.makedirs(d, exist_ok=True)
    write_config(os.path.join(d, "config.json"), to_v5(config))
    link = os.path.join(d, "model.safetensors")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.join("..", f"zoo-{name}-{short}", "model.safetensors"), link)
    return dirs + [d]


def main(src, out):
    os.makedirs(out, exist_ok=True)
    dirs = []
    for name in sorted(os.listdir(src)):
        if os.path.isfile(os.path.join(src, name, "config.json")):
            dirs += convert(os.path.join(src, name), out)
    stream = token_stream(STREAM_SEED)
    np.save(os.path.join(out, "tokens.npy"), stream.astype(np.int32))
    margin = smallest_margin(dirs, stream)
    if not margin >= ROUTING_MARGIN:
        raise SystemExit(f"tokens.npy: a router decision is {margin:.2e} from a tie (< {ROUTING_MARGIN})")
    return dirs


def token_stream(seed):
    """A stream with repeats (so that fits have something to learn), every id < 512 (the vocabulary)."""
    rng = np.random.default_rng(seed)
    base = rng.integers(3, 512, 64)
    return np.concatenate([rng.permutation(base) if i % 3 else rng.integers(3, 512, 64) for i in range(96)])


def smallest_margin(dirs, stream):
    """The smallest top-k margin of any MoE checkpoint in dirs over the parity test's windows."""
    from reference_zoo import MOE, load, routing_margin, run
    ids = np.asarray(stream[:TOKENS], dtype=np.int64).reshape(-1, CONTEXT)
    margin = float("inf")
    for d in dirs:
        decoder = load(d)
        if decoder.mt in MOE:
            margin = min(margin, routing_margin(run(decoder, torch.from_numpy(ids))[1]))
    return margin


if __name__ == "__main__":
    args = sys.argv[1:]
    main(*(args if len(args) == 2 else [SRC] + args))
