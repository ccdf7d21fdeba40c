#!/usr/bin/env bash
# The embedded demo end to end, as a user runs it, on the real Brown Corpus and GPT-2 BPE
# (fetched by scripts/fetch_demo_data.sh): Ctrl-C during pretraining, then a rerun that
# continues from the checkpoints; the models' held-out PPL against the unigram PPL; the tables
# and the SVG figures; then a second demo into a fresh output directory with the models
# cached, Ctrl-C during the sweep, and a rerun that continues (no unit committed twice) and
# ends with the same tables as the first demo. check_demo.py does the file checks.
# Usage: demo_test.sh LINSWEEP_BINARY SOURCE_DIR WORK_DIR
set -euo pipefail
bin="$1"; src="$2"; work="$3"
rm -rf "$work"; mkdir -p "$work"
mapfile -t data < <("$src/scripts/fetch_demo_data.sh")
brown="${data[0]}"; encoder="${data[1]}"
cache="$work/cache"
common=(--cache "$cache" --brown "$brown" --encoder "$encoder" --workers 2)

# Ctrl-C reaches the whole foreground process group; setsid gives the demo its own group to signal.
interrupt_when() {  # interrupt_when OUT_DIR CONDITION... : start a demo, SIGINT its group once CONDITION holds
  local out="$1"; shift
  setsid "$bin" demo "${common[@]}" --out "$out" --quiet > "$out.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 6000); do
    if "$@"; then break; fi
    if ! kill -0 "$pid" 2>/dev/null; then echo "demo ended before the interrupt"; cat "$out.log"; exit 1; fi
    sleep 0.1
  done
  kill -INT -- "-$pid"
  local rc=0
  wait "$pid" || rc=$?
  echo "interrupted demo exited $rc"
  cat "$out.log"
  [ "$rc" -eq 3 ]
}
has_checkpoint() { compgen -G "$cache/demo/checkpoints/*/step-*.safetensors" > /dev/null; }
committed_units() { local n; n=$(grep -c '"event":"committed"' "$1/store/journal.jsonl" 2>/dev/null) || true; echo "${n:-0}"; }
has_committed() { [ "$(committed_units "$1")" -ge "$2" ]; }

# 1. Interrupt during pretraining: checkpoints stay, no model is stamped unfinished.
interrupt_when "$work/a" has_checkpoint
has_checkpoint
start=$(date +%s)
"$bin" demo "${common[@]}" --out "$work/a" --json > "$work/a.json"
echo "first demo (after the interrupt): $(( $(date +%s) - start )) s"

# 2. Models cached: a fresh output directory, interrupted once 20 units are committed.
interrupt_when "$work/b" has_committed "$work/b" 20
before=$(committed_units "$work/b")
"$bin" demo "${common[@]}" --out "$work/b" --json > "$work/b.json"
echo "units committed before the interrupt: $before, in all: $(committed_units "$work/b")"

/usr/bin/python3 "$src/tests/orchestrator/check_demo.py" "$work/a" "$work/a.json" "$work/b" "$work/b.json"
