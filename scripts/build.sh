#!/usr/bin/env bash
# Configures and builds linsweep into build/ (or $LINSWEEP_BUILD_DIR). Extra arguments go to cmake.
# LINSWEEP_BUILD_TARGET builds one target only (scripts/demo.sh: `linsweep`, not the tests).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# ccache (CMakeLists.txt) shares objects between clones: paths relative to the checkout, and
# the build directory left out of the hash (debug info then names the first clone's directory).
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
build="${LINSWEEP_BUILD_DIR:-$root/build}"
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
fi
cmake --build "$build" --parallel "$(nproc)" ${LINSWEEP_BUILD_TARGET:+--target "$LINSWEEP_BUILD_TARGET"}
