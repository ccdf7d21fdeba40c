#!/usr/bin/env bash
# An 8B-shaped model on one machine (docs/benchmarks.md, "`bench/big_model.sh` — an 8B-shaped
# model"): writes a random Llama-3-8B-shaped checkpoint (32 layers, d 4096, d_ff 14336, 32 heads
# over 8 key/value heads, vocabulary 128256, rope_theta 500000; bfloat16 in 2 GiB shards with the
# hub's index: 16 GB),
# then, in bfloat16:
#   - stats, fit and all_linear on layers 15 and 16 over 512 fit and 512 eval tokens (context
#     256, batch 2) with stages 1 (one process) and stages 2 (mpirun -n 3: one replica of two
#     stages, ranks_per_group 2; layer 15 on the first, 16 on the second);
#   - `linsweep eval` over the 512 eval tokens, and the same forward in plain PyTorch
#     (bench/llama_torch_forward.py), each with every core.
# Prints, per run and rank: wall seconds, peak resident memory (/usr/bin/time's), the weights the
# rank holds and the goal (peak ≤ 1.15 × those weights + 1 GiB), each unit's seconds and the
# units' recorded peaks; then eval against PyTorch in tokens/s, with both PPLs. Needs about 26 GB
# of memory (two stage ranks of about 12 GB each; one process 18 GB) and 17 GB of disk in WORK_DIR.
# Usage: bench/big_model.sh [WORK_DIR] [--small]   (--small: a 4-layer, d 256 stand-in, seconds)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${LINSWEEP_BUILD_DIR:-$root/build}/linsweep"
base="${TMPDIR:-/tmp}" small=0
for arg in "$@"; do
  case "$arg" in
    --small) small=1 ;;
    -*) echo "big_model.sh: unknown option '$arg'" >&2; exit 2 ;;
    *) base="$arg" ;;
  esac
done
[[ -x "$bin" ]] || { echo "big_model.sh: $bin: not built (cmake --build build --target linsweep)" >&2; exit 2; }
work="$(mktemp -d -p "$base" big_model.XXXXXX)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
# A stage waiting for the stream yields its core to the stage that computes.
export OMPI_MCA_mpi_yield_when_idle=1
cores=$(nproc)
if [[ $small -eq 1 ]]; then
  shape=(--layers 4 --d 256 --heads 4 --kv-heads 2 --ff 512 --vocab 1024 --shard-mib 1) layers="[1, 2]"
else
  shape=(--layers 32 --d 4096 --heads 32 --kv-heads 8 --ff 14336 --vocab 128256 --shard-mib 2048) layers="[15, 16]"
fi
echo "writing the checkpoint (${shape[*]}, bfloat16)"
t0=$(date +%s)
/usr/bin/python3 "$root/bench/llama_checkpoint.py" "$work/llama" --dtype bfloat16 "${shape[@]}" --ctx 8192 \
  --tokens 1024 >/dev/null
/usr/bin/python3 - "$work/llama/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
if isinstance(c.get("rope_parameters"), dict):
    c["rope_parameters"]["rope_theta"] = 500000.0  # Llama 3's base
else:
    c["rope_theta"] = 500000.0
json.dump(c, open(sys.argv[1], "w"), indent=1)
PY
echo "  $(( $(date +%s) - t0 )) s, $(du -sh "$work/llama" | cut -f1)"
cat >"$work/spec.yaml" <<YAML
context: 256
models: [{name: llama-8b-shape, path: $work/llama}]
corpora: [{name: tokens, path: $work/llama/tokens.npy, format: npy}]
splits: {fit: {start: 0, tokens: 512}, eval: {start: 512, tokens: 512}}
layers: $layers
experiments: {fit: {lambda: [0.01]}, all_linear: {bootstrap: 200}}
runtime: {dtype: bfloat16, batch: 2}
YAML
# Each process's peak resident KiB and seconds in $TIME_PREFIX.<MPI rank>.
cat >"$work/rank_time.sh" <<'SH'
#!/usr/bin/env bash
exec /usr/bin/time -f "%M %e" -o "$TIME_PREFIX.${OMPI_COMM_WORLD_RANK:-0}" "$@"
SH
chmod +x "$work/rank_time.sh"
# A run that fails (a rank killed for memory) is reported with its exit status and its ranks'
# peaks; the others still run.
echo "stages 1: one process, $cores threads"
rc1=0
TIME_PREFIX="$work/s1.time" LINSWEEP_THREADS=$cores "$work/rank_time.sh" "$bin" run "$work/spec.yaml" --store "$work/s1" \
  --quiet || rc1=$?
echo "stages 2: mpirun -n 3 (a coordinator and one replica of two stages), $cores threads a stage"
rc2=0
TIME_PREFIX="$work/s2.time" LINSWEEP_THREADS=$cores mpirun -x TIME_PREFIX -x LINSWEEP_THREADS -n 3 \
  "$work/rank_time.sh" "$bin" run "$work/spec.yaml" --store "$work/s2" --quiet \
  +runtime.ranks_per_group=2 +runtime.stages=2 || rc2=$?
