"""Activation shards (docs/store.md, "Activation shards") as numpy arrays with their metadata."""
import h5py
import numpy as np
import pandas as pd

from .errors import StoreError
from .frames import decode

# The per-row columns of a shard, besides the activations X and Y.
ROW_COLUMNS = ("token_ids", "next_token_ids", "window", "position", "delta")


def bfloat16_to_float32(bits):
    """bfloat16 values stored as their uint16 bits, widened exactly to float32."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


class Shard:
    """One layer's activations of one split of a capture unit: the parts written by the ranks
    of its worker group (window order), read as one.

    `attrs` holds the first part's root attributes (str values decoded) plus `parts` and the
    capture unit's `unit`, `model`, `corpus`, `split` and `layer`; `shard["X"]` is an array
    over all parts (bfloat16 shards widened to float32, float16 kept as float16).
    """

    def __init__(self, paths, info):
        if not paths:
            raise StoreError("a shard needs at least one part")
        self.paths = list(paths)
        with h5py.File(self.paths[0], "r") as f:
            self.attrs = {k: decode(v) for k, v in f.attrs.items()}
            self.names = sorted(f.keys())
        self.attrs.update(info)
        self.attrs["parts"] = len(self.paths)

    def __repr__(self):
        a = self.attrs
        return (f"Shard({a.get('model')}/{a.get('corpus')} {a.get('split')} layer {a.get('layer')}: "
                f"{self.rows} rows, {a.get('dtype')}, {len(self.paths)} part(s))")

    @property
    def rows(self):
        total = 0
        for p in self.paths:
            with h5py.File(p, "r") as f:
                total += int(f.attrs["rows"])
        return total

    def __contains__(self, name):
        return name in self.names

    def __getitem__(self, name):
        """The dataset `name` of every part, concatenated along rows."""
        if name not in self.names:
            raise StoreError(f"{self.paths[0]}: no dataset '{name}' (has: {', '.join(self.names)})")
        blocks = []
        for p in self.paths:
            with h5py.File(p, "r") as f:
                ds = f[name]
                data = ds[()]
                if decode(ds.attrs.get("encoding", "")) == "bfloat16":
                    data = bfloat16_to_float32(data)
                blocks.append(data)
        return np.concatenate(blocks) if len(blocks) > 1 else blocks[0]

    def frame(self):
        """The per-row columns (token_ids, next_token_ids, window, position, delta where stored)
        as a DataFrame: e.g. per-window sums of δ are `shard.frame().groupby("window").delta.sum()`."""
        return pd.DataFrame({c: self[c] for c in ROW_COLUMNS if c in self.names})
