#!/usr/bin/python3
"""A unit's precision is part of what it is (issue: a bfloat16 plan on a float32 store said
"done"), and every unit records it with its peak memory:

- `plan` with +runtime.dtype=bfloat16 on the float32 measure store plans every unit again
  (none done), and without it every unit is done;
- the `units` table (through `linsweep query` and the Python reader alike) gives each unit its
  model's compute dtype, the dtype of the activation shards it wrote or read (float16 in the
  measure store, bfloat16 in the bf16 store, for a capture and every unit computed from one; ""
  for the others) and a peak resident
  memory above what LibTorch alone takes;
- the plan's memory estimate of every unit is within 25% of the peak the unit measured;
- the report says which precision its numbers came from.

Usage: test_precision.py LINSWEEP SOURCE_DIR STORES
"""
import json
import os
import subprocess
import sys
import tempfile

linsweep, src, stores = sys.argv[1:4]
sys.path.insert(0, os.path.join(src, "python"))
from linsweep_store import open_store  # noqa: E402


def plan_json(*overrides):
    r = subprocess.run([linsweep, "plan", os.path.join(src, "examples/fixture_measure.yaml"), *overrides, "--store",
                        os.path.join(stores, "measure"), "--json"], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def plan_counts(*overrides):
    return plan_json(*overrides)["counts"]


counts = plan_counts()
assert set(counts) == {"done"}, counts
bf16 = plan_counts("+runtime.dtype=bfloat16")
assert "done" not in bf16 and sum(bf16.values()) == counts["done"], (counts, bf16)
print(f"plan: float32 {counts}, +runtime.dtype=bfloat16 {bf16}")

for name, shards in (("measure", "float16"), ("bf16", "bfloat16")):
    rows = json.loads(subprocess.run([linsweep, "query", os.path.join(stores, name), "units", "--json"],
                                     capture_output=True, text=True, check=True).stdout)
    reader = open_store(os.path.join(stores, name)).table("units")
    assert len(reader) == len(rows), (len(reader), len(rows))
    by_id = {r["unit"]: r for r in rows}

    def from_shards(r):
        """A capture, or a unit whose numbers come from one (through its dependencies)."""
        deps = json.loads(r["params"]).get("deps", [])
        return r["kind"] == "capture" or any(from_shards(by_id[d]) for d in deps if d in by_id)

    for r in rows:
        assert r["dtype"] == "float32", r
        assert r["activation_dtype"] == (shards if from_shards(r) else ""), r
        assert r["peak_host_mib"] > 50, r  # LibTorch alone takes more than that
    assert list(reader["dtype"]) == [r["dtype"] for r in rows] and \
        list(reader["activation_dtype"]) == [r["activation_dtype"] for r in rows]
    kinds = sorted({(r["kind"], r["activation_dtype"]) for r in rows})
    print(f"{name}: {len(rows)} units, (kind, activation dtype): {kinds}")

estimates = {u["id"]: u["memory"] / 2**20 for u in plan_json()["units"]}
measured = json.loads(subprocess.run([linsweep, "query", os.path.join(stores, "measure"), "units", "--json"],
                                     capture_output=True, text=True, check=True).stdout)
ratios = sorted((estimates[u["unit"]] / u["peak_host_mib"], u["kind"]) for u in measured if u["unit"] in estimates)
assert len(ratios) == len(estimates), (len(ratios), len(estimates))
print(f"memory: estimate / measured peak over {len(ratios)} units: {ratios[0][0]:.3f} ({ratios[0][1]}) to "
      f"{ratios[-1][0]:.3f} ({ratios[-1][1]})")
assert 0.75 <= ratios[0][0] and ratios[-1][0] <= 1.25, ratios

with tempfile.TemporaryDirectory() as out:
    subprocess.run([linsweep, "report", os.path.join(stores, "measure"), "--out", out], capture_output=True, check=True)
    html = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    line = "computed in this precision: tiny-gpt2: float32 compute, float16 activation shards"
    assert line in html, "the report does not say its precision"
print("precision: recorded, part of every unit's identity, and in the report")
