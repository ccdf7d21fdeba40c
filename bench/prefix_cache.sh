#!/usr/bin/env bash
# Benchmark: an all-layer all_linear unit with the prefix cache (layer l recomputes only
# layers l..L-1 from the cached stream) against full forwards per layer, in one run.
# Model: the shape of GPT-2 Medium (d=1024, 24 layers, 16 heads, vocab 50257) with random
# weights (bench/gpt2_reference.py); 2 windows of 256 tokens. The head (2·d·V FLOPs a token,
# about 4 layers' worth at d=1024) is paid once per substituted layer either way, which is
# why the ratio is above the 0.52 of the layers alone.
# Target: prefix-cached time <= 0.6x the naive time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${LINSWEEP_BUILD_DIR:-$root/build}/linsweep"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
mkdir -p "$work/model"
/usr/bin/python3 "$root/bench/gpt2_reference.py" make --dir "$work/model" --d-model 1024 --heads 16 --layers 24 --tokens 2048
for cache in true false; do
  cat > "$work/spec-$cache.yaml" <<YAML
store: $work/store-$cache
context: 256
models: [{name: bench, path: $work/model}]
corpora: [{name: random, path: $work/model/tokens.npy}]
splits: {fit: {start: 0, tokens: 512}, eval: {start: 1024, tokens: 512}}
experiments: {fit: {}, all_linear: {bootstrap: 10, prefix_cache: $cache}}
runtime: {batch: 2}
YAML
  "$bin" run "$work/spec-$cache.yaml" --quiet
done
/usr/bin/python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def seconds(cache):
    for line in open(f"{work}/store-{cache}/journal.jsonl"):
        e = json.loads(line)
        if e["event"] == "committed" and e["unit"].startswith("all_linear-"):
            return e["duration"]
cached, naive = seconds("true"), seconds("false")
print(f"all_linear over 24 layers, 2 windows of 256: prefix-cached {cached:.2f} s, naive {naive:.2f} s")
print(f"ratio cached/naive: {cached / naive:.2f}x (target <= 0.6x)")
PY
