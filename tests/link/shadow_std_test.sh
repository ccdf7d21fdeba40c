#!/usr/bin/env bash
# A library that exports its own copies of libstdc++'s functions must not take linsweep's calls.
# SHADOW_BINARY is linsweep linked the way it links LibTorch, with one more such library,
# libshadow_std.so (tests/link/shadow_std.cpp), whose std::filesystem functions abort. Checks:
#  1. the shadow library is among SHADOW_BINARY's needed libraries (else the run proves nothing),
#     and libstdc++.so.6 comes before it;
#  2. in linsweep's own needed libraries, libstdc++.so.6 comes before every library that
#     exports a function libstdc++ exports too (LibTorch, MPI, HDF5: each is listed with its count);
#  3. SHADOW_BINARY runs a sweep whose training unit commits (the commit removes the unit's
#     checkpoints with std::filesystem::remove_all) and its table has rows.
# Usage: shadow_std_test.sh LINSWEEP_BINARY SHADOW_BINARY SOURCE_DIR WORK_DIR
set -euo pipefail
bin="$1" shadow="$2" src="$3" work="$4"
rm -rf "$work"; mkdir -p "$work"
export LINSWEEP_THREADS=1

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
position() { needed "$1" | grep -n -m1 -F "$2" | cut -d: -f1; }
resolved() { ldd "$1" | awk -v lib="$2" '$1 == lib { print $3 }'; }

shadow_at=$(position "$shadow" libshadow_std.so || true)
std_at=$(position "$shadow" libstdc++.so.6 || true)
[[ -n "$shadow_at" ]] || { echo "FAIL: libshadow_std.so is not a needed library of $shadow"; exit 1; }
[[ -n "$std_at" && "$std_at" -lt "$shadow_at" ]] ||
  { echo "FAIL: $shadow: libstdc++.so.6 (position ${std_at:-none}) is not ahead of libshadow_std.so ($shadow_at)"; exit 1; }
echo "ok: $(basename "$shadow"): libstdc++.so.6 at $std_at, libshadow_std.so at $shadow_at"

# Every function libstdc++ exports, then each needed library's exported functions among them.
libstdcxx=$(resolved "$bin" libstdc++.so.6)
nm -D --defined-only "$libstdcxx" | awk '$2 == "T" || $2 == "W" { print $3 }' | sort -u > "$work/libstdcxx.syms"
std_at=$(position "$bin" libstdc++.so.6)
i=0
while read -r lib; do
  i=$((i + 1))
  [[ "$lib" == libstdc++.so.6 ]] && continue
  path=$(resolved "$bin" "$lib")
  [[ -n "$path" ]] || continue
  n=$(nm -D --defined-only "$path" | awk '$2 == "T" { print $3 }' | sort -u | comm -12 - "$work/libstdcxx.syms" | wc -l)
  if [[ $n -gt 0 && $i -lt $std_at ]]; then
    echo "FAIL: $lib (needed position $i) exports $n of libstdc++'s functions and comes before libstdc++.so.6 ($std_at)"
    exit 1
  fi
  case "$lib" in libtorch*|libc10*|libmpi*|libhdf5*) echo "ok: $lib exports $n of libstdc++'s functions; libstdc++.so.6 is needed first" ;; esac
done < <(needed "$bin")
[[ "$std_at" -eq 1 ]] || { echo "FAIL: libstdc++.so.6 is needed library $std_at of $bin, not the first"; exit 1; }

cat > "$work/spec.yaml" <<YAML
store: $work/store
context: 32
models:
  - {name: tiny-gpt2, path: $src/tests/data/models/tiny-gpt2}
corpora:
  - {name: stream-a, path: $src/tests/data/models/tiny-gpt2.tokens.npy, format: npy}
splits:
  fit:   {start: 0,    tokens: 512}
  train: {start: 1024, tokens: 512}
  eval:  {start: 2560, tokens: 256}
layers: [1]
experiments:
  fit: {lambda: [0.01]}
  finetune: {layers: [1], steps: 4, variants: [linearized], lr: 1.0e-3, batch: 4, checkpoint_every: 2}
YAML
"$shadow" run "$work/spec.yaml" --quiet
rows=$("$bin" query "$work/store" finetune --format json | /usr/bin/python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
[[ "$rows" -gt 0 ]] || { echo "FAIL: the finetune table is empty"; exit 1; }
echo "ok: $(basename "$shadow") committed the training units ($rows finetune rows)"
