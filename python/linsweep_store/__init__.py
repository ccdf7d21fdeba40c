"""Reads linsweep result stores into pandas and numpy (docs/store.md, "Reading a store from Python").

    from linsweep_store import open_store
    store = open_store("runs/demo/store")
    store.table("all_linear")          # a DataFrame, strings decoded, unit metadata joined
    store.shard(model="gpt2-s", corpus="news", split="gate", layer=3)["X"]
    Tokenizer("models/gpt2-s").decode(ids)   # token ids back to text

Needs only numpy, h5py and pandas.
"""
from .errors import StoreError, UnknownNameError
from .seal import verify_seal
from .shards import Shard, bfloat16_to_float32
from .store import SCHEMA_VERSION, Store, open_store
from .tokenizer import Tokenizer

__version__ = "1.0.0"
__all__ = ["open_store", "Store", "Shard", "StoreError", "UnknownNameError", "verify_seal", "bfloat16_to_float32",
           "SCHEMA_VERSION", "Tokenizer"]
