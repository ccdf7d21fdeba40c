#!/usr/bin/env bash
# Sets everything up (Debian packages), builds, runs every test with ctest (except the `long`
# label: LINSWEEP_LONG_TESTS=1 ctest -L long), then the Catch2 suite under ASan and UBSan
# (scripts/sanitize.sh), then every fuzzer for 30 s (scripts/fuzz.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd "${LINSWEEP_BUILD_DIR:-$root/build}" && ctest --output-on-failure --timeout 1800 -LE long)
"$root/scripts/sanitize.sh"
"$root/scripts/fuzz.sh" "${LINSWEEP_CI_FUZZ_SECONDS:-30}"
