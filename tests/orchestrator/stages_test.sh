#!/usr/bin/env bash
# Models split by layers over ranks (runtime.stages; docs/spec.md, "Memory"), on real MPI ranks:
# - one replica of two stages (mpirun -n 3, ranks_per_group 2, stages 2) gives the tables of one
#   process bit for bit: each layer runs once, on the rank that holds it, on the same windows;
# - two replicas of two stages (mpirun -n 5, ranks_per_group 4) give the tables of two one-stage
#   ranks sharing the windows (mpirun -n 3, ranks_per_group 2) bit for bit;
# - a rank of two stages holds half the layers (the stats units' measured peak, a 270 MB model);
# - refusals, exit 2 with one line: a kind that needs a whole model, stages that do not divide
#   the group, a local run, more stages than a model has layers.
# Usage: stages_test.sh LINSWEEP_BINARY SOURCE_DIR WORK_DIR
set -euo pipefail
bin="$1"; src="$2"; work="$3"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
export LINSWEEP_THREADS=1   # same threads in every rank count: bitwise-equal forwards
rm -rf "$work"; mkdir -p "$work"
spec="$work/fixture.yaml"
sed "s|\.\./tests/|$src/tests/|g" "$src/examples/fixture.yaml" > "$spec"
compare="/usr/bin/python3 $src/tests/orchestrator/compare_stores.py"

"$bin" run "$spec" --store "$work/n1" --quiet
mpirun -n 3 "$bin" run "$spec" --store "$work/s2" --quiet runtime.ranks_per_group=2 +runtime.stages=2
$compare "$work/n1" "$work/s2" --exact
echo "one replica of two stages: the tables of one process"

mpirun -n 3 "$bin" run "$spec" --store "$work/g2" --quiet runtime.ranks_per_group=2
mpirun -n 5 "$bin" run "$spec" --store "$work/g4s2" --quiet runtime.ranks_per_group=4 +runtime.stages=2
$compare "$work/g2" "$work/g4s2" --exact
echo "two replicas of two stages: the tables of two ranks sharing the windows"

refused() {  # WHAT EXPECTED-TEXT COMMAND...: exit 2, one line containing EXPECTED-TEXT
  local what="$1" want="$2"; shift 2
  set +e
  err=$("$@" 2>&1 >/dev/null)
  code=$?
  set -e
  if [ "$code" -ne 2 ] || [ "$(wc -l <<<"$err")" -ne 1 ] || ! grep -qF -- "$want" <<<"$err"; then
    echo "$what: expected exit 2 with one line containing '$want', got $code: $err"; exit 1
  fi
  echo "refused ($what): $err"
}
refused "a kind that needs a whole model" "gate run only on a whole model" \
  "$bin" plan "$spec" runtime.ranks_per_group=2 +runtime.stages=2 "+experiments.gate={}"
refused "stages that do not divide the group" "2 stages do not divide runtime.ranks_per_group 3" \
  "$bin" plan "$spec" runtime.ranks_per_group=3 +runtime.stages=2
refused "more stages than layers" "runtime.stages: 3 stages" \
  "$bin" plan "$spec" runtime.ranks_per_group=3 +runtime.stages=3
refused "a local run" "runtime.stages" \
  "$bin" run "$spec" --store "$work/local" runtime.ranks_per_group=2 +runtime.stages=2
[ ! -e "$work/local" ] || { echo "a refused local run created its store"; exit 1; }

# Each stage holds its layers only: on a Llama-shaped model of four layers of 64 MiB each (float32),
# the stats units of a rank of two stages peak at least 64 MiB (half the 128 MiB of the two layers it
# does not hold) below a rank of a whole model
# (both under mpirun, two ranks sharing a unit, so the MPI libraries weigh the same in both).
/usr/bin/python3 "$src/bench/llama_checkpoint.py" "$work/llama" --layers 4 --d 1024 --heads 8 --kv-heads 8 \
  --ff 4096 --vocab 512 --ctx 64 --tokens 4096 >/dev/null
cat > "$work/big.yaml" <<EOF
context: 32
models: [{name: big, path: $work/llama}]
corpora: [{name: tokens, path: $work/llama/tokens.npy, format: npy}]
splits: {fit: {start: 0, tokens: 512}, eval: {start: 512, tokens: 512}}
layers: [0, 3]
experiments: {fit: {}, all_linear: {}}
runtime: {batch: 8}
EOF
"$bin" run "$work/big.yaml" --store "$work/big1" --quiet
mpirun -n 3 "$bin" run "$work/big.yaml" --store "$work/big2" --quiet +runtime.ranks_per_group=2 +runtime.stages=2
$compare "$work/big1" "$work/big2" --exact
mpirun -n 3 "$bin" run "$work/big.yaml" --store "$work/big1g" --quiet +runtime.ranks_per_group=2
/usr/bin/python3 - "$bin" "$work" <<'PY'
import json, subprocess, sys
bin, work = sys.argv[1:3]
def peak(store):
    units = json.loads(subprocess.run([bin, "query", f"{work}/{store}", "units", "--format", "json"],
                                      check=True, capture_output=True, text=True).stdout)
    return max(u["peak_host_mib"] for u in units if u["kind"] == "stats")
one, split = peak("big1g"), peak("big2")
print(f"stats units' peak host memory: a rank of a whole model {one:.0f} MiB, a rank of two stages {split:.0f} MiB")
assert split <= one - 64, "a stage holds more than its layers"
PY
echo "stages test passed"
