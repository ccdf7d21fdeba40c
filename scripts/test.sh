#!/usr/bin/env bash
# Sets everything up (Debian packages), builds, and runs every test with ctest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "${LINSWEEP_BUILD_DIR:-$root/build}"
ctest --output-on-failure --timeout 1800
