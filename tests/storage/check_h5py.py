#!/usr/bin/python3
"""Opens a linsweep store and an activation shard with h5py alone (no project code)."""
import subprocess
import sys

import h5py
import numpy as np

store, shard = sys.argv[1], sys.argv[2]
with h5py.File(f"{store}/store.h5", "r") as f:
    assert f.attrs["schema_version"] == 2, f.attrs["schema_version"]
    names = sorted(f["tables"].keys())
    expected = sorted(["fits", "all_linear", "gates", "units"])  # the storage tests' tables, and the store's own
    assert names == expected, names
    for name in names:
        rows = f["tables"][name][:]
        assert "unit" in rows.dtype.names and (name == "units" or rows.dtype.names[-1] == "unit"), rows.dtype.names
    units = f["tables/units"][:]
    assert len(units) == f.attrs["units"] and all(units["current"] == 1), units
    al = f["tables/all_linear"][:]
    assert len(al) > 0 and al["layer"].dtype == np.int64 and al["ppl_base"].dtype == np.float64
    assert al["model"][0].decode().startswith("model-"), al["model"][0]
with h5py.File(shard, "r") as f:
    x = f["X"][:]
    assert x.dtype == np.float16, x.dtype
    assert np.allclose(x.astype(np.float32), (0.5 * np.arange(16)).reshape(2, 8))
    assert f["Y"].dtype == np.float16 and f["delta"].dtype == np.float32
    assert list(f["token_ids"][:]) == [5, 7] and f["window"].dtype == np.int64
    assert list(f["next_token_ids"][:]) == [7, 9], f["next_token_ids"][:]
    assert f["X"].chunks is not None, "X must be chunked"
out = subprocess.run(["h5dump", "-H", f"{store}/store.h5"], capture_output=True, text=True, check=True).stdout
assert 'DATASET "all_linear"' in out and "H5T_COMPOUND" in out, out[:400]
out = subprocess.run(["h5dump", "-H", shard], capture_output=True, text=True, check=True).stdout
assert 'DATASET "X"' in out and 'DATASET "delta"' in out, out[:400]
print("h5py: read", len(names), "tables and the shard; h5dump -H lists the layout")
