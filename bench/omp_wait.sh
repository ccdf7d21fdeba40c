#!/usr/bin/env bash
# Benchmark: OpenMP's idle threads sleeping (OMP_WAIT_POLICY=PASSIVE, what `linsweep` gives
# linsweep-full unless the caller chose) against spinning (ACTIVE), in one run: the README's
# fixture sweep (examples/fixture_measure.yaml) alone, then COPIES of it side by side (ranks or
# jobs sharing a node, as ctest's jobs do). Each case runs REPEATS times; the best wall time counts.
# Usage: bench/omp_wait.sh [COPIES [REPEATS]]   (default 3 copies, 1 repeat)
# Target: passive/active wall time <= 1.0x alone and <= 0.5x side by side.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${LINSWEEP_BUILD_DIR:-$root/build}/linsweep"
copies="${1:-3}" repeats="${2:-1}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

# sweep POLICY N: runs N copies of the fixture sweep at once; prints the slowest one's wall seconds.
sweep() {
  local policy=$1 n=$2 i t0
  rm -rf "$work"/store-*
  t0=$EPOCHREALTIME
  for ((i = 0; i < n; i++)); do
    OMP_WAIT_POLICY=$policy "$bin" run "$root/examples/fixture_measure.yaml" --store "$work/store-$i" --quiet >/dev/null &
  done
  wait
  awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'
}
best() {
  local policy=$1 n=$2 r b="" t
  for ((r = 0; r < repeats; r++)); do
    t=$(sweep "$policy" "$n")
    if [[ -z $b ]] || awk -v t="$t" -v b="$b" 'BEGIN { exit !(t < b) }'; then b=$t; fi
  done
  echo "$b"
}
echo "omp_wait: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
for n in 1 "$copies"; do
  active=$(best ACTIVE "$n") passive=$(best PASSIVE "$n")
  awk -v n="$n" -v a="$active" -v p="$passive" \
    'BEGIN { printf "omp_wait: %d at once: spinning %.1f s, passive %.1f s, passive/spinning %.2fx\n", n, a, p, p / a }'
done
