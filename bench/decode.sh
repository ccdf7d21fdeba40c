#!/usr/bin/env bash
# Benchmark: routed decoding against plain decoding (bench/decode.cpp) on a Llama-shaped model of
# about 1B parameters with random weights (TinyLlama 1.1B's shape: 22 layers, d 2048, d_ff 5632,
# 32 heads over 4 key/value heads, vocabulary 32000; float32 4.4 GB in memory), every layer
# routed at each share of tokens and batch size given: greedy generation of 24 tokens after
# random prompts of 16, plain and routed in interleaved pairs until the saving's 95% interval is
# at most 2 points wide or the time cap; tokens/s, the memory bandwidth, bytes per step and the
# saving they predict, and the load average (recorded before and after each measurement).
# Prints one JSON line per share and batch (bench_decode --json) to OUT (default stdout's table
# only) and a table, then the machine and the kernels.
# Usage: bench/decode.sh [--device cpu|cuda] [--dtype float32|bfloat16] [--threads N]
#          [--shares "0.25 0.5 0.75"] [--batches "1 8"] [--max-seconds S] [--out FILE] [--small]
#   --small: a 2-layer, d 128 stand-in (seconds, for a check of the script).
#   Build first: cmake --build build --target bench_decode
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${LINSWEEP_BUILD_DIR:-$root/build}/bench_decode"
device=cpu dtype=float32 threads=2 shares="0.25 0.5 0.75" batches="1 8" max_seconds=300 out="" shape=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --device|--dtype|--threads|--shares|--batches|--max-seconds|--out)
      [[ $# -ge 2 ]] || { echo "decode.sh: $1 needs a value" >&2; exit 2; }
      case "$1" in
        --device) device="$2" ;; --dtype) dtype="$2" ;; --threads) threads="$2" ;; --shares) shares="$2" ;;
        --batches) batches="$2" ;; --max-seconds) max_seconds="$2" ;; --out) out="$2" ;;
      esac
      shift 2 ;;
    --small) shape=(--layers 2 --d 128 --heads 4 --kv-heads 2 --d-ff 352 --vocab 2048); shift ;;
    *) echo "decode.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -x "$bin" ]] || { echo "decode.sh: $bin not built (cmake --build build --target bench_decode)" >&2; exit 2; }
results="${out:-$(mktemp)}"
[[ -n "$out" ]] || trap 'rm -f "$results"' EXIT
echo "decode.sh: load average before: $(cut -d' ' -f1-3 /proc/loadavg); nice $(nice)"
"$bin" "${shape[@]}" --device "$device" --dtype "$dtype" --threads "$threads" --shares "${shares// /,}" \
  --batches "${batches// /,}" --max-seconds "$max_seconds" --json | tee "$results" |
  /usr/bin/python3 -c 'import json, sys
for line in sys.stdin:
    d = json.loads(line)
    dagger = " †" if d["interval_contains_zero"] else ""
    print("share {:5.1f}% batch {}: plain {:7.2f} tok/s  routed {:7.2f} tok/s  {:.3f}x  saving measured {:5.1f}% "
          "[{:5.1f}, {:5.1f}]{} ({} pairs{})  predicted {:5.1f}% ({:.3f}x)  load {:.2f}->{:.2f}  cpu {:.2f}".format(
              100 * d["share"], d["batch"], d["plain_tokens_per_s"], d["routed_tokens_per_s"], d["speedup"],
              d["measured_saving_pct"], d["saving_low_pct"], d["saving_high_pct"], dagger, d["pairs"],
              ", capped" if d["capped"] else "", d["predicted_saving_pct"], d["predicted_speedup"],
              d["load_before"], d["load_after"], d["cpu_share"]), flush=True)'
/usr/bin/python3 -c 'import json, sys
d = json.loads(open(sys.argv[1]).readline())
b = d["bandwidth_gb_s"]
print("bandwidth: read {:.1f} GB/s, copy {:.1f} GB/s, one projection at batch 1 {:.1f} GB/s".format(
    b["read_gb_s"], b["copy_gb_s"], b["projection_gb_s"]))
print(d["machine"]); print(d["kernels"])' "$results"
