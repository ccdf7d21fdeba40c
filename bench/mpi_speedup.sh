#!/usr/bin/env bash
# Speedup of `mpirun -n 3` (2 worker ranks) over `mpirun -n 2` (1 worker) on a compute-bound
# sweep: stats, fit and all_linear of a GPT-2-architecture model (d=512, 8 layers, vocab
# 50257, random weights) on two corpora, one torch thread per rank. Target >= 1.7x on 2 cores.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${LINSWEEP_BUILD_DIR:-$root/build}/linsweep"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
mkdir -p "$work/model"
/usr/bin/python3 "$root/bench/gpt2_reference.py" make --dir "$work/model" --tokens 4096
cp "$work/model/tokens.npy" "$work/other.npy"
cat > "$work/spec.yaml" <<YAML
store: $work/store
context: 256
models: [{name: m, path: $work/model}]
corpora: [{name: a, path: $work/model/tokens.npy}, {name: b, path: $work/other.npy}]
splits: {fit: {start: 0, tokens: 2048}, eval: {start: 2048, tokens: 1024}}
experiments: {fit: {}, all_linear: {bootstrap: 10}}
runtime: {batch: 4}
YAML
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe LINSWEEP_THREADS=1
declare -A secs
for n in 2 3; do
  rm -rf "$work/store"
  t0=$(date +%s.%N)
  mpirun -n "$n" "$bin" run "$work/spec.yaml" --quiet
  secs[$n]=$(/usr/bin/python3 -c "print(round($(date +%s.%N) - $t0, 2))")
  echo "mpirun -n $n: ${secs[$n]} s"
done
echo "speedup -n 3 over -n 2: $(/usr/bin/python3 -c "print(round(${secs[2]} / ${secs[3]}, 2))")x (target >= 1.7x)"
