#!/usr/bin/env bash
# Benchmark: where the routed forward (the MLP run only at the positions a gate keeps, the rest
# through a d×d affine map; bench/routed_forward.cpp) beats the plain one. Random weights at the
# demo's sizes (GPT-2 and GPT-NeoX, d 48/64/96, vocabulary 2,048) and at the shapes of GPT-2
# Medium (d 1024, 24 layers), GPT-2 Large (d 1280, 36 layers) and Pythia-1B (GPT-NeoX, d 2048,
# 16 layers, d_ff 8192); every second layer routed, at each share of positions and batch given.
# Windows of 256 tokens (128 for the demo's sizes, their context), two windows per batch slot.
# Plain and routed passes alternate after a warm-up of each; medians of paired ratios.
# Prints one JSON line per run (bench_routed_forward --json) to OUT (default stdout) and a table.
# Usage: bench/routed_forward.sh [--device cpu|cuda] [--dtype float32|bfloat16] [--threads N]
#          [--repeats R] [--shares "0.25 0.5 0.75"] [--batches "1 4"] [--out FILE] [SHAPE...]
#   SHAPE: demo-gpt2-s demo-gpt2-m demo-gpt2-l demo-neox-l gpt2-medium gpt2-large pythia-1b
#   (default: all of them); --breakdown adds one routed layer's parts, timed alone.
#   Build first: cmake --build build --target bench_routed_forward
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${LINSWEEP_BUILD_DIR:-$root/build}/bench_routed_forward"
device=cpu dtype=float32 threads=2 repeats=5 shares="0.5" batches="2" out="" extra=() shapes=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --device|--dtype|--threads|--repeats|--shares|--batches|--out)
      [[ $# -ge 2 ]] || { echo "routed_forward.sh: $1 needs a value" >&2; exit 2; }
      case "$1" in
        --device) device="$2" ;; --dtype) dtype="$2" ;; --threads) threads="$2" ;; --repeats) repeats="$2" ;;
        --shares) shares="$2" ;; --batches) batches="$2" ;; --out) out="$2" ;;
      esac
      shift 2 ;;
    --breakdown) extra+=(--breakdown); shift ;;
    -*) echo "routed_forward.sh: unknown option '$1'" >&2; exit 2 ;;
    *) shapes+=("$1"); shift ;;
  esac
done
[[ ${#shapes[@]} -gt 0 ]] || shapes=(demo-gpt2-s demo-gpt2-m demo-gpt2-l demo-neox-l gpt2-medium gpt2-large pythia-1b)
[[ -x "$bin" ]] || { echo "routed_forward.sh: $bin not built (cmake --build build --target bench_routed_forward)" >&2; exit 2; }
shape_args() {
  case "$1" in
    demo-gpt2-s) echo "--arch gpt2 --d 48 --layers 2 --heads 3 --vocab 2048 --context 128" ;;
    demo-gpt2-m) echo "--arch gpt2 --d 64 --layers 3 --heads 4 --vocab 2048 --context 128" ;;
    demo-gpt2-l) echo "--arch gpt2 --d 96 --layers 4 --heads 6 --vocab 2048 --context 128" ;;
    demo-neox-l) echo "--arch gpt_neox --d 96 --layers 4 --heads 6 --vocab 2048 --context 128" ;;
    gpt2-medium) echo "--arch gpt2 --d 1024 --layers 24 --heads 16 --vocab 50257 --context 256" ;;
    gpt2-large) echo "--arch gpt2 --d 1280 --layers 36 --heads 20 --vocab 50257 --context 256" ;;
    pythia-1b) echo "--arch gpt_neox --d 2048 --layers 16 --heads 8 --d-ff 8192 --vocab 50304 --context 256" ;;
    *) echo "routed_forward.sh: unknown shape '$1'" >&2; exit 2 ;;
  esac
}
results="${out:-$(mktemp)}"
[[ -n "$out" ]] || trap 'rm -f "$results"' EXIT
: > "$results"
for shape in "${shapes[@]}"; do
  for batch in $batches; do
    # One process per shape and batch measures every share on one model build.
    before=$(wc -l <"$results")
    # shellcheck disable=SC2046
    "$bin" $(shape_args "$shape") --batch "$batch" --windows $((2 * batch)) --shares "${shares// /,}" --every 2 \
      --repeats "$repeats" --threads "$threads" --device "$device" --dtype "$dtype" "${extra[@]}" --json |
      /usr/bin/python3 -c 'import json,sys
for line in sys.stdin:
    d = json.loads(line); d["shape"] = sys.argv[1]; print(json.dumps(d), flush=True)' "$shape" |
      tee -a "$results" >/dev/null
    /usr/bin/python3 - "$results" "$before" <<'EOF'
import json, sys
for line in open(sys.argv[1]).read().splitlines()[int(sys.argv[2]):]:
    d = json.loads(line)
    print("{:12s} batch {} share {:5.1f}%  plain {:9.0f} tok/s  routed {:9.0f} tok/s  ratio {:.3f} [{:.3f}, {:.3f}]  "
          "saving measured {:5.1f}%  predicted {:5.1f}%".format(
              d["shape"], d["batch"], 100 * d["share"], d["plain_tokens_per_s"], d["routed_tokens_per_s"],
              d["ratio_median"], d["ratio_min"], d["ratio_max"], d["measured_saving_pct"], d["predicted_saving_pct"]))
    if "breakdown_s" in d:
        print("    layer {}: {} of {} rows routed".format(d["breakdown_layer"], d["breakdown_routed_rows"], d["breakdown_rows"]))
    for k, v in d.get("breakdown_s", {}).items():
        print("    {:30s} {:8.2f} ms".format(k, 1e3 * v))
EOF
  done
done
/usr/bin/python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).readline()); print(d["machine"]); print(d["kernels"])' "$results"
