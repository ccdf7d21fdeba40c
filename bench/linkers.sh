#!/usr/bin/env bash
# Benchmark: every program of a configured build relinked with lld (cmake/fast_linker.cmake's
# default) and with GNU ld, in one run. Switching LINSWEEP_LINKER changes the link flags, so
# ninja relinks each program and compiles nothing; the build directory ends with lld again.
# Usage: bench/linkers.sh [BUILD_DIR [TARGET]]   (default build/ and every target; the
# sanitizer build: bench/linkers.sh build-asan test_executables)
# Target: lld/GNU ld wall time <= 0.5x.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-${LINSWEEP_BUILD_DIR:-$root/build}}"
target=(${2:+"$2"})
[[ -f "$build/build.ninja" ]] || { echo "linkers: $build is not a configured Ninja build (scripts/build.sh)" >&2; exit 2; }
cmake --build "$build" "${target[@]/#/--target=}" >/dev/null  # nothing but the links below

# relink LINKER: prints the wall seconds ninja takes to relink every program with LINKER.
relink() {
  local t0 links
  cmake "$build" -DLINSWEEP_LINKER="$1" >/dev/null
  t0=$EPOCHREALTIME
  links=$(ninja -C "$build" "${target[@]}" | grep -c 'Linking' || true)
  awk -v a="$t0" -v b="$EPOCHREALTIME" -v n="$links" 'BEGIN { printf "%.2f %d\n", b - a, n }'
}
trap 'cmake "$build" -DLINSWEEP_LINKER=lld >/dev/null' EXIT
echo "linkers: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $build"
read -r bfd n_bfd < <(relink bfd)
read -r lld n_lld < <(relink lld)
awk -v b="$bfd" -v l="$lld" -v nb="$n_bfd" -v nl="$n_lld" \
  'BEGIN { printf "linkers: GNU ld %.1f s (%d programs), lld %.1f s (%d programs), lld/GNU ld %.2fx\n", b, nb, l, nl, l / b }'
