#!/usr/bin/python3
"""Makes the stores the Python reader's tests read (ctest fixture `python_stores`):

  OUT/measure   examples/fixture_measure.yaml (every measurement experiment; float16 shards)
  OUT/training  examples/fixture_training.yaml (progressive, finetune, training_loss, soft_gates)
  OUT/bf16      one model, one corpus, layer 0, token_context, bfloat16 shards (by overrides)
  OUT/sweep     one model, one corpus, layers 0-1, fit and all_linear, swept over context and
                fit.lambda (`-m`): four settings side by side

Usage: make_stores.py LINSWEEP SOURCE_DIR OUT
"""
import os
import shutil
import subprocess
import sys

linsweep, src, out = sys.argv[1:4]
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
runs = {
    "measure": ["examples/fixture_measure.yaml"],
    "training": ["examples/fixture_training.yaml"],
    "bf16": ["examples/fixture_measure.yaml", "models=[{name: tiny-gpt2, path: ../tests/data/models/tiny-gpt2}]",
             "corpora=[{name: stream-a, path: ../tests/data/models/tiny-gpt2.tokens.npy, format: npy}]",
             "layers=[0]", "experiments={token_context: {}}", "+runtime.activation_dtype=bfloat16"],
    "sweep": ["examples/fixture_measure.yaml", "models=[{name: tiny-gpt2, path: ../tests/data/models/tiny-gpt2}]",
              "corpora=[{name: stream-a, path: ../tests/data/models/tiny-gpt2.tokens.npy, format: npy}]",
              "layers=[0,1]", "experiments={fit: {lambda: [0.01]}, all_linear: {bootstrap: 200}}",
              "-m", "context=16,32", "fit.lambda=[0.01],[10]"],
}
for name, args in runs.items():
    spec, overrides = os.path.join(src, args[0]), args[1:]
    cmd = [linsweep, "run", spec, *overrides, "--store", os.path.join(out, name), "--quiet"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"make_stores: {' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
    print(f"make_stores: {name}: {r.stdout.strip().splitlines()[-1] if r.stdout.strip() else 'done'}")
