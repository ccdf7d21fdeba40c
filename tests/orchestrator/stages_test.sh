#!/usr/bin/env bash
# Models split by layers over ranks (runtime.stages; docs/spec.md, "Memory"), on real MPI ranks,
# over every measurement kind (examples/fixture_measure.yaml with speed's forwards, and the MoE
# fixture with experts):
# - one replica of two stages (mpirun -n 3, ranks_per_group 2, stages 2) gives the tables of one
#   process bit for bit: each layer runs once, on the rank that holds it, on the same windows,
#   and what one stage computed reaches the others as a sum with zeros, which is exact;
# - two replicas of two stages (mpirun -n 5, ranks_per_group 4) give the tables of two one-stage
#   ranks sharing the windows (mpirun -n 3, ranks_per_group 2) bit for bit;
# - the same over three stages of the MoE fixture, whose middle stage neither embeds the stream
#   that runs nor scores, and over two stages of two dense Llama fixtures (one with a tied head),
#   training included;
# - the captured activation shards (X and δ of every layer, one part per replica) hold the same
#   rows, and speed's columns other than its timings are equal;
# - a rank of two stages holds half the layers (the stats units' measured peak, a 270 MB model);
# - training (finetune, progressive) over one and two replicas of two stages: the tables and the
#   exported models of one process and of two data-parallel ranks, bit for bit;
# - refusals, exit 2 with one line: speed's decoding, stages that do not divide
#   the group, a local run, more stages than a model has layers.
# Usage: stages_test.sh LINSWEEP_BINARY SOURCE_DIR WORK_DIR
set -euo pipefail
bin="$1"; src="$2"; work="$3"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
export LINSWEEP_THREADS=1   # same threads in every rank count: bitwise-equal forwards
rm -rf "$work"; mkdir -p "$work"
spec="$work/fixture.yaml"
sed "s|\.\./tests/|$src/tests/|g" "$src/examples/fixture.yaml" > "$spec"
measure="$work/measure.yaml"
sed "s|\.\./tests/|$src/tests/|g" "$src/examples/fixture_measure.yaml" > "$measure"
compare="/usr/bin/python3 $src/tests/orchestrator/compare_stores.py"
# Speed's forwards (its decoding generates, which a split model refuses); two repeats suffice to
# compare what is not a timing.
speed="+experiments.speed={decode: false, repeats: 2}"
# Fewer epochs, draws and resamples than the example's: the same code paths in less time (every
# rank of a group trains the same gates; five ranks share two cores in CI).
light=(experiments.gate.mlp_epochs=40 experiments.gate.bootstrap=200 experiments.gate.random_draws=2
       experiments.gate.curve_steps=2 experiments.clusters.n_init=2 +experiments.token_context.bootstrap=200 "$speed")

# The capture units' activation shards of two stores: per unit, split and layer, the parts
# concatenated in order, every dataset and attribute equal (the parts may split the rows
# differently: one part per replica).
same_shards() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import glob, sys
import h5py, numpy as np
a, b = sys.argv[1:3]
def shards(store):
    out = {}
    for path in glob.glob(f"{store}/activations/*/*/layer*.part*.h5"):
        unit, split, name = path.split("/")[-3:]
        layer, part = name.split(".")[:2]
        out.setdefault((unit, split, layer), []).append((int(part[len("part"):]), path))
    return {k: [p for _, p in sorted(v)] for k, v in out.items()}
def read(paths):
    data, attrs = {}, []
    for p in paths:
        with h5py.File(p, "r") as f:
            attrs.append({k: v for k, v in f.attrs.items() if k != "rows"})
            for name in f:
                data.setdefault(name, []).append(f[name][()])
    assert all(x == attrs[0] for x in attrs), attrs
    return {k: np.concatenate(v) for k, v in data.items()}, attrs[0]
sa, sb = shards(a), shards(b)
assert sa.keys() == sb.keys() and sa, (sorted(sa), sorted(sb))
for key in sa:
    (da, aa), (db, ab) = read(sa[key]), read(sb[key])
    assert aa == ab, (key, aa, ab)
    assert da.keys() == db.keys(), key
    for name in da:
        assert da[name].dtype == db[name].dtype and da[name].tobytes() == db[name].tobytes(), (key, name)
print(f"{a} == {b}: {len(sa)} captured (unit, split, layer) shards, bit for bit")
PY
}

