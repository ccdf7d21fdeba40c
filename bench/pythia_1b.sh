# Sourced by bench/plan_scale.sh and bench/scale_1b.sh: a sweep over a random Pythia-1B-shaped
# checkpoint (bench/neox_checkpoint.py: 2 GB of bfloat16 weights) and a timer.

# pythia_1b WORK TOKENS: writes the checkpoint to WORK/pythia-1b and the head of WORK/spec.yaml
# (store WORK/store, context 128, the fixture token stream, fit and eval splits of TOKENS tokens
# each); the caller appends `layers`, `experiments` and the rest.
pythia_1b() {
  local work="$1" tokens="$2" root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  /usr/bin/python3 "$root/bench/neox_checkpoint.py" "$work/pythia-1b"
  cat > "$work/spec.yaml" <<YAML
store: $work/store
context: 128
models: [{name: pythia-1b, path: $work/pythia-1b}]
corpora: [{name: stream, path: $root/tests/data/models/tiny-gpt2.tokens.npy, format: npy}]
splits:
  fit: {start: 0, tokens: $tokens}
  eval: {start: $tokens, tokens: $tokens}
YAML
}

# seconds COMMAND...: the command's wall-clock seconds; its output is dropped.
seconds() { /usr/bin/time -f %e "$@" 2>&1 >/dev/null | tail -1; }
