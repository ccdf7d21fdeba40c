"""open_store(): a linsweep store's tables as DataFrames, its units' metadata, arrays and shards."""
import difflib
import json
import os
import re

import h5py
import pandas as pd

from .errors import StoreError, UnknownNameError
from .frames import concat, decode, default_order, empty, frame
from .seal import verify_seal
from .shards import Shard

# The newest store layout and table schema this reader knows (linsweep's kStoreSchemaVersion).
SCHEMA_VERSION = 2
SOURCES = ("units", "consolidated")
# The columns of linsweep's `units` table (storage/units_table.hpp), in order.
UNITS_COLUMNS = ["unit", "kind", "slot", "params", "version", "host", "rank", "group_ranks", "communicator", "started",
                 "finished", "current", "planned_by", "dtype", "activation_dtype", "peak_host_mib", "peak_device_mib"]
# Those a unit file's attributes give (the others come from the store's plan records).
_ATTRIBUTE_COLUMNS = [c for c in UNITS_COLUMNS if c not in ("current", "planned_by")]
_SHARD_FILE = re.compile(r"^layer(\d+)\.part(\d+)\.h5$")


def open_store(path, source=None):
    """Opens a store for reading (no lock is taken, as linsweep's readers take none).

    `path` is a store directory or its `store.h5`. `source` says where tables come from:
    "units" (the default for a directory) reads the committed unit files, as `linsweep query`
    does: always current, also while a sweep writes; "consolidated" (the default for a
    store.h5 path) reads STORE/store.h5, as `linsweep query --consolidated` does: one file,
    as of its last rebuild. Raises StoreError when `path` is not a linsweep store.
    """
    if source is not None and source not in SOURCES:
        raise StoreError(f"source '{source}' is unknown ({', '.join(SOURCES)})")
    if os.path.isfile(path):
        if os.path.basename(path) != "store.h5":
            raise StoreError(f"{path}: not a store directory or a store.h5")
        return Store(os.path.dirname(os.path.abspath(path)), source or "consolidated")
    return Store(path, source or "units")