# Where oneDNN has no bfloat16 GEMM (a CPU without AVX-512), linsweep widens each product to
# float32 and PyTorch's own bfloat16 F.linear runs far slower (docs/benchmarks.md): PyTorch
# then runs the same widened forward (--widen), which is what the comparison is about.
torch_widen=""
grep -qw avx512bw /proc/cpuinfo || torch_widen=--widen
echo "linsweep eval and PyTorch${torch_widen:+ (widened)}, the 512 eval tokens"
"$bin" eval --model "$work/llama" --corpus "$work/llama/tokens.npy" --start 512 --tokens 512 --context 256 \
  --batch 2 --dtype bfloat16 --threads "$cores" --json >"$work/eval.json"
/usr/bin/python3 - "$work/llama/tokens.npy" "$work/tail.npy" <<'PY'
import sys, numpy as np
np.save(sys.argv[2], np.load(sys.argv[1])[512:1024])
PY
/usr/bin/python3 "$root/bench/llama_torch_forward.py" "$work/llama" "$work/tail.npy" --tokens 512 --context 256 \
  --batch 2 --threads "$cores" --dtype bfloat16 $torch_widen >"$work/torch.json"
/usr/bin/python3 - "$bin" "$work" "$rc1" "$rc2" <<'PY'
import glob, json, subprocess, sys
bin, work = sys.argv[1:3]
exit_status = {"s1": int(sys.argv[3]), "s2": int(sys.argv[4])}
GIB = 1024 ** 3
def stage_bytes(stages):
    """Bytes of bfloat16 weights each rank of `stages` holds (from the checkpoint and the split)."""
    out = subprocess.run([bin, "plan", f"{work}/spec.yaml", "--store", f"{work}/plan-store", "--memory-only", "--json"] +
                         (["+runtime.ranks_per_group=2", f"+runtime.stages={stages}"] if stages > 1 else []),
                         check=True, capture_output=True, text=True).stdout
    rows = json.loads(out)["memory"]["rows"]
    return max(r["weights"] for r in rows)
def seconds(u):  # started and finished: seconds since the epoch
    return float(u["finished"]) - float(u["started"])
result = {}
for name, stages in (("s1", 1), ("s2", 2)):
    held = stage_bytes(stages)
    goal = 1.15 * held + GIB
    units = []
    if exit_status[name] == 0:
        units = json.loads(subprocess.run([bin, "query", f"{work}/{name}", "units", "--format", "json"],
                                          check=True, capture_output=True, text=True).stdout)
    ranks = {}
    for f in sorted(glob.glob(f"{work}/{name}.time.*")):
        kib, wall = open(f).read().split()[-2:]  # after "Command terminated by signal N" if killed
        ranks[int(f.rsplit(".", 1)[1])] = {"peak_gib": int(kib) * 1024 / GIB, "seconds": float(wall)}
    per_kind = {u["kind"]: {"seconds": seconds(u), "peak_host_mib": u["peak_host_mib"]} for u in units}
    print(f"stages {stages}: weights a rank holds {held / GIB:.2f} GiB, goal ≤ {goal / GIB:.2f} GiB"
          + (f"; FAILED, exit status {exit_status[name]}" if exit_status[name] else ""))
    for r, v in ranks.items():
        print(f"  rank {r}: peak {v['peak_gib']:.2f} GiB, {v['seconds']:.0f} s")
    for k, v in per_kind.items():
        print(f"  {k}: {v['seconds']:.0f} s, recorded peak {v['peak_host_mib'] / 1024:.2f} GiB")
    workers = [v["peak_gib"] for r, v in ranks.items() if stages == 1 or r > 0]
    result[name] = {"stages": stages, "exit_status": exit_status[name], "weights_gib": held / GIB,
                    "goal_gib": goal / GIB, "ranks": ranks,
                    "units": per_kind, "worst_worker_peak_gib": max(workers), "within_goal": exit_status[name] == 0 and max(workers) * GIB <= goal}
ev, th = json.load(open(f"{work}/eval.json")), json.load(open(f"{work}/torch.json"))
print(f"eval, 512 tokens: linsweep {ev['tokens_per_second']:.1f} tokens/s (PPL {ev['ppl']:.2f}), "
      f"PyTorch {th['tokens_per_second']:.1f} tokens/s (PPL {th['ppl']:.2f}, peak {th['peak_rss_mib'] / 1024:.2f} GiB): "
      f"{ev['tokens_per_second'] / th['tokens_per_second']:.2f}x")
result["eval"] = {"linsweep": ev, "pytorch": th}
print(json.dumps(result))
PY
[[ $rc1 -eq 0 && $rc2 -eq 0 ]] || { echo "big_model.sh: a run failed (stages 1: exit $rc1, stages 2: exit $rc2)" >&2; exit 1; }
