#!/usr/bin/env bash
# OpenBLAS's own choice of kernels against the one `linsweep` names (common/blas_kernels.hpp):
# `linsweep-full eval` (OpenBLAS decides alone) and `linsweep eval` (the front sets
# OPENBLAS_CORETYPE where OpenBLAS would fall back to narrower kernels than the CPU's), on a
# random Llama-shaped model, alternating, REPEATS times each. On a CPU OpenBLAS knows both run
# the same kernels and the ratio is about 1.
# Usage: bench/openblas_kernels.sh [BUILD_DIR] [REPEATS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"; repeats="${2:-3}"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$root/bench/llama_checkpoint.py" "$work/model" --layers 4 --d 512 --heads 8 --kv-heads 8 \
  --ff 1536 --vocab 4096 --ctx 256 --tokens 16384 >/dev/null 2>&1
export LINSWEEP_THREADS="${LINSWEEP_THREADS:-1}"
run() {  # BINARY: seconds of one eval
  local t0; t0=$(date +%s%N)
  "$1" eval --model "$work/model" --corpus "$work/model/tokens.npy" --context 256 --batch 8 >/dev/null
  echo $(( ($(date +%s%N) - t0) / 1000000 ))
}
echo "OpenBLAS alone: $("$build/linsweep-full" --version | sed -n 's/.*\(OpenBLAS [^;]*\).*/\1/p')"
echo "linsweep:       $("$build/linsweep" --version | sed -n 's/.*\(OpenBLAS [^;]*\).*/\1/p')"
alone=(); front=()
for _ in $(seq "$repeats"); do alone+=("$(run "$build/linsweep-full")"); front+=("$(run "$build/linsweep")"); done
/usr/bin/python3 - "${alone[*]}" "${front[*]}" <<'PY'
import statistics, sys
a, f = ([float(x) / 1000 for x in s.split()] for s in sys.argv[1:3])
ma, mf = statistics.median(a), statistics.median(f)
print(f"eval of 16,384 tokens, median of {len(a)}: OpenBLAS alone {ma:.2f} s, linsweep {mf:.2f} s, ratio {mf / ma:.2f}x")
PY
