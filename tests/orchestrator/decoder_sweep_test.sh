#!/usr/bin/env bash
# The methods on gated MLPs: a sweep (fit, all_linear, gate, compound, token_context,
# progressive) over a Llama, a Mistral, a Qwen2 and a Gemma (tests/support/make_decoder_fixtures.py,
# stored in float32, bfloat16, float16 and float32) runs to the end, and every table has rows of
# every model.
# Usage: decoder_sweep_test.sh LINSWEEP_BINARY SOURCE_DIR WORK_DIR
set -euo pipefail
bin="$1"; src="$2"; work="$3"
rm -rf "$work"; mkdir -p "$work"
/usr/bin/python3 "$src/tests/support/make_decoder_fixtures.py" "$work/models"
cat > "$work/spec.yaml" <<YAML
store: $work/store
context: 32
models:
  - {name: llama, path: $work/models/tiny-llama-f32}
  - {name: mistral, path: $work/models/tiny-mistral-bf16}
  - {name: qwen2, path: $work/models/tiny-qwen2-f16}
  - {name: gemma, path: $work/models/tiny-gemma-f32}
corpora:
  - {name: stream, path: $work/models/tokens.npy, format: npy}
splits:
  fit:    {start: 0,    tokens: 1024}
  gate:   {start: 1024, tokens: 1024}
  select: {start: 2048, tokens: 512}
  eval:   {start: 2560, tokens: 512}
  train:  {start: 3072, tokens: 2048}
layers: all
experiments:
  fit: {lambda: [0.01, 1.0]}
  all_linear: {bootstrap: 100}
  gate: {bootstrap: 100, curve_steps: 0}
  compound: {bootstrap: 100}
  token_context: {bootstrap: 100}
  progressive: {steps_per_layer: 2, final_steps: 2, batch: 2, checkpoint_every: 0, save_model: false}
runtime:
  threads: 2
YAML
"$bin" run "$work/spec.yaml" --quiet
"$bin" catalogue --json > "$work/catalogue.json"
/usr/bin/python3 - "$work" "$bin" <<'PY'
import json, subprocess, sys
work, binary = sys.argv[1], sys.argv[2]
models = {"llama", "mistral", "qwen2", "gemma"}
filled = 0
for table in json.load(open(f"{work}/catalogue.json")):
    rows = json.loads(subprocess.run([binary, "query", f"{work}/store", table["name"], "--format", "json"],
                                     capture_output=True, text=True, check=True).stdout)
    if not rows or "model" not in rows[0]:
        continue
    seen = {r["model"] for r in rows}
    assert seen == models, f"{table['name']}: rows of {sorted(seen)}, expected {sorted(models)}"
    print(f"{table['name']}: {len(rows)} rows over {len(seen)} models")
    filled += 1
assert filled >= 6, f"only {filled} tables have rows: the six experiments fill at least six"
print("decoder sweep: every table has every model")
PY
