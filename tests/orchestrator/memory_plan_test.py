#!/usr/bin/python3
"""Memory planned before anything runs (docs/spec.md, "Memory"), on a Llama-shaped model whose
weights (about 270 MB in float32) outweigh what the process itself holds:

- `plan --json` gives every model and unit kind's need per rank and the peak;
- a spec whose estimate exceeds `runtime.memory_per_rank` is refused with exit 2 and the
  numbers by `plan` and by `run`, before `run` creates the store;
- with `stages: auto` and a limit between the need of one stage and that of two, the plan takes
  two stages, which a worker group of one rank cannot hold (refused) and one of two can.

Usage: memory_plan_test.py LINSWEEP SOURCE_DIR WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys

linsweep, src, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
model = os.path.join(work, "llama-270m")
subprocess.run(["/usr/bin/python3", os.path.join(src, "bench", "llama_checkpoint.py"), model, "--layers", "4", "--d",
                "1024", "--heads", "8", "--kv-heads", "8", "--ff", "4096", "--vocab", "512", "--ctx", "64",
                "--tokens", "4096"], check=True, capture_output=True)
spec = os.path.join(work, "spec.yaml")
with open(spec, "w") as f:
    f.write(f"""store: {work}/store
context: 32
models: [{{name: big, path: {model}}}]
corpora: [{{name: tokens, path: {model}/tokens.npy, format: npy}}]
splits: {{fit: {{start: 0, tokens: 1024}}, eval: {{start: 1024, tokens: 1024}}}}
layers: [0]
experiments: {{fit: {{}}, all_linear: {{bootstrap: 10}}}}
runtime: {{batch: 8}}
""")


def plan(*overrides):
    r = subprocess.run([linsweep, "plan", spec, *overrides, "--json"], capture_output=True, text=True)
    return r.returncode, json.loads(r.stdout)["memory"] if r.returncode == 0 else r.stderr.strip()


code, memory = plan()
assert code == 0, memory
weights = max(r["weights"] for r in memory["rows"])
assert weights > 250e6, memory  # 4 layers of d 1024, d_ff 4096 and the head, in float32
kinds = {r["kind"] for r in memory["rows"]}
assert {"stats", "fit", "all_linear"} <= kinds, kinds
peak1 = memory["peak"]
print(f"one stage: peak {peak1 / 2**20:.0f} MiB (weights {weights / 2**20:.0f} MiB, process "
      f"{memory['process'] / 2**20:.0f} MiB), limit {memory['limit'] / 2**20:.0f} MiB: {memory['limit_source']}")

# Over the limit: plan and run refuse with the numbers; run before the store exists.
for command in ("plan", "run"):
    r = subprocess.run([linsweep, command, spec, "+runtime.memory_per_rank=64MiB"], capture_output=True, text=True)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, (command, r.returncode, r.stderr)
    assert "runtime.memory_per_rank: the plan needs" in lines[0] and "64 MiB allowed" in lines[0], lines[0]
    assert not os.path.exists(f"{work}/store"), f"{command} created the store"
print(f"refused: {lines[0]}")

# stages: auto with room for half the weights: two stages, over two ranks of a group.
limit = int(peak1 - 0.35 * weights)
code, why = plan("+runtime.stages=auto", f"+runtime.memory_per_rank={limit}")
assert code == 2 and "auto needs 2 stages to fit" in why and "runtime.ranks_per_group 1 holds no whole copy" in why, why
code, memory = plan("+runtime.stages=auto", f"+runtime.memory_per_rank={limit}", "+runtime.ranks_per_group=2")
assert code == 0 and memory["stages"] == 2 and memory["peak"] <= limit, memory
print(f"stages auto with {limit / 2**20:.0f} MiB a rank: {memory['stages']} stages, peak "
      f"{memory['peak'] / 2**20:.0f} MiB")
print("memory plan test passed")
