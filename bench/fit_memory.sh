#!/usr/bin/env bash
# Peak memory of the fit statistics does not grow with the fit tokens: runs a stats+fit sweep
# over N and 10·N tokens of a GPT-2-architecture model (d=512, 8 layers, vocab 50257, random
# weights) and prints each run's peak RSS (ru_maxrss of the linsweep process) and the ratio.
# Usage: bench/fit_memory.sh [N]   (default 2048)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${LINSWEEP_BUILD_DIR:-$root/build}/linsweep"
n="${1:-2048}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
mkdir -p "$work/model"
/usr/bin/python3 "$root/bench/gpt2_reference.py" make --dir "$work/model" --tokens $((10 * n + 512))
/usr/bin/python3 - "$bin" "$work" "$n" <<'PY'
import os, subprocess, sys, time
binary, work, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
peaks = {}
for tokens in (n, 10 * n):
    spec = f"{work}/spec-{tokens}.yaml"
    with open(spec, "w") as f:
        f.write(f"store: {work}/store-{tokens}\ncontext: 256\nmodels: [{{name: m, path: {work}/model}}]\n"
                f"corpora: [{{name: c, path: {work}/model/tokens.npy}}]\nsplits: {{fit: {{start: 0, tokens: {tokens}}}}}\n"
                f"experiments: {{fit: {{lambda: [0.01]}}}}\nruntime: {{batch: 4}}\n")
    t0 = time.time()
    p = subprocess.Popen([binary, "run", spec, "--quiet"])
    _, status, usage = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"run failed with status {status}")
    peaks[tokens] = usage.ru_maxrss / 1024  # KiB -> MiB
    print(f"fit over {tokens:6d} tokens: peak RSS {peaks[tokens]:.0f} MiB, {time.time() - t0:.1f} s")
print(f"peak RSS at 10x the tokens / at 1x: {peaks[10 * n] / peaks[n]:.2f} (statistics are streamed: ~1.0 expected)")
PY