def _suggest(name, known):
    close = difflib.get_close_matches(name, known, n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _check_version(path, version):
    if int(version) > SCHEMA_VERSION:
        raise StoreError(f"{path}: schema version {int(version)} is newer than this reader's {SCHEMA_VERSION}; "
                         "use a newer linsweep_store")


def _provenance(params):
    """A unit's provenance JSON ({"slot", "params", "inputs", "deps"}) as a dict ({} if not one)."""
    try:
        p = json.loads(params)
    except (TypeError, ValueError):
        return {}
    return p if isinstance(p, dict) else {}


def _setting_text(value):
    """A swept value as linsweep writes it in `setting` and string columns."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def _with_settings(df, meta):
    """`df` (rows with a `unit` column) with the columns a sweep's settings add, as linsweep's
    reader adds them (storage/setting_columns.hpp): `setting` ("key=value,...", "" for a unit
    every setting shares) and one column per swept key (float where every value is a number,
    NaN where a unit has none; else str). Keys that are columns of `df` already are left out;
    nothing is added when no unit has a setting."""
    settings = {}
    for uid, p in zip(meta["unit"], meta["params"]):
        s = _provenance(p).get("setting")
        if isinstance(s, dict) and s:
            settings[uid] = s
    if not settings:
        return df
    keys = {}
    for s in settings.values():
        for k, v in s.items():
            numeric = isinstance(v, (int, float)) and not isinstance(v, bool)
            keys[k] = keys.get(k, True) and numeric
    df = df.copy()
    if "setting" not in df.columns:
        df["setting"] = [",".join(f"{k}={_setting_text(v)}" for k, v in sorted(settings[u].items()))
                         if u in settings else "" for u in df["unit"]]
    for k in sorted(keys):
        if k in df.columns:
            continue
        values = [settings.get(u, {}).get(k) for u in df["unit"]]
        if keys[k]:
            df[k] = pd.array([float("nan") if v is None else float(v) for v in values], dtype="float64")
        else:
            df[k] = ["" if v is None else _setting_text(v) for v in values]
    return df


class Store:
    """A store opened by open_store(). It reads each file once, when first needed; open the
    store again to see units committed since. Not thread safe."""

    def __init__(self, directory, source):
        self.path = directory
        self.source = source
        marker = os.path.join(directory, "store.json")
        try:
            with open(marker, encoding="utf-8") as f:
                info = json.load(f)
        except (OSError, ValueError) as e:
            raise StoreError(f"{directory}: not a linsweep store (store.json: {e})") from None
        if not isinstance(info, dict) or info.get("format") != "linsweep-store":
            raise StoreError(f"{marker}: not a linsweep store")
        _check_version(marker, info.get("schema_version", 0))
        self._unit_files = None  # unit id -> {"attrs": dict, "tables": {name: DataFrame}, "kinds": {col: kind}}
        self._consolidated = None  # name -> DataFrame (with `unit`), or {} when absent
        self._meta = None

    def __repr__(self):
        return f"Store({self.path!r}, source={self.source!r})"

    # Where things are.
    @property
    def consolidated_path(self):
        return os.path.join(self.path, "store.h5")

    def unit_path(self, unit_id):
        return os.path.join(self.path, "units", unit_id + ".h5")

    def unit_ids(self):
        """Ids of the committed units (the files in units/; staged `.tmp-*` files are not), sorted."""
        try:
            names = os.listdir(os.path.join(self.path, "units"))
        except FileNotFoundError:
            return []
        return sorted(n[:-3] for n in names
                      if n.endswith(".h5") and not n.endswith(".arrays.h5") and len(n) > 3 and not n.startswith("."))

    def arrays_path(self, unit_id):
        """Where a unit's arrays live (schema 2): units/<id>.arrays.h5, beside its unit file."""
        return os.path.join(self.path, "units", unit_id + ".arrays.h5")

    # Reading.
    def _units(self):
        if self._unit_files is None:
            self._unit_files = {uid: self._read_unit(uid) for uid in self.unit_ids()}
        return self._unit_files

    def _read_unit(self, uid):
        path = self.unit_path(uid)
        verify_seal(path)
        try:
            with h5py.File(path, "r") as f:
                attrs = {k: decode(v) for k, v in f.attrs.items()}
                _check_version(path, attrs.get("schema_version", 0))
                tables, kinds = {}, {}
                for name, ds in (f["tables"].items() if "tables" in f else []):
                    rows = ds[()]
                    tables[name] = frame(rows)
                    kinds.update({c: rows.dtype[c].kind for c in rows.dtype.names})
        except OSError as e:
            raise StoreError(f"{path}: cannot be read: {e}") from None
        return {"attrs": attrs, "tables": tables, "kinds": kinds}

    def _store_h5(self, required):
        """store.h5's tables (read once); {} when it is absent or unreadable and not `required`."""
        if self._consolidated is None:
            self._consolidated = {}
            path = self.consolidated_path
            try:
                if not os.path.isfile(path):
                    raise StoreError(f"{path}: missing; run `linsweep rebuild STORE`")
                with h5py.File(path, "r") as f:
                    _check_version(path, f.attrs.get("schema_version", 0))
                    for name, ds in f["tables"].items():
                        rows = ds[()]
                        self._consolidated[name] = frame(rows) if len(rows) else empty(rows.dtype)
            except (OSError, KeyError) as e:
                self._consolidated = StoreError(f"{path}: not readable ({e}); run `linsweep rebuild STORE`")
            except StoreError as e:
                self._consolidated = e
        if isinstance(self._consolidated, StoreError):
            if required:
                raise self._consolidated
            return {}
        return self._consolidated

    # Tables.
    def tables(self):
        """Names of the result tables (those of store.h5, which has every table, and those of
        the unit files), sorted, `units` among them."""
        names = set(self._store_h5(required=self.source == "consolidated"))
        if self.source == "units":
            names.add("units")
            for u in self._units().values():
                names.update(u["tables"])
        return sorted(names)

    def table(self, name, units=True, all=False):
        """The rows of table `name` as a DataFrame, in `linsweep query`'s default order (model,
        corpus, layer, then the other columns), strings as str, with the `unit` column.

        units: join the unit metadata (units()) on `unit`, as columns prefixed `unit_`
        (`unit_kind`, `unit_slot`, `unit_params`, ...). all: as `query --all`, also the rows of
        superseded units, with their `current` and `planned_by` (docs/store.md, "Slots").
        Raises UnknownNameError for a table the store does not have.
        """
        if name == "units":
            return self._units_table(all)
        df = self._rows(name)
        meta = self.units()
        if all:  # as `query --all`: every unit's rows, with its standing
            standing = meta[["unit", "current", "planned_by"]]
            df = df.drop(columns=[c for c in ("current", "planned_by") if c in df.columns])
            df = df.merge(standing, on="unit", how="left")
        else:
            stale = self._superseded(meta)
            if stale:
                df = df[~df["unit"].isin(stale)].reset_index(drop=True)
        df = _with_settings(df, meta)  # last, as linsweep adds them (store.h5 holds them already)
        if units:
            joined = meta.rename(columns={c: "unit_" + c for c in meta.columns if c != "unit"})
            df = df.merge(joined, on="unit", how="left")
        return df

    def _rows(self, name):
        if self.source == "consolidated":
            tables = self._store_h5(required=True)
            if name not in tables:
                raise UnknownNameError(f"unknown table '{name}'{_suggest(name, sorted(tables))} "
                                       f"(known: {', '.join(sorted(tables))})")
            return default_order(tables[name])
        parts, kinds = [], {}
        for uid, u in self._units().items():
            if name in u["tables"]:
                parts.append(u["tables"][name].assign(unit=uid))
                kinds.update(u["kinds"])
        if not parts:
            known = self.tables()
            schema = self._store_h5(required=False).get(name)
            if schema is None:
                raise UnknownNameError(f"unknown table '{name}'{_suggest(name, known)} (known: {', '.join(known)})")
            return schema.iloc[0:0].copy()
        return default_order(concat(parts, kinds))

    # Units.
    def units(self):
        """One row per committed unit, superseded ones included: the columns of linsweep's
        `units` table (`unit`, `kind`, `slot`, `params` (the unit's provenance as JSON: slot,
        params, inputs, deps), `version`, `host`, `rank`, `group_ranks`, `started`, `finished`,
        `current`, `planned_by`, `dtype`, `activation_dtype`, `peak_host_mib`, `peak_device_mib`; see
        docs/store.md), then `deps` (JSON list of unit ids) and,
        from the journal's last `committed` line, `time` (seconds since the epoch), `duration`
        (s) and `tokens`. From store.h5 (source "consolidated"), only the units it holds."""
        if self._meta is not None:
            return self._meta
        if self.source == "consolidated":
            meta = self._store_h5(required=True).get("units")
            meta = meta.copy() if meta is not None else pd.DataFrame(columns=UNITS_COLUMNS)
        else:
            rows = [self._unit_row(uid, u["attrs"]) for uid, u in self._units().items()]
            meta = pd.DataFrame(rows, columns=_ATTRIBUTE_COLUMNS)
            standing = self._standings(meta)
            meta["slot"] = [standing[u][2] for u in meta["unit"]]
            meta["current"] = pd.array([int(standing[u][0]) for u in meta["unit"]], dtype="int64")
            meta["planned_by"] = pd.array([standing[u][1] for u in meta["unit"]], dtype="int64")
            meta = meta[UNITS_COLUMNS]
        meta["deps"] = [json.dumps(_provenance(p).get("deps", [])) for p in meta["params"]]
        journal = self._journal()
        for col, dtype in (("time", float), ("duration", float), ("tokens", "Int64")):
            meta[col] = pd.array([journal.get(uid, {}).get(col) for uid in meta["unit"]], dtype=dtype)
        self._meta = meta.sort_values("unit", kind="mergesort").reset_index(drop=True)
        return self._meta

    def _units_table(self, all):
        """The `units` table as `linsweep query STORE units [--all]` prints it."""
        meta = self.units()
        table = _with_settings(meta[UNITS_COLUMNS], meta)
        if not all:
            table = table[table["current"] == 1]
        return default_order(table)

    @staticmethod
    def _unit_row(uid, attrs):
        known = bool(attrs.get("linsweep_version", ""))  # schema-1 units carry no provenance
        return {"unit": uid, "kind": attrs.get("kind", ""), "slot": "", "params": attrs.get("params", ""),
                "version": attrs.get("linsweep_version", ""), "host": attrs.get("host", ""),
                "rank": int(attrs["rank"]) if known else -1,
                "group_ranks": int(attrs["group_ranks"]) if known else -1,
                "communicator": attrs.get("communicator", ""),
                "started": float(attrs["started"]) if known else float("nan"),
                "finished": float(attrs["finished"]) if known else float("nan"),
                "dtype": attrs.get("dtype", ""), "activation_dtype": attrs.get("activation_dtype", ""),
                "peak_host_mib": float(attrs.get("peak_host_mib", float("nan"))),
                "peak_device_mib": float(attrs.get("peak_device_mib", float("nan")))}

    def _plan_records(self):
        """plans/<seq>.json, by seq (docs/store.md, "Slots")."""
        d = os.path.join(self.path, "plans")
        try:
            names = os.listdir(d)
        except FileNotFoundError:
            return []
        records = []
        for n in names:
            if n.endswith(".json") and n[:-5].isdigit():
                with open(os.path.join(d, n), encoding="utf-8") as f:
                    records.append((int(n[:-5]), json.load(f).get("slots", {})))
        return sorted(records)

    def _standings(self, meta):
        """unit -> (current, planned_by, slot), by linsweep's rule (storage/unit_standing.hpp):
        the latest plan record that lists a slot names its current unit; a slot no record lists
        keeps its most recently committed unit."""
        records = self._plan_records()
        latest, planned_by = {}, {}
        for seq, slots in records:
            for slot, uid in slots.items():
                latest[slot] = uid
                planned_by[uid] = seq
        order = {}
        for i, e in enumerate(self._journal_events(), 1):
            if e.get("event") == "committed":
                order[e.get("unit")] = i
        slot_of = {}
        for u, p in zip(meta["unit"], meta["params"]):
            s = _provenance(p).get("slot")
            slot_of[u] = s if isinstance(s, str) and s else "unit:" + u
        slot_of.update({uid: slot for _, slots in records for slot, uid in slots.items() if uid in slot_of})
        newest = {}
        for u, slot in slot_of.items():
            if slot not in latest and (slot not in newest or (order.get(u, 0), u) > (order.get(newest[slot], 0), newest[slot])):
                newest[slot] = u
        return {u: ((latest[s] == u) if s in latest else (newest[s] == u), planned_by.get(u, 0), s)
                for u, s in slot_of.items()}

    def _journal_events(self):
        """journal.jsonl's events in order (torn or foreign lines are skipped)."""
        events = []
        try:
            with open(os.path.join(self.path, "journal.jsonl"), "rb") as f:
                for line in f:
                    try:
                        e = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(e, dict):
                        events.append(e)
        except FileNotFoundError:
            pass
        return events

    def _journal(self):
        """The last `committed` event of each unit."""
        return {e["unit"]: e for e in self._journal_events()
                if e.get("event") == "committed" and isinstance(e.get("unit"), str)}

    @staticmethod
    def _superseded(meta):
        """Units that are not their slot's current unit."""
        return set(meta.loc[meta["current"] == 0, "unit"])

    def unit_arrays(self, unit_id):
        """Every array of a unit (`/arrays/…`: surrogates, gates, clusters, capture layout) by
        its path below /arrays, e.g. "surrogates/tiny-gpt2/stream-a/layer0/lambda=0.01/W"."""
        path = self.unit_path(unit_id)
        if not os.path.isfile(path):
            ids = self.unit_ids()
            raise UnknownNameError(f"no committed unit '{unit_id}'{_suggest(unit_id, ids)}")
        if os.path.isfile(self.arrays_path(unit_id)):  # schema 2: the arrays beside the unit file
            path = self.arrays_path(unit_id)
        verify_seal(path)
        out = {}
        with h5py.File(path, "r") as f:
            if "arrays" in f:
                f["arrays"].visititems(lambda n, o: out.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset) else None)
        return out

    # Activation shards.
    def shards(self):
        """One row per shard (all parts of one capture unit's split and layer): `unit`, `model`,
        `corpus`, `split`, `layer`, `parts`, `rows`, `dtype`, `path` (the first part)."""
        root = os.path.join(self.path, "activations")
        found = {}
        for dirpath, _, files in os.walk(root):
            rel = os.path.relpath(dirpath, root).split(os.sep)
            if len(rel) != 2 or any(p.startswith(".") for p in rel):
                continue
            for name in files:
                m = _SHARD_FILE.match(name)
                if m:
                    found.setdefault((rel[0], rel[1], int(m.group(1))), []).append(
                        (int(m.group(2)), os.path.join(dirpath, name)))
        slots = dict(zip(self.units()["unit"], self.units()["slot"])) if found else {}
        rows = []
        for (uid, split, layer), parts in sorted(found.items()):
            paths = [p for _, p in sorted(parts)]
            slot = str(slots.get(uid, "")).split("/")
            info = {"unit": uid, "model": slot[1] if len(slot) > 1 else "", "corpus": slot[2] if len(slot) > 2 else "",
                    "split": split, "layer": layer}
            s = Shard(paths, info)
            rows.append({**info, "parts": len(paths), "rows": s.rows, "dtype": s.attrs.get("dtype", ""),
                         "path": paths[0]})
        cols = ["unit", "model", "corpus", "split", "layer", "parts", "rows", "dtype", "path"]
        return pd.DataFrame(rows, columns=cols)

    def shard(self, model=None, corpus=None, split=None, layer=None, unit=None):
        """The one shard that matches every given field (see shards()), as a Shard."""
        listing = self.shards()
        want = {"model": model, "corpus": corpus, "split": split, "layer": layer, "unit": unit}
        sel = listing
        for col, v in want.items():
            if v is not None:
                sel = sel[sel[col] == v]
        if len(sel) != 1:
            given = ", ".join(f"{k}={v}" for k, v in want.items() if v is not None) or "no filter"
            raise UnknownNameError(f"{self.path}: {len(sel)} shards match {given} (of {len(listing)}; see shards())")
        row = sel.iloc[0]
        d = os.path.dirname(row["path"])
        paths = sorted((int(_SHARD_FILE.match(n).group(2)), os.path.join(d, n))
                       for n in os.listdir(d) if _SHARD_FILE.match(n) and int(_SHARD_FILE.match(n).group(1)) == row["layer"])
        info = {k: (int(row[k]) if k == "layer" else row[k]) for k in ("unit", "model", "corpus", "split", "layer")}
        return Shard([p for _, p in paths], info)