# Speed's rows of two stores: every column but the timings and the machine equal.
same_speed() {
  /usr/bin/python3 - "$bin" "$1" "$2" <<'PY'
import json, subprocess, sys
bin, a, b = sys.argv[1:4]
def rows(store):
    out = json.loads(subprocess.run([bin, "query", store, "speed", "--format", "json"], check=True,
                                    capture_output=True, text=True).stdout)
    return {(r["model"], r["corpus"], r["layer_set"], r["forward"]): r for r in out}
timed = {"seconds", "seconds_min", "seconds_max", "tokens_per_s", "saving_pct", "saving_low", "saving_high",
         "machine", "kernels"}
ra, rb = rows(a), rows(b)
assert ra.keys() == rb.keys() and ra, (sorted(ra), sorted(rb))
for k in ra:
    for c in ra[k].keys() - timed:
        assert ra[k][c] == rb[k][c], (k, c, ra[k][c], rb[k][c])
print(f"{a} == {b}: {len(ra)} speed rows, every column but the timings")
PY
}

"$bin" run "$measure" --store "$work/n1" --quiet "${light[@]}"
mpirun -n 3 "$bin" run "$measure" --store "$work/s2" --quiet runtime.ranks_per_group=2 +runtime.stages=2 "${light[@]}"
$compare "$work/n1" "$work/s2" --exact
same_shards "$work/n1" "$work/s2"
same_speed "$work/n1" "$work/s2"
echo "one replica of two stages: the tables and captures of one process"

mpirun -n 3 "$bin" run "$measure" --store "$work/g2" --quiet runtime.ranks_per_group=2 "${light[@]}"
mpirun -n 5 "$bin" run "$measure" --store "$work/g4s2" --quiet runtime.ranks_per_group=4 +runtime.stages=2 "${light[@]}"
$compare "$work/g2" "$work/g4s2" --exact
same_shards "$work/g2" "$work/g4s2"
same_speed "$work/g2" "$work/g4s2"
echo "two replicas of two stages: the tables and captures of two ranks sharing the windows"

# The MoE fixture (three layers, the first dense, over tokens of its vocabulary): experts, and
# two and three stages, where the middle stage neither embeds what runs nor scores.
/usr/bin/python3 -c "import numpy as np, sys; np.save(sys.argv[1], np.random.default_rng(0).integers(0, 512, 4096).astype(np.int32))" \
  "$work/moe_tokens.npy"
cat > "$work/moe.yaml" <<YAML
context: 32
models: [{name: moe, path: $src/tests/data/models/hf_zoo/qwen2-moe-f32}]
corpora: [{name: tokens, path: $work/moe_tokens.npy, format: npy}]
splits:
  fit: {start: 0, tokens: 1024}
  gate: {start: 1024, tokens: 1024}
  select: {start: 2048, tokens: 512}
  eval: {start: 2560, tokens: 1024}
layers: all
experiments:
  fit: {}
  all_linear: {bootstrap: 100}
  experts: {bootstrap: 100}
  gate: {bootstrap: 100, mlp_epochs: 20, curve_steps: 2, random_draws: 2}
  token_context: {bootstrap: 100}
  clusters: {pca: 8, k: 4, n_init: 2}
  compound: {bootstrap: 100}
runtime: {batch: 8}
YAML
"$bin" run "$work/moe.yaml" --store "$work/moe1" --quiet
mpirun -n 3 "$bin" run "$work/moe.yaml" --store "$work/moe2" --quiet +runtime.ranks_per_group=2 +runtime.stages=2
mpirun -n 4 "$bin" run "$work/moe.yaml" --store "$work/moe3" --quiet +runtime.ranks_per_group=3 +runtime.stages=3
for stages in 2 3; do
  $compare "$work/moe1" "$work/moe$stages" --exact
  same_shards "$work/moe1" "$work/moe$stages"
done
echo "a mixture of experts over two and three stages: the tables and captures of one process"

# Dense Llamas (grouped key/value heads; a head tied to the embedding, stored in bfloat16) over the
# same tokens: the measurement kinds and training, split over two stages. Their MLPs have no
# biases, which an exported linearized model needs: save_model is off (GPT-2 and NeoX above export).
cat > "$work/llama.yaml" <<YAML
context: 32
models:
  - {name: llama-gqa, path: $src/tests/data/models/hf_transformers5/llama-gqa-f32}
  - {name: llama-tied, path: $src/tests/data/models/hf_transformers5/llama3-tied-bf16}
corpora: [{name: stream-a, path: $work/moe_tokens.npy, format: npy}]
splits:
  fit: {start: 0, tokens: 512}
  gate: {start: 512, tokens: 512}
  select: {start: 1024, tokens: 512}
  eval: {start: 1536, tokens: 512}
  train: {start: 2048, tokens: 1024}
