#!/usr/bin/env bash
# Benchmark: `linsweep eval` tokens/s against an eager PyTorch Python forward of the same
# GPT-2-architecture model (d=512, 8 layers, GPT-2's 50257 vocabulary), same thread count,
# same tokens, in one run. Prints both and the ratio (target: linsweep >= 1.2x), then each side's
# GFLOP/s and its share of the float32 GEMM rate measured in the same run (bench/gemm_share.py).
# Run it also under scripts/test_isa.sh's settings (ONEDNN_MAX_CPU_ISA=AVX2
# OPENBLAS_CORETYPE=Haswell ATEN_CPU_CAPABILITY=avx2) to see another CPU's kernels.
# Usage: bench/eval_throughput.sh [TOKENS] [CONTEXT] [BATCH]   (build first: scripts/build.sh)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${LINSWEEP_BUILD_DIR:-$root/build}/linsweep"
tokens="${1:-4096}"; context="${2:-512}"; batch="${3:-4}"
threads="${LINSWEEP_THREADS:-$(nproc)}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
py=/usr/bin/python3   # Debian's python3-torch lives here
$py "$root/bench/gpt2_reference.py" make --dir "$work" --tokens "$tokens"
common=(--dir "$work" --tokens "$tokens" --context "$context" --batch "$batch" --threads "$threads")
# Alternate the two so that neither always runs on a warmer machine; keep the best of each.
best_cpp=0; best_py=0
for round in 1 2; do
  c=$("$bin" eval --model "$work" --corpus "$work/tokens.npy" --context "$context" --tokens "$tokens" \
        --batch "$batch" --threads "$threads" --device cpu --json)
  p=$($py "$root/bench/gpt2_reference.py" run "${common[@]}")
  c_tps=$(echo "$c" | $py -c 'import json,sys; print(json.load(sys.stdin)["tokens_per_second"])')
  p_tps=$(echo "$p" | $py -c 'import json,sys; print(json.load(sys.stdin)["tokens_per_second"])')
  best_cpp=$($py -c "print(max($best_cpp, $c_tps))"); best_py=$($py -c "print(max($best_py, $p_tps))")
  echo "round $round: linsweep $c_tps tok/s, python $p_tps tok/s"
done
$py - "$c" "$p" "$best_cpp" "$best_py" "$threads" <<'PY'
import json, sys
c, p = json.loads(sys.argv[1]), json.loads(sys.argv[2])
cpp, py, threads = float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
agree = abs(c["ppl"] / p["ppl"] - 1)
print(f"model: GPT-2 architecture, d=512, 8 layers, vocab 50257; {c['tokens']} tokens, "
      f"context {c['context']}, batch {c['batch']}, {threads} threads")
print(f"ppl: linsweep {c['ppl']:.6f}, python {p['ppl']:.6f} (relative difference {agree:.1e})")
print(f"linsweep eval: {cpp:.0f} tokens/s; python eager forward: {py:.0f} tokens/s")
print(f"ratio linsweep/python: {cpp / py:.2f}x (target >= 1.2x)")
if agree > 1e-4:
    sys.exit("benchmark: the two forwards disagree; the comparison is void")
PY
$py "$root/bench/gemm_share.py" --threads "$threads" --d 512 --layers 8 --vocab 50257 --context "$context" \
  linsweep="$best_cpp" python="$best_py"
