# Sourced by the integration tests that run one small sweep many ways (disk full, Slurm on one
# node and on two): `fixture_sweep SRC STORE` prints its spec up to `experiments`, with the
# fixture models and corpora of the checkout SRC. Each test appends its own `runtime:` and
# `resources:` lines.
fixture_sweep() {
  local src="$1" store="$2"
  cat <<YAML
store: $store
context: 32
models:
  - {name: tiny-gpt2, path: $src/tests/data/models/tiny-gpt2}
  - {name: tiny-neox, path: $src/tests/data/models/tiny-neox}
corpora:
  - {name: stream-a, path: $src/tests/data/models/tiny-gpt2.tokens.npy, format: npy}
  - {name: fiction, path: $src/tests/data/tokenizer/brown_fiction.txt, format: text}
splits:
  fit:  {start: 0,    tokens: 1024}
  eval: {start: 2560, tokens: 1024}
layers: all
experiments:
  fit: {lambda: [0.01, 0.1]}
  all_linear: {bootstrap: 200}
YAML
}
