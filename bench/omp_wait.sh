#!/usr/bin/env bash
# Benchmark: idle threads sleeping against spinning, in one run: the README's fixture sweep
# (examples/fixture_measure.yaml) alone, then COPIES of it side by side (ranks or jobs sharing a
# node, as ctest's jobs do). Each case runs REPEATS times; the best wall time counts.
#   default  OpenMP's idle threads: OMP_WAIT_POLICY=PASSIVE (what `linsweep` gives linsweep-full
#            unless the caller chose) against ACTIVE.
#   --blas   OpenBLAS's idle threads, OpenMP's passive in both: OPENBLAS_THREAD_TIMEOUT=4 (they
#            sleep after 2^4 cycles; what ctest gives every test) against OpenBLAS's default
#            (they yield in a loop for 2^28 cycles first).
# Usage: bench/omp_wait.sh [--blas] [COPIES [REPEATS]]   (default 3 copies, 1 repeat)
# Target: sleeping/spinning wall time <= 1.0x alone and <= 0.5x side by side (OpenMP);
#         < 1.0x side by side (OpenBLAS; alone it is slower, which is why linsweep leaves it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${LINSWEEP_BUILD_DIR:-$root/build}/linsweep"
name=omp_wait spin=(OMP_WAIT_POLICY=ACTIVE) sleep=(OMP_WAIT_POLICY=PASSIVE)
if [[ ${1:-} == --blas ]]; then
  shift
  name=blas_wait spin=(OMP_WAIT_POLICY=PASSIVE) sleep=(OMP_WAIT_POLICY=PASSIVE OPENBLAS_THREAD_TIMEOUT=4)
fi
copies="${1:-3}" repeats="${2:-1}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

# sweep N ENV...: runs N copies of the fixture sweep at once under ENV (and without
# OPENBLAS_THREAD_TIMEOUT unless ENV sets it); prints the slowest one's wall seconds.
sweep() {
  local n=$1 i t0
  shift
  rm -rf "$work"/store-*
  t0=$EPOCHREALTIME
  for ((i = 0; i < n; i++)); do
    env -u OPENBLAS_THREAD_TIMEOUT "$@" "$bin" run "$root/examples/fixture_measure.yaml" --store "$work/store-$i" \
      --quiet >/dev/null &
  done
  wait
  awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'
}
best() {
  local r b="" t
  for ((r = 0; r < repeats; r++)); do
    t=$(sweep "$@")
    if [[ -z $b ]] || awk -v t="$t" -v b="$b" 'BEGIN { exit !(t < b) }'; then b=$t; fi
  done
  echo "$b"
}
echo "$name: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
for n in 1 "$copies"; do
  spinning=$(best "$n" "${spin[@]}") sleeping=$(best "$n" "${sleep[@]}")
  awk -v m="$name" -v n="$n" -v a="$spinning" -v p="$sleeping" \
    'BEGIN { printf "%s: %d at once: spinning %.1f s, sleeping %.1f s, sleeping/spinning %.2fx\n", m, n, a, p, p / a }'
done
