#!/usr/bin/env bash
# Sets everything up (Debian packages), checks the C++ formatting (scripts/check_format.sh),
# builds, runs every test with ctest (except the `long`
# label: LINSWEEP_LONG_TESTS=1 ctest -L long), runs the tests labelled `isa` again with the
# kernels of an AVX2 CPU (scripts/test_isa.sh), then the Catch2 suite under ASan and UBSan in a
# build with the unity build off, so that a file missing an include fails to compile
# (scripts/sanitize.sh), then every fuzzer for 10 s (scripts/fuzz.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
started=$SECONDS
"$root/scripts/setup.sh"
"$root/scripts/check_format.sh"
"$root/scripts/build.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
build="${LINSWEEP_BUILD_DIR:-$root/build}"
(cd "$build" && ctest --output-on-failure --timeout 1800 -LE long)
"$root/scripts/test_isa.sh" "$build"
"$root/scripts/sanitize.sh"
"$root/scripts/fuzz.sh" "${LINSWEEP_CI_FUZZ_SECONDS:-10}"
echo "test.sh: everything passed in $(( (SECONDS - started) / 60 ))m$(( (SECONDS - started) % 60 ))s"
