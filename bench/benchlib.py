"""Shared by the bench Python scripts and the tests' checkpoint generator: integer command-line
options, safetensors files written by hand (no safetensors package), tensor by tensor, and
random checkpoints. Imports numpy only inside the functions that make arrays (it names dtypes as
strings otherwise): gate_training.py parses its options before numpy loads, so that its thread
limits hold."""
import json
import math
import os
import struct


def int_options(ap, **defaults):
    """Adds to the ArgumentParser ap an integer option --NAME per keyword, in order, with its
    default ("_" in NAME becomes "-": d_model=512 adds --d-model)."""
    for name, default in defaults.items():
        ap.add_argument("--" + name.replace("_", "-"), type=int, default=default)


def to_bfloat16_bits(x):
    """float32 array -> bfloat16 bit patterns (uint16), rounding to nearest, ties to even."""
    u = x.view("<u4").astype("<u8")
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype("<u2")


def write_safetensors(path, tensors, dtype, blobs, metadata=None):
    """Writes a safetensors file: tensors is [(name, shape)] in file order, dtype "F32", "F16" or
    "BF16" (all of them), blobs yields each tensor's bytes in that order (a generator keeps memory at one
    tensor), metadata an optional __metadata__ dict. Returns the file's size in bytes."""
    width = {"F32": 4, "F16": 2, "BF16": 2}[dtype]
    header, offset = ({"__metadata__": metadata} if metadata else {}), 0
    for name, shape in tensors:
        size = math.prod(shape) * width
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # data starts 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)
    return 8 + len(text) + offset


def write_random_checkpoint(out, tensors, dtype, rng, tokens=0, vocab=0, tag="checkpoint", shard_bytes=0):
    """Writes OUT/model.safetensors from tensors [(name, shape, std)], each drawn in turn from the
    numpy Generator rng as float32 (std None: ones; 0: zeros; else normal(0, std)) and stored as
    dtype "float32" or "bfloat16", one tensor in memory at a time, with {"format": "pt"} metadata;
    with shard_bytes > 0, in shards of about that size instead (model-0000i-of-0000n.safetensors
    and model.safetensors.index.json, as the hub stores large checkpoints); with tokens > 0 also
    OUT/tokens.npy, that many ids below vocab drawn after the weights (uint16 when they fit).
    Progress goes to stderr as "TAG: i/n tensors". Returns (parameters, bytes)."""
    import sys

    import numpy as np

    width = 4 if dtype == "float32" else 2
    groups, size_now = [[]], 0
    for t in tensors:
        nbytes = math.prod(t[1]) * width
        if shard_bytes and groups[-1] and size_now + nbytes > shard_bytes:
            groups.append([])
            size_now = 0
        groups[-1].append(t)
        size_now += nbytes

    def values(shape, std):
        if std is None:
            return np.ones(shape, np.float32)
        if std == 0.0:
            return np.zeros(shape, np.float32)
        return rng.standard_normal(shape, dtype=np.float32) * np.float32(std)

    done = [0]

    def blobs(group):
        for _, shape, std in group:
            x = values(shape, std)
            yield (x if dtype == "float32" else to_bfloat16_bits(x)).tobytes()
            done[0] += 1
            if done[0] % 24 == 1:
                print(f"{tag}: {done[0]}/{len(tensors)} tensors", file=sys.stderr)

    stored, size, weight_map = "F32" if dtype == "float32" else "BF16", 0, {}
    for i, group in enumerate(groups):
        name = "model.safetensors" if len(groups) == 1 else f"model-{i + 1:05d}-of-{len(groups):05d}.safetensors"
        size += write_safetensors(os.path.join(out, name), [(n, s) for n, s, _ in group], stored, blobs(group),
                                  metadata={"format": "pt"})
        weight_map.update({n: name for n, _, _ in group})
    if len(groups) > 1:
        with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": size}, "weight_map": weight_map}, f, indent=1)
    if tokens:
        ids = rng.integers(0, vocab, tokens)
        np.save(os.path.join(out, "tokens.npy"), ids.astype(np.uint16 if vocab <= 65536 else np.int64))
    return sum(math.prod(s) for _, s, _ in tensors), size
