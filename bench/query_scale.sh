#!/usr/bin/env bash
# `linsweep query` reads tables only, never arrays: two stores with the same 20 units of 100 rows
# each, one of which also holds 20 × 110 MiB = 2.1 GiB of float64 arrays, queried in one run
# (best of 3 each, page cache dropped between stores when run as root). Target: the store with
# arrays takes at most 1.5x the time of the one without.
# Usage: bench/query_scale.sh [WORK_DIR]   (needs ~2.3 GB free there; removed afterwards)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LINSWEEP_BUILD_DIR:-$root/build}"
work="$(mktemp -d -p "${1:-${TMPDIR:-/tmp}}")"
trap 'rm -rf "$work"' EXIT
"$build/bench_store_scale" "$work/plain" 20 0
"$build/bench_store_scale" "$work/arrays" 20 110
du -sh "$work/plain" "$work/arrays"
best() {  # best wall time of 3 queries, in seconds
  local store="$1" t best=999
  for _ in 1 2 3; do
    [[ $(id -u) -eq 0 ]] && { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true; }
    t=$( { /usr/bin/time -f %e "$build/linsweep" query "$store" bench_rows --format csv >/dev/null; } 2>&1 )
    best=$(awk -v a="$t" -v b="$best" 'BEGIN { print (a < b ? a : b) }')
  done
  echo "$best"
}
plain=$(best "$work/plain")
arrays=$(best "$work/arrays")
awk -v p="$plain" -v a="$arrays" 'BEGIN {
  printf "query without arrays %.3f s, with 2.1 GiB of arrays %.3f s: ratio %.2fx (target <= 1.5x)\n", p, a, a / p }'
