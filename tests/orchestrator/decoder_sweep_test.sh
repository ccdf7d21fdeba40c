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
for table in fits all_linear gates compound token_context progressive; do
  "$bin" query "$work/store" "$table" --format json > "$work/$table.json"
done
/usr/bin/python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
models = {"llama", "mistral", "qwen2", "gemma"}
for table in ("fits", "all_linear", "gates", "compound", "token_context", "progressive"):
    rows = json.load(open(f"{work}/{table}.json"))
    seen = {r["model"] for r in rows}
    assert seen == models, f"{table}: rows of {sorted(seen)}, expected {sorted(models)}"
    print(f"{table}: {len(rows)} rows over {len(seen)} models")
print("decoder sweep: every table has every model")
PY
