#!/usr/bin/env bash
# Benchmark: evaluation with one layer routed (a trained linear Gate picks, per position, the
# MLP or a d×d affine surrogate: MlpHook::use_routed) against plain evaluation, forward +
# scoring (hidden_states, score_hidden) of the same windows in one process.
# Model: the shape of GPT-2 Medium (d=1024, 24 layers, 16 heads, vocab 50257) with random
# weights (bench/gpt2_reference.py); 4 windows of 256 tokens, batch 2, layer 12 routed, 2
# threads. Plain and routed passes alternate (one untimed warm-up each); medians of 5.
# Routing computes the MLP at every position and the affine map at every position, then
# selects: its extra cost is one d×d GEMM and the gate's logits, for one layer of 24.
# Target: routed time <= 1.3x plain.
# Usage: bench/routed_eval.sh [WINDOWS] [REPEATS]   (build first: ninja -C build bench_routed_eval)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${LINSWEEP_BUILD_DIR:-$root/build}/bench_routed_eval"
windows="${1:-4}"; repeats="${2:-5}"; context=256
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$root/bench/gpt2_reference.py" make --dir "$work" --d-model 1024 --heads 16 --layers 24 \
  --tokens $((windows * context))
"$bin" "$work" "$work/tokens.npy" "$context" "$windows" 2 "$repeats" 12 2
