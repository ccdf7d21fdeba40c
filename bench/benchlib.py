"""Shared by the bench Python scripts: integer command-line options, and safetensors files
written by hand (no safetensors package), tensor by tensor. Imports no numpy (it takes numpy
arrays but names their dtypes as strings): gate_training.py parses its options before numpy
loads, so that its thread limits hold."""
import json
import math
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
    """Writes a safetensors file: tensors is [(name, shape)] in file order, dtype "F32" or "BF16"
    (all of them), blobs yields each tensor's bytes in that order (a generator keeps memory at one
    tensor), metadata an optional __metadata__ dict. Returns the file's size in bytes."""
    width = {"F32": 4, "BF16": 2}[dtype]
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
