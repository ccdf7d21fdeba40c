#!/usr/bin/env bash
# The memory plan of a Llama-3-70B sweep on GPUs, on paper (docs/gpu.md, "A model bigger than one
# GPU"): writes Llama-3-70B's config.json (no weights: `plan --memory-only` reads none) and a spec
# of the measurements a split model runs (stats, fit, all_linear) on five of its layers in bfloat16, then prints `linsweep plan --memory-only` for
# 4 H100s (80 GB each: 78 GiB a rank) and 2 H200s (141 GB: 139 GiB a rank), with stages: auto.
# Usage: bench/plan_70b.sh [BUILD_DIR] [--json]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
json=()
[[ "${2:-}" == "--json" ]] && json=(--json)
work=$(mktemp -d "${TMPDIR:-/tmp}/plan70b.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/llama-3-70b"
cat >"$work/llama-3-70b/config.json" <<'JSON'
{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 128256, "hidden_size": 8192,
 "intermediate_size": 28672, "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8,
 "hidden_act": "silu", "max_position_embeddings": 8192, "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
 "tie_word_embeddings": false, "attention_bias": false, "mlp_bias": false, "bos_token_id": 128000,
 "eos_token_id": 128001, "torch_dtype": "bfloat16"}
JSON
for layout in "4 78GiB H100" "2 139GiB H200"; do
  read -r ranks memory gpu <<<"$layout"
  cat >"$work/spec-$gpu.yaml" <<YAML
store: $work/store-$gpu
context: 1024
models: [{name: llama-3-70b, path: $work/llama-3-70b}]
corpora: [{name: tokens, path: $root/tests/data/models/tiny-gpt2.tokens.npy, format: npy}]
splits:
  fit: {start: 0, tokens: 262144}
  gate: {start: 262144, tokens: 131072}
  select: {start: 393216, tokens: 32768}
  eval: {start: 425984, tokens: 65536}
layers: [0, 20, 40, 60, 79]
experiments: {fit: {}, all_linear: {}}
runtime: {device: cuda, dtype: bfloat16, batch: 1, ranks_per_group: $ranks, stages: auto, memory_per_rank: $memory}
resources: {nodes: 1, tasks_per_node: $((ranks + 1)), gpus_per_node: $ranks}
YAML
  echo "== Llama-3-70B, bfloat16, $ranks x $gpu ($memory a rank)"
  "$build/linsweep" plan "$work/spec-$gpu.yaml" --memory-only "${json[@]}"
done
