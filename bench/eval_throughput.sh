#!/usr/bin/env bash
# Benchmark: `linsweep eval` tokens/s against an eager PyTorch Python forward of the same
# GPT-2-architecture model (d=512, 8 layers, GPT-2's 50257 vocabulary), same thread count,
# same tokens, in one run. Prints both and the ratio (target: linsweep >= 1.5x), then each side's
# GFLOP/s and its share of the float32 GEMM rate measured in the same run (bench/gemm_share.py;
# target: linsweep >= 60%). With TORCH26_CHROOT=DIR (a chroot from scripts/test_debian13.sh) the
# Python forward also runs under Debian 13's PyTorch 2.6 in each round (target: linsweep >= 1.2x).
# Run it also under scripts/test_isa.sh's settings (ONEDNN_MAX_CPU_ISA=AVX2
# OPENBLAS_CORETYPE=Haswell ATEN_CPU_CAPABILITY=avx2) to see another CPU's kernels.
# Usage: bench/eval_throughput.sh [TOKENS] [CONTEXT] [BATCH]   (build first: scripts/build.sh)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${LINSWEEP_BUILD_DIR:-$root/build}/linsweep"
tokens="${1:-4096}"; context="${2:-512}"; batch="${3:-4}"
threads="${LINSWEEP_THREADS:-$(nproc)}"
work="$(mktemp -d)"
py=/usr/bin/python3   # Debian's python3-torch lives here
$py "$root/bench/gpt2_reference.py" make --dir "$work" --tokens "$tokens"
if [[ -n "${TORCH26_CHROOT:-}" ]]; then
  source "$root/bench/torch26_peer.sh"
  trap 'rm -rf "$work"; torch26_cleanup' EXIT
  torch26_setup "$root/bench" "$work"
else
  trap 'rm -rf "$work"' EXIT
fi
tps() { $py -c 'import json,sys; print(json.load(sys.stdin)["tokens_per_second"])'; }
common=(--dir "$work" --tokens "$tokens" --context "$context" --batch "$batch" --threads "$threads")
# Alternate the two so that neither always runs on a warmer machine; keep the best of each.
best_cpp=0; best_py=0; best_26=0; p26='{}'
for round in 1 2; do
  c=$("$bin" eval --model "$work" --corpus "$work/tokens.npy" --context "$context" --tokens "$tokens" \
        --batch "$batch" --threads "$threads" --device cpu --json)
  p=$($py "$root/bench/gpt2_reference.py" run "${common[@]}")
  c_tps=$(echo "$c" | tps); p_tps=$(echo "$p" | tps)
  best_cpp=$($py -c "print(max($best_cpp, $c_tps))"); best_py=$($py -c "print(max($best_py, $p_tps))")
  line="round $round: linsweep $c_tps tok/s, python $p_tps tok/s"
  if [[ -n "${TORCH26_CHROOT:-}" ]]; then
    p26=$(torch26_python gpt2_reference.py run --dir @WORK --tokens "$tokens" --context "$context" \
            --batch "$batch" --threads "$threads")
    best_26=$($py -c "print(max($best_26, $(echo "$p26" | tps)))")
    line+=", python (torch 2.6) $(echo "$p26" | tps) tok/s"
  fi
  echo "$line"
done
$py - "$c" "$p" "$best_cpp" "$best_py" "$threads" "$p26" "$best_26" <<'PY'
import json, sys
c, p, p26 = json.loads(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[6])
cpp, py, threads, py26 = float(sys.argv[3]), float(sys.argv[4]), sys.argv[5], float(sys.argv[7])
print(f"model: GPT-2 architecture, d=512, 8 layers, vocab 50257; {c['tokens']} tokens, "
      f"context {c['context']}, batch {c['batch']}, {threads} threads")
peers = [("python", p, py)] + ([("python (torch 2.6)", p26, py26)] if p26 else [])
for name, peer, _ in peers:
    print(f"ppl: linsweep {c['ppl']:.6f}, {name} {peer['ppl']:.6f} "
          f"(relative difference {abs(c['ppl'] / peer['ppl'] - 1):.1e})")
for (name, _, rate), target in zip(peers, ("1.5x", "1.2x")):
    print(f"linsweep eval: {cpp:.0f} tokens/s; {name} eager forward: {rate:.0f} tokens/s; "
          f"ratio {cpp / rate:.2f}x (target >= {target})")
if any(abs(c["ppl"] / peer["ppl"] - 1) > 1e-4 for _, peer, _ in peers):
    sys.exit("benchmark: the forwards disagree; the comparison is void")
PY
peers=(python="$best_py")
[[ -z "${TORCH26_CHROOT:-}" ]] || peers+=(python_torch26="$best_26")
$py "$root/bench/gemm_share.py" --threads "$threads" --d 512 --layers 8 --vocab 50257 --context "$context" \
  linsweep="$best_cpp" "${peers[@]}"
