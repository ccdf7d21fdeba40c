#!/usr/bin/env bash
# Runs examples/fixture_training.yaml (progressive, finetune linearized/two_phase/control on
# two fixture models) three ways: uninterrupted; killed with SIGKILL while a training unit
# has a checkpoint, then resumed (rows and exported weights must be bitwise equal, and the
# journal must show the resume); and with mpirun -n 3 in worker groups of 2 ranks (data
# parallel; rows within 1e-3). check_training.py also checks losses, steps, the controls,
# progressive's post_lin rows, order and refitted surrogates, and `linsweep eval` of the
# exported models; last runs with no steps between replacements check every refit and every
# post_lin PPL against the reference forward.
# Usage: training_test.sh LINSWEEP_BINARY SOURCE_DIR WORK_DIR
set -euo pipefail
bin="$1"; src="$2"; work="$3"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
export LINSWEEP_THREADS=1   # deterministic CPU kernels: a resumed run must match bitwise
rm -rf "$work"; mkdir -p "$work"
spec="$src/examples/fixture_training.yaml"
"$bin" run "$spec" --store "$work/a" --quiet

# Kill the whole run while a training unit holds a checkpoint, then resume.
"$bin" run "$spec" --store "$work/b" --quiet &
pid=$!
for _ in $(seq 1 3000); do
  if compgen -G "$work/b/checkpoints/*/step-*.safetensors" > /dev/null; then break; fi
  sleep 0.01
done
kill -9 "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
ls "$work"/b/checkpoints/*/step-*.safetensors > /dev/null   # a checkpoint was there when it died
"$bin" run "$spec" --store "$work/b" --quiet
/usr/bin/python3 "$src/tests/experiments/check_training.py" "$work/a" "$work/b" exact "$bin" "$src"
[ -z "$(ls -A "$work/b/checkpoints" 2>/dev/null)" ]   # committed units leave no checkpoints

# SIGUSR1 while a training unit runs (Slurm's warning): the unit saves a checkpoint at its next
# step and the run exits 3; the rerun resumes it and ends with the same rows and weights.
"$bin" run "$spec" --store "$work/c" --quiet &
pid=$!
for _ in $(seq 1 3000); do
  if grep -q '"event":"started".*"unit":"\(progressive\|finetune\)-' "$work/c/journal.jsonl" 2>/dev/null; then break; fi
  sleep 0.01
done
sleep 0.3
kill -USR1 "$pid"
set +e; wait "$pid"; rc=$?; set -e
[ "$rc" -eq 3 ]
grep '"event":"interrupted"' "$work/c/journal.jsonl" | grep -q "stopped on request at step"
ls "$work"/c/checkpoints/*/step-*.safetensors > /dev/null
"$bin" run "$spec" --store "$work/c" --quiet
/usr/bin/python3 "$src/tests/experiments/check_training.py" "$work/a" "$work/c" exact

sed 's/ranks_per_group: 1/ranks_per_group: 2/' "$spec" | sed "s|\.\./tests/|$src/tests/|g" > "$work/rpg2.yaml"
grep -q "ranks_per_group: 2" "$work/rpg2.yaml"
mpirun -n 3 "$bin" run "$work/rpg2.yaml" --store "$work/g2" --quiet
/usr/bin/python3 "$src/tests/experiments/check_training.py" "$work/a" "$work/g2" close
"$bin" tables "$work/a" --out "$work/tables" > /dev/null
grep -q "control" "$work/tables/tables.md"

# Progressive with no steps between replacements, refitted and frozen surrogates: each refit
# against the ridge fit of the reference forward with the earlier layers replaced, each
# post_lin PPL against the reference's.
for surrogates in refit frozen; do
  "$bin" run "$spec" --store "$work/steps0-$surrogates" --quiet "experiments={fit: {lambda: [0.01]}, progressive: \
{steps_per_layer: 0, final_steps: 1, lr: 1.0e-3, batch: 4, control: false, surrogates: $surrogates}}"
  /usr/bin/python3 "$src/tests/experiments/check_training.py" "$work/steps0-$surrogates" steps0 "$src"
done