layers: all
experiments:
  fit: {}
  all_linear: {bootstrap: 100}
  gate: {bootstrap: 100, mlp_epochs: 20, curve_steps: 2, random_draws: 2}
  token_context: {bootstrap: 100}
  clusters: {pca: 8, k: 4, n_init: 2}
  compound: {bootstrap: 100}
  speed: {decode: false, repeats: 2}
  progressive: {steps_per_layer: 2, final_steps: 4, lr: 1.0e-3, batch: 4, checkpoint_every: 2, save_model: false}
  finetune: {layers: [1], steps: 4, variants: [linearized, two_phase], lr: 1.0e-3, batch: 4, eval_every: 2,
             save_model: false}
runtime: {batch: 8}
YAML
"$bin" run "$work/llama.yaml" --store "$work/llama1" --quiet
mpirun -n 3 "$bin" run "$work/llama.yaml" --store "$work/llama2" --quiet +runtime.ranks_per_group=2 +runtime.stages=2
$compare "$work/llama1" "$work/llama2" --exact
same_shards "$work/llama1" "$work/llama2"
same_speed "$work/llama1" "$work/llama2"
/usr/bin/python3 "$src/tests/experiments/check_training.py" "$work/llama1" "$work/llama2" same
echo "dense Llamas over two stages, training too: the tables of one process"

# Training over stages (examples/fixture_training.yaml: progressive with refitted surrogates and
# its control, finetune linearized and two-phase with soft gates, on GPT-2, whose head is tied to
# the embedding, and NeoX): the stream's gradient crosses back between the stages, each stage's
# gradients are summed over its peers in the other replicas, the clipping norm covers every
# stage, and the tied matrix's two copies add their gradients. The training tables and the
# exported models equal one process's (one replica) and two data-parallel ranks' (two replicas)
# bit for bit (check_training.py's "same").
training="$work/training.yaml"
sed "s|\.\./tests/|$src/tests/|g" "$src/examples/fixture_training.yaml" > "$training"
"$bin" run "$training" --store "$work/t1" --quiet
mpirun -n 3 "$bin" run "$training" --store "$work/t2" --quiet runtime.ranks_per_group=2 +runtime.stages=2
/usr/bin/python3 "$src/tests/experiments/check_training.py" "$work/t1" "$work/t2" same
echo "training over one replica of two stages: the tables and models of one process"
# Slurm's warning (SIGUSR1) while a training unit runs over stages: each stage saves its own
# checkpoint and the run exits 3. One stage's newest checkpoint is then removed, as if the job
# died between the two stages' writes: the rerun resumes every stage from the newest step both
# saved and ends with the rows and models of one process.
mpirun -n 3 "$bin" run "$training" --store "$work/t2r" --quiet runtime.ranks_per_group=2 +runtime.stages=2 \
  2>/dev/null &
pid=$!
for _ in $(seq 1 3000); do
  if compgen -G "$work/t2r/checkpoints/*/stage-1/step-*.safetensors" > /dev/null; then break; fi
  sleep 0.01
done
kill -USR1 "$pid"
set +e; wait "$pid"; rc=$?; set -e
[ "$rc" -eq 3 ] || { echo "a stopped run over stages exited $rc, not 3"; exit 1; }
newest=$(ls "$work"/t2r/checkpoints/*/stage-1/step-*.safetensors | sort | tail -1)
rm "$newest"
# With an older stage-1 checkpoint left the unit resumes from it (stage 0 a step ahead, the
# journal shows the resume); with none, every stage starts again.
mode=same
compgen -G "$(dirname "$newest")/step-*.safetensors" > /dev/null && mode=exact
mpirun -n 3 "$bin" run "$training" --store "$work/t2r" --quiet runtime.ranks_per_group=2 +runtime.stages=2
/usr/bin/python3 "$src/tests/experiments/check_training.py" "$work/t1" "$work/t2r" "$mode"
echo "training over stages stopped, one stage a checkpoint behind, and resumed: the rows of one process"
mpirun -n 3 "$bin" run "$training" --store "$work/tg2" --quiet runtime.ranks_per_group=2
mpirun -n 5 "$bin" run "$training" --store "$work/tg4s2" --quiet runtime.ranks_per_group=4 +runtime.stages=2
/usr/bin/python3 "$src/tests/experiments/check_training.py" "$work/tg2" "$work/tg4s2" same
echo "training over two replicas of two stages: the tables and models of two ranks sharing the batches"

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
refused "speed's decoding" "speed units of tiny-gpt2 need a whole model: speed's decoding" \
  "$bin" plan "$measure" runtime.ranks_per_group=2 +runtime.stages=2 "+experiments.speed={}"
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
