"""A store's committed units for the Python checks, read with h5py: a unit is its unit file
(units/<id>.h5: attributes and /tables) and, when it has arrays, its arrays file beside it
(units/<id>.arrays.h5: /arrays). Unit read both as one: unit["arrays/..."] comes from the
arrays file (or from the unit file of a schema-1 store, which held its arrays)."""
import glob
import os

import h5py


def unit_paths(store, kind="*"):
    """The unit files of committed units of `kind` (all kinds by default), sorted; no arrays files."""
    return [p for p in sorted(glob.glob(f"{store}/units/{kind}-*.h5"))
            if not p.endswith(".arrays.h5") and not os.path.basename(p).startswith(".")]


class Unit:
    def __init__(self, path):
        self.path = path
        self.main = h5py.File(path, "r")
        arrays = path[:-3] + ".arrays.h5"
        self.arrays = h5py.File(arrays, "r") if os.path.exists(arrays) else None
        self.attrs = self.main.attrs

    def _file_for(self, key):
        if self.arrays is not None and key.split("/")[0] == "arrays":
            return self.arrays
        return self.main

    def __getitem__(self, key):
        return self._file_for(key)[key]

    def __contains__(self, key):
        return key in self._file_for(key)

    def close(self):
        self.main.close()
        if self.arrays is not None:
            self.arrays.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
