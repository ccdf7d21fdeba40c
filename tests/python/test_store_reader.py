#!/usr/bin/python3
"""The Python reader (python/linsweep_store) against the real binary: every table of the fixture
stores equals `linsweep query --format json` (unit files and --consolidated), row for row and
bit for bit; unit metadata, shards, seals, and a plan record that supersedes a unit.

Usage: test_store_reader.py LINSWEEP SOURCE_DIR STORES   (STORES: tests/python/make_stores.py's OUT)
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

LINSWEEP, SRC, STORES = sys.argv[1:4]
sys.path.insert(0, os.path.join(SRC, "python"))
sys.path.insert(0, os.path.join(SRC, "tests", "support"))
import numerics  # noqa: E402
from linsweep_store import StoreError, UnknownNameError, bfloat16_to_float32, open_store  # noqa: E402

STORE_NAMES = ("measure", "training", "bf16", "sweep")


def query(store, table, *extra):
    r = subprocess.run([LINSWEEP, "query", store, table, "--format", "json", *extra], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"linsweep query {table} exited {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


def known_tables(store):
    """The tables linsweep knows, from its own error message for an unknown one."""
    r = subprocess.run([LINSWEEP, "query", store, "no_such_table"], capture_output=True, text=True)
    assert r.returncode == 2, r
    return re.search(r"\(known: ([^)]*)\)", r.stderr).group(1).split(", ")


def scratch_store(test, name):
    """A copy of the fixture store STORES/name in a temporary directory removed after test."""
    d = tempfile.mkdtemp()
    test.addCleanup(shutil.rmtree, d)
    store = os.path.join(d, "store")
    shutil.copytree(os.path.join(STORES, name), store, symlinks=True)
    return store


def plain(v):
    """A DataFrame cell as json.loads gives it: NaN as None, numpy scalars as Python numbers."""
    if isinstance(v, (float, np.floating)):
        return None if math.isnan(v) else float(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    return v


class Tables(unittest.TestCase):
    def compare(self, df, rows, what):
        self.assertEqual(len(df), len(rows), what)
        for i, row in enumerate(rows):
            self.assertEqual(list(df.columns), list(row.keys()), f"{what}: columns (and their order)")
            got = {c: plain(v) for c, v in zip(df.columns, df.iloc[i].tolist())}
            self.assertEqual(got, row, f"{what}: row {i}")

    def test_every_table_equals_query_json(self):
        for name in STORE_NAMES:
            path = os.path.join(STORES, name)
            store, consolidated = open_store(path), open_store(os.path.join(path, "store.h5"))
            self.assertEqual(consolidated.source, "consolidated")
            tables = known_tables(path)
            self.assertEqual(store.tables(), sorted(tables), name)
            filled = 0
            for table in tables:
                with self.subTest(store=name, table=table):
                    rows = query(path, table)
                    df = store.table(table, units=False)
                    self.compare(df, rows, f"{name}/{table}")
                    self.compare(consolidated.table(table, units=False), query(path, table, "--consolidated"),
                                 f"{name}/{table} --consolidated")
                    for col, kind in zip(df.columns, df.dtypes):
                        if kind == object:
                            self.assertTrue(all(isinstance(v, str) for v in df[col]), f"{table}.{col} is str")
                    filled += bool(rows)
            self.assertGreater(filled, 0, f"{name}: some table has rows")

    def test_unit_metadata_is_joined(self):
        store = open_store(os.path.join(STORES, "measure"))
        units = store.units()
        self.assertEqual(sorted(units["unit"]), store.unit_ids())
        files = os.listdir(os.path.join(STORES, "measure", "units"))
        self.assertEqual(len(units), len([n for n in files if not n.endswith(".arrays.h5")]))
        df = store.table("gates")
        self.assertGreater(len(df), 0)
        for _, r in df.iterrows():
            self.assertEqual(r["unit_kind"], r["unit"].split("-")[0])
            self.assertEqual(r["unit_slot"], f"gate/{r['model']}/{r['corpus']}/layer{r['layer']}")
            self.assertIn("variants", json.loads(r["unit_params"])["params"])
            self.assertEqual(len(json.loads(r["unit_deps"])), 2)
            self.assertTrue(r["unit_host"])
            self.assertGreater(r["unit_duration"], 0)
        self.assertEqual(list(df.columns[: len(query(store.path, "gates")[0])]), list(query(store.path, "gates")[0]))

    def test_unknown_names(self):
        store = open_store(os.path.join(STORES, "measure"))
        with self.assertRaises(UnknownNameError) as e:
            store.table("gatse")
        self.assertIn("did you mean 'gates'?", str(e.exception))
        with self.assertRaises(KeyError):
            store.table("nothing")
        with self.assertRaises(UnknownNameError):
            store.unit_arrays("fit-000")
        with self.assertRaises(StoreError) as e:
            open_store(os.path.join(STORES, "measure", "units"))
        self.assertIn("not a linsweep store", str(e.exception))


class Shards(unittest.TestCase):
    def test_float16_shards(self):
        store = open_store(os.path.join(STORES, "measure"))
        listing = store.shards()
        files = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(store.path, "activations")) for f in fs]
        self.assertEqual(int(listing["parts"].sum()), len(files))
        self.assertEqual(set(listing["split"]), {"gate", "select", "eval"})
        row = listing.iloc[0]
        shard = store.shard(unit=row["unit"], split=row["split"], layer=row["layer"])
        self.assertEqual(shard.attrs["model"], row["model"])
        self.assertEqual(store.units().set_index("unit").loc[row["unit"], "slot"],
                         f"capture/{row['model']}/{row['corpus']}")
        with h5py.File(row["path"], "r") as f:
            self.assertTrue(np.array_equal(shard["X"], f["X"][()]))
            self.assertEqual(shard["X"].dtype, np.float16)
            self.assertEqual(shard.rows, int(f.attrs["rows"]))
        frame = shard.frame()
        self.assertEqual(list(frame.columns), ["token_ids", "next_token_ids", "window", "position", "delta"])
        per_window = frame.groupby("window").delta.sum()
        self.assertEqual(len(per_window), frame["window"].nunique())
        self.assertTrue(np.isfinite(per_window).all())
        with self.assertRaises(UnknownNameError):
            store.shard(model=row["model"])  # several splits and layers match

    def test_bfloat16_shards_widen_to_float32(self):
        bf = open_store(os.path.join(STORES, "bf16")).shard(model="tiny-gpt2", corpus="stream-a", split="gate", layer=0)
        h = open_store(os.path.join(STORES, "measure")).shard(model="tiny-gpt2", corpus="stream-a", split="gate",
                                                               layer=0)
        self.assertEqual(bf.attrs["dtype"], "bfloat16")
        x = bf["X"]
        self.assertEqual(x.dtype, np.float32)
        with h5py.File(bf.paths[0], "r") as f:
            self.assertTrue(np.array_equal(x, bfloat16_to_float32(f["X"][()])))
        # Both round the same float32 activations to nearest (numerics.md, "Activation shards").
        ref = h["X"].astype(np.float32)
        largest = np.maximum(np.abs(x), np.abs(ref)).astype(np.float64)
        bound = (numerics.U_BF16 + numerics.U_F16) * largest / (1 - numerics.U_BF16) + numerics.F16_SUBNORMAL / 2
        self.assertTrue(np.all(np.abs(x.astype(np.float64) - ref) <= bound), float(np.max(np.abs(x.astype(np.float64) - ref) - bound)))
        self.assertTrue(np.array_equal(bf["token_ids"], h["token_ids"]))


class Seals(unittest.TestCase):
    def setUp(self):
        self.store = scratch_store(self, "bf16")

    def test_damaged_unit_is_refused(self):
        names = sorted(n for n in os.listdir(os.path.join(self.store, "units")) if not n.endswith(".arrays.h5"))
        unit = os.path.join(self.store, "units", names[0])
        with open(unit, "r+b") as f:
            f.seek(-1, os.SEEK_END)
            last = f.read(1)
            f.seek(-1, os.SEEK_END)
            f.write(bytes([last[0] ^ 0x20]))
        with self.assertRaises(StoreError) as e:
            open_store(self.store).table("token_context")
        self.assertIn(unit, str(e.exception))
        self.assertIn("checksum mismatch", str(e.exception))
        r = subprocess.run([LINSWEEP, "query", self.store, "token_context"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)  # linsweep refuses it too

    def test_newer_schema_is_refused(self):
        with open(os.path.join(self.store, "store.json"), "w") as f:
            json.dump({"format": "linsweep-store", "schema_version": 7}, f)
        with self.assertRaises(StoreError) as e:
            open_store(self.store)
        self.assertIn("newer than this reader's 2", str(e.exception))


class UnitsTable(unittest.TestCase):
    """A plan record that gives a unit's slot to another unit (as a changed spec does): the
    reader, like `linsweep query`, hides the superseded unit's rows unless asked."""

    def setUp(self):
        self.store = scratch_store(self, "measure")

    def test_superseded_units_are_hidden_unless_asked(self):
        base = open_store(self.store)
        rows = base.table("all_linear")
        stale = rows["unit"].iloc[0]
        slot = base.units().set_index("unit").loc[stale, "slot"]
        plans = os.path.join(self.store, "plans")
        os.makedirs(plans, exist_ok=True)
        seq = 1 + max([int(n[:-5]) for n in os.listdir(plans) if n[:-5].isdigit()] or [0])
        with open(os.path.join(plans, f"{seq}.json"), "w") as f:
            json.dump({"seq": seq, "command": "run", "slots": {slot: "all_linear-not-committed"}}, f)
        store = open_store(self.store)
        current = store.table("all_linear")
        self.assertNotIn(stale, set(current["unit"]))
        self.assertEqual(len(current), len(rows) - int((rows["unit"] == stale).sum()))
        self.compare_query(store.table("all_linear", units=False), "all_linear")
        every = store.table("all_linear", all=True)
        self.assertEqual(len(every), len(rows))
        self.assertEqual(sorted(every.loc[every["unit"] == stale, "unit_current"].unique()), [0])
        self.compare_query(store.table("all_linear", units=False, all=True), "all_linear", "--all")
        self.compare_query(store.table("units", units=False), "units")
        self.compare_query(store.table("units", units=False, all=True), "units", "--all")

    def compare_query(self, df, table, *extra):
        Tables.compare(self, df, query(self.store, table, *extra), f"{table} {' '.join(extra)}")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
