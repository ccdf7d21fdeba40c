#!/usr/bin/env bash
# The methods on gated MLPs and mixtures of experts: a sweep (fit, all_linear, gate, compound,
# token_context, progressive, experts) over a Llama, a Mistral, a Qwen2 and a Gemma
# (tests/support/make_decoder_fixtures.py, stored in float32, bfloat16, float16 and float32), a
# dense Qwen3 and a Qwen2-MoE (tests/data/models/hf_zoo: a dense first layer, six experts, top-2,
# a shared expert) runs to the end; every table has rows of every model, but `experts`, whose
# rows are the MoE's sparse layers' experts alone (the dense models have none) and agree with the
# float64 reference (check_experts.py).
# Usage: decoder_sweep_test.sh LINSWEEP_BINARY SOURCE_DIR WORK_DIR
set -euo pipefail
bin="$1"; src="$(cd "$2" && pwd)"; work="$3"
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
  - {name: qwen3, path: $src/tests/data/models/hf_zoo/qwen3-f32}
  - {name: qwen2_moe, path: $src/tests/data/models/hf_zoo/qwen2-moe-f32}
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
  experts: {bootstrap: 100}
runtime:
  threads: 2
YAML
"$bin" run "$work/spec.yaml" --quiet
"$bin" catalogue --json > "$work/catalogue.json"
/usr/bin/python3 - "$work" "$bin" <<'PY'
import json, math, subprocess, sys
work, binary = sys.argv[1], sys.argv[2]
models = {"llama", "mistral", "qwen2", "gemma", "qwen3", "qwen2_moe"}
filled = 0
for table in json.load(open(f"{work}/catalogue.json")):
    rows = json.loads(subprocess.run([binary, "query", f"{work}/store", table["name"], "--format", "json"],
                                     capture_output=True, text=True, check=True).stdout)
    if not rows or "model" not in rows[0]:
        continue
    seen = {r["model"] for r in rows}
    want = {"qwen2_moe"} if table["name"] == "experts" else models
    assert seen == want, f"{table['name']}: rows of {sorted(seen)}, expected {sorted(want)}"
    print(f"{table['name']}: {len(rows)} rows over {len(seen)} models")
    filled += 1
    if table["name"] != "experts":
        continue
    # Qwen2-MoE's layer 0 is dense (mlp_only_layers): rows for its six experts of layers 1 and 2.
    assert sorted((r["layer"], r["expert"]) for r in rows) == [(l, e) for l in (1, 2) for e in range(6)], rows
    for l in (1, 2):
        layer = [r for r in rows if r["layer"] == l]
        assert abs(sum(r["share"] for r in layer) - 1) < 1e-9, layer
        assert sum(r["fit_rows"] for r in layer) == 2 * 1024, layer  # every fit position picks two experts
    for r in rows:
        assert r["ci_low"] <= r["delta_pct"] <= r["ci_high"] and r["r2"] <= 1, r
        assert 0 < r["router_entropy"] <= math.log(6) + 1e-9 and 0 <= r["topk_entropy"] <= math.log(2) + 1e-9, r
        print(f"  layer {r['layer']} expert {r['expert']}: share {r['share']:.3f} fit rows {r['fit_rows']} "
              f"R² {r['r2']:.3f} Δ% {r['delta_pct']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}] {r['flag']}")
assert filled >= 7, f"only {filled} tables have rows: the seven experiments fill at least seven"
print("decoder sweep: every table has every model (experts: the MoE's)")
PY
/usr/bin/python3 "$src/tests/orchestrator/check_experts.py" "$bin" "$work/store" qwen2_moe \
  "$src/tests/data/models/hf_zoo/qwen2-moe-f32" "$work/models/tokens.npy" 32 0.01 0 1024 2560 512
