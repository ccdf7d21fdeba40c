#!/usr/bin/env bash
# Benchmark: training tokens/s of linsweep's Trainer against an eager PyTorch Python training
# loop of the same model (GPT-2 architecture, d=192, 6 layers, 6 heads, vocab 4096, tied head),
# same threads, same batch (8 windows of 128 random tokens), same steps, AdamW(lr 1e-3, wd 0.01)
# and clipping at 1.0 on both sides, in one run. Rounds alternate C++ and Python (C++, Python,
# C++, Python); the best tokens/s of each side is compared.
# Target: linsweep >= 1.2x the Python loop. Then each side's GFLOP/s and its share of the float32
# GEMM rate measured in the same run (bench/gemm_share.py; training counts 3x the forward).
# With TORCH26_CHROOT=DIR (a chroot from scripts/test_debian13.sh) the Python loop also runs
# under Debian 13's PyTorch 2.6 in each round (target: linsweep >= 1.2x).
# Usage: bench/training_throughput.sh [THREADS] [STEPS]   (build first: ninja -C build bench_training_throughput)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${LINSWEEP_BUILD_DIR:-$root/build}/bench_training_throughput"
threads="${1:-$(nproc)}"; steps="${2:-20}"; warmup=3
py=/usr/bin/python3   # Debian's python3-torch lives here
if [[ ! -x "$bin" ]]; then
  echo "training_throughput.sh: $bin is missing; build it first: ninja -C build bench_training_throughput" >&2
  exit 1
fi
if [[ -n "${TORCH26_CHROOT:-}" ]]; then
  source "$root/bench/torch26_peer.sh"
  trap torch26_cleanup EXIT
  torch26_setup "$root/bench"
fi
tps() { $py -c 'import json,sys; print(json.load(sys.stdin)["tokens_per_second"])'; }
common=(--threads "$threads" --steps "$steps" --warmup "$warmup" --batch 8 --context 128 --windows 256 --seed 0)
# Alternate the two so that neither always runs on a warmer machine; keep the best of each.
best_cpp=0; best_py=0; best_26=0; p26='{}'
for round in 1 2; do
  c=$("$bin" "${common[@]}")
  p=$($py "$root/bench/training_throughput.py" "${common[@]}")
  c_tps=$(echo "$c" | tps); p_tps=$(echo "$p" | tps)
  best_cpp=$($py -c "print(max($best_cpp, $c_tps))"); best_py=$($py -c "print(max($best_py, $p_tps))")
  line=$(printf 'round %s: linsweep %.1f tok/s, python %.1f tok/s' "$round" "$c_tps" "$p_tps")
  if [[ -n "${TORCH26_CHROOT:-}" ]]; then
    p26=$(torch26_python training_throughput.py "${common[@]}")
    best_26=$($py -c "print(max($best_26, $(echo "$p26" | tps)))")
    line+=$(printf ', python (torch 2.6) %.1f tok/s' "$(echo "$p26" | tps)")
  fi
  echo "$line"
done
$py - "$c" "$p" "$best_cpp" "$best_py" "$best_26" <<'PY'
import json, sys
c, p = json.loads(sys.argv[1]), json.loads(sys.argv[2])
cpp, py, py26 = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
print(f"model: GPT-2 architecture, d=192, 6 layers, 6 heads, vocab 4096, {c['parameters']} parameters "
      f"(python {p['parameters']}); batch {c['batch']} x context {c['context']}, {c['steps']} timed steps after "
      f"{c['warmup']} warm-up, {c['threads']} threads (python {p['threads']}, torch {p['torch']})")
print(f"loss (last round, first -> last step): linsweep {c['first_loss']:.4f} -> {c['final_loss']:.4f}, "
      f"python {p['first_loss']:.4f} -> {p['final_loss']:.4f}")
print(f"linsweep Trainer: {cpp:.1f} tokens/s; python eager loop: {py:.1f} tokens/s (best of 2 each)")
print(f"ratio linsweep/python: {cpp / py:.2f}x (target >= 1.2x)")
if py26:
    print(f"python (torch 2.6) eager loop: {py26:.1f} tokens/s; ratio linsweep/python 2.6: {cpp / py26:.2f}x "
          f"(target >= 1.2x)")
PY
peers=(python="$best_py")
[[ -z "${TORCH26_CHROOT:-}" ]] || peers+=(python_torch26="$best_26")
$py "$root/bench/gemm_share.py" --threads "$threads" --d 192 --layers 6 --vocab 4096 --context 128 --training \
  linsweep="$best_cpp" "${peers[@]}"
