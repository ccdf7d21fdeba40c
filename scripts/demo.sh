#!/usr/bin/env bash
# Sets everything up, builds, and runs the main job. Until the embedded demo sweep lands,
# the main job is `linsweep eval` and `linsweep inspect` on the bundled GPT-2 fixture.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
bin="${LINSWEEP_BUILD_DIR:-$root/build}/linsweep"
model="$root/tests/data/models/tiny-gpt2"
"$bin" inspect "$model"
echo
"$bin" eval --model "$model" --corpus "$root/tests/data/models/tiny-gpt2.tokens.npy" --context 32 --tokens 256
