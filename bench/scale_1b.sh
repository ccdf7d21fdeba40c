#!/usr/bin/env bash
# A real-size run: a Pythia-1B-shaped checkpoint (GPT-NeoX, d=2048, 16 layers, vocab 50304,
# random bfloat16 weights, 2 GB), `stats`, `fit` and `all_linear` on three of its layers with a
# small token budget. Prints peak RSS of the run and its ratio to the float32 weights, the unit
# files' sizes (unit files and arrays files apart), `plan` time cold (hashing the weights) and
# warm (the fingerprint cache), `query` time, and tokens/s per kind from `status`.
# Usage: bench/scale_1b.sh [WORK_DIR] [TOKENS]   (needs ~6 GB free; WORK_DIR is removed after)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=pythia_1b.sh
source "$root/bench/pythia_1b.sh"
build="${LINSWEEP_BUILD_DIR:-$root/build}"
bin="$build/linsweep"
work="$(mktemp -d -p "${1:-${TMPDIR:-/tmp}}")"
tokens="${2:-2048}"
trap 'rm -rf "$work"' EXIT
pythia_1b "$work" "$tokens"
cat >> "$work/spec.yaml" <<YAML
layers: [0, 7, 15]
experiments:
  fit: {lambda: [0.01]}
  all_linear: {bootstrap: 200}
runtime: {batch: 4}
YAML
echo "plan, cold (no store yet): $(seconds "$bin" plan "$work/spec.yaml") s"
/usr/bin/time -o "$work/run.time" -f "%e %M" "$bin" run "$work/spec.yaml" --quiet
read -r run_s peak_kib < "$work/run.time"
params=$("$bin" inspect "$work/pythia-1b" --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["parameters"])')
/usr/bin/python3 -c "
s, kib, p = $run_s, $peak_kib, $params
print(f'run: {s} s, peak RSS {kib} KiB = {kib * 1024 / (4 * p):.2f}x the float32 weights ({4 * p / 2**30:.2f} GiB)')"
rm -f "$work/store/fingerprints.json"  # the run filled the cache: cold means without it
echo "plan, cold (store, no fingerprint cache): $(seconds "$bin" plan "$work/spec.yaml") s"
echo "plan, warm (second plan): $(seconds "$bin" plan "$work/spec.yaml") s"
echo "query all_linear: $(seconds "$bin" query "$work/store" all_linear) s"
du -b "$work"/store/units/*.h5 | awk '{ n = $2; sub(".*/", "", n); printf "  %12d bytes  %s\n", $1, n }'
"$bin" status "$work/store" --json | /usr/bin/python3 -c '
import json, sys
for kind, c in json.load(sys.stdin)["by_kind"].items():
    n, s, r = c["committed"], c["seconds"], c["tokens_per_second"]
    print(f"  {kind}: {n} units, {s:.1f} s, {r:.0f} tokens/s")'
