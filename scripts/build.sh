#!/usr/bin/env bash
# Configures and builds linsweep into build/ (or $LINSWEEP_BUILD_DIR). Extra arguments go to cmake.
# LINSWEEP_BUILD_TARGET builds one target only (scripts/demo.sh: `linsweep`, not the tests).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LINSWEEP_BUILD_DIR:-$root/build}"
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
fi
cmake --build "$build" --parallel "$(nproc)" ${LINSWEEP_BUILD_TARGET:+--target "$LINSWEEP_BUILD_TARGET"}
