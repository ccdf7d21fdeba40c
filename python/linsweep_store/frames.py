"""Compound HDF5 datasets as pandas DataFrames: decoded strings, missing columns, row order."""
import numpy as np
import pandas as pd

# The columns `linsweep query` orders rows by first (then every other column, in order).
ORDER_FIRST = ("model", "corpus", "layer")


def decode(value):
    """A fixed-length HDF5 string (bytes, null-padded) as str; anything else unchanged."""
    return value.decode("utf-8") if isinstance(value, bytes) else value


def frame(rows):
    """A structured numpy array (a table dataset read whole) as a DataFrame with str columns."""
    data = {}
    for name in rows.dtype.names:
        col = rows[name]
        if col.dtype.kind == "S":
            data[name] = pd.Series([v.decode("utf-8") for v in col.tolist()], dtype=object)
        else:
            data[name] = pd.Series(col)
    return pd.DataFrame(data, columns=list(rows.dtype.names))


def missing_value(kind):
    """What linsweep reads for a column that a unit file lacks: NaN, -1 or ""."""
    return {"f": np.nan, "i": -1}.get(kind, "")


def empty(dtype):
    """A DataFrame without rows with the columns (and types) of a compound dtype."""
    return pd.DataFrame({n: pd.Series(dtype=object if dtype[n].kind == "S" else dtype[n]) for n in dtype.names})


def concat(parts, kinds):
    """Row blocks with possibly different columns as one frame: the union of the columns in the
    order first seen, each block's absent columns filled with missing_value(kind)."""
    columns = []
    for p in parts:
        columns += [c for c in p.columns if c not in columns]
    filled = []
    for p in parts:
        p = p.copy()
        for c in columns:
            if c not in p.columns:
                p[c] = missing_value(kinds.get(c, "S"))
        filled.append(p[columns])
    return pd.concat(filled, ignore_index=True) if filled else pd.DataFrame(columns=columns)


def default_order(df):
    """Rows in `linsweep query`'s default order: model, corpus, layer, then every other column
    (NaN last), so that the order never depends on unit ids alone."""
    keys = [c for c in ORDER_FIRST if c in df.columns] + [c for c in df.columns if c not in ORDER_FIRST]
    if df.empty or not keys:
        return df.reset_index(drop=True)
    return df.sort_values(keys, kind="mergesort", na_position="last").reset_index(drop=True)
