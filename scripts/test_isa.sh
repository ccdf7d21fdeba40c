#!/usr/bin/env bash
# Runs the test suite with the kernels another CPU of this machine kind would pick: oneDNN,
# OpenBLAS and ATen choose their float32 and float64 kernels per CPU (AVX-512 with or without
# bf16/VNNI on one, AVX2 on another), so results round differently from one machine to the next.
# These settings make this machine take the AVX2 kernels:
#   ONEDNN_MAX_CPU_ISA=AVX2  OPENBLAS_CORETYPE=Haswell  ATEN_CPU_CAPABILITY=avx2
# It first proves that the settings took effect (oneDNN's verbose line names the ISA it
# dispatched to, OpenBLAS names its core), then runs ctest under them.
# Usage: scripts/test_isa.sh [--all] [BUILD_DIR]
#   default: the tests labelled `isa` (the Catch2 suites, the fuzz replays, and the sweeps that
#            compare rank layouts and references: about 5 minutes); scripts/test.sh runs this.
#   --all:   every test except the `long` ones.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
select=(-L isa)
if [[ "${1:-}" == "--all" ]]; then select=(-LE long); shift; fi
build="${1:-${LINSWEEP_BUILD_DIR:-$root/build}}"
export ONEDNN_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell ATEN_CPU_CAPABILITY=avx2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# The proof: a tiny evaluation with oneDNN and OpenBLAS telling what they chose.
probe=$(ONEDNN_VERBOSE=1 OPENBLAS_VERBOSE=2 "$build/linsweep" eval --model "$root/tests/data/models/tiny-gpt2" \
  --corpus "$root/tests/data/models/tiny-gpt2.tokens.npy" --context 32 --tokens 256 --threads 1 --json 2>&1 || true)
isa=$(grep -m1 -o 'isa:[^,]*' <<<"$probe" || true)
core=$(grep -m1 -io 'core: *[A-Za-z0-9]*' <<<"$probe" || true)
echo "test_isa: oneDNN ${isa:-isa: (no primitive reported)}; OpenBLAS ${core:-core: (not reported)}; ATen avx2"
if [[ -n "$isa" && "$isa" == *512* ]]; then
  echo "test_isa: oneDNN still dispatches to AVX-512 ($isa): ONEDNN_MAX_CPU_ISA had no effect" >&2
  exit 1
fi
cd "$build"
ctest --output-on-failure --timeout 1800 -j "${LINSWEEP_TEST_JOBS:-2}" "${select[@]}"
