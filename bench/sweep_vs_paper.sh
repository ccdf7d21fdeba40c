#!/usr/bin/env bash
# Benchmark: a whole measurement as a user runs it. `linsweep run` of a spec with `fit` and
# `all_linear` over every layer against the paper's per-layer method in eager PyTorch
# (bench/paper_sweep.py: a capture pass and a substituted pass per layer), on the shape of GPT-2
# Medium (d=1024, 24 layers, 16 heads, vocab 50257; random float32 weights from
# gpt2_reference.py), the same fit and eval tokens (1024 each at context 128), the same λ, the
# same threads, one run. Prints both wall times (model loading included), the ratio
# (target: linsweep >= 3.2x) and the largest difference of the 24 Δ% (target: <= 1e-3 points).
# Usage: bench/sweep_vs_paper.sh [THREADS]   (build first: scripts/build.sh; needs ~4 GB free)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${LINSWEEP_BUILD_DIR:-$root/build}/linsweep"
threads="${1:-$(nproc)}"
py=/usr/bin/python3   # Debian's python3-torch lives here
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
mkdir -p "$work/model"
$py "$root/bench/gpt2_reference.py" make --dir "$work/model" --d-model 1024 --heads 16 --layers 24 --tokens 2048
lam=0.01 batch=8
cat > "$work/spec.yaml" <<YAML
store: $work/store
context: 128
models: [{name: medium, path: $work/model}]
corpora: [{name: random, path: $work/model/tokens.npy}]
splits: {fit: {start: 0, tokens: 1024}, eval: {start: 1024, tokens: 1024}}
experiments: {fit: {lambda: [$lam]}, all_linear: {bootstrap: 100}}
runtime: {batch: $batch}
YAML
t0=$(date +%s.%N)
"$bin" run "$work/spec.yaml" --threads "$threads" --quiet
t1=$(date +%s.%N)
"$bin" query "$work/store" all_linear --columns layer,delta_pct --sort layer --json > "$work/linsweep.json"
$py "$root/bench/paper_sweep.py" --dir "$work/model" --fit 0:1024 --eval 1024:1024 --context 128 --lam "$lam" \
  --batch "$batch" --threads "$threads" > "$work/paper.json"
$py - "$work" "$t0" "$t1" "$threads" <<'PY'
import json, platform, sys
work, t0, t1, threads = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
ours = [r["delta_pct"] for r in json.load(open(f"{work}/linsweep.json"))]
paper = json.load(open(f"{work}/paper.json"))
if len(ours) != len(paper["delta_pct"]):
    sys.exit(f"benchmark: linsweep reported {len(ours)} layers, the paper's method {len(paper['delta_pct'])}")
worst = max(abs(a - b) for a, b in zip(ours, paper["delta_pct"]))
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
print(f"machine: {cpu}; {threads} threads; torch {paper['torch']}")
print("GPT-2 Medium shape, 24 layers, fit 1024 + eval 1024 tokens at context 128")
print(f"linsweep run (stats, fit, all_linear): {t1 - t0:.1f} s; paper's method ({paper['passes']} passes): "
      f"{paper['seconds']:.1f} s")
print(f"ratio paper/linsweep: {paper['seconds'] / (t1 - t0):.2f}x (target >= 3.2x)")
print(f"largest |Δ% linsweep − Δ% paper| over {len(ours)} layers: {worst:.2e} points (target <= 1e-3)")
if worst > 1e-3:
    sys.exit("benchmark: the Δ% disagree beyond 1e-3 points")
PY
