#!/usr/bin/env bash
# Repeats the stop-signal scenario of tests/experiments/training_test.sh as small as it still
# reproduces: one fine-tuning unit of tiny-gpt2 (long enough never to end first) gets SIGUSR1 at a
# random moment 0–MAX_DELAY s after the journal says it started; the run must checkpoint and exit
# 3 with the unit journaled "interrupted". Any other exit (134 from glibc's heap checks, 139) is a
# failure. Why: a stop signal may arrive at any instant of a training step, and one that landed
# inside oneDNN's AVX2 JIT GEMM corrupted the heap (common/signal_recorder.hpp says how, and
# docs/reliability.md how rare that was per run: it takes hundreds of trials to trust a fix).
# Usage: scripts/stress_training_signal.sh [--trials N] [--build DIR] [--kernels avx2|native]
#          [--max-delay SECONDS] [--signals K] [--busy N] [--work DIR]
#   --trials N       trials to run (default 100)
#   --build DIR      build directory holding linsweep and linsweep-full (default $LINSWEEP_BUILD_DIR,
#                    else build/); build-asan/ runs the AddressSanitizer build
#   --kernels        avx2 (default): ONEDNN_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell
#                    ATEN_CPU_CAPABILITY=avx2, as scripts/test_isa.sh; native: what the CPU picks
#   --max-delay S    the signal comes 0–S s after the unit starts (default 0.5)
#   --signals K      SIGUSR1 up to K times, 2 ms apart, until the unit has stopped (default 1,
#                    as Slurm and the test send): each is another chance to land inside a kernel
#   --busy N         N busy loops at nice 19 beside the runs, as CI's load (default 0)
#   --work DIR       scratch directory (default a fresh one under $TMPDIR, removed at the end)
# Prints one line per trial and "N trials, F failures"; exits 0 when none failed, 1 when one
# did (its store and stderr kept under the work directory), 2 on bad options.
# LINSWEEP_THREADS defaults to 1, as in the test.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
trials=100 build="${LINSWEEP_BUILD_DIR:-$root/build}" kernels=avx2 max_delay=0.5 signals=1 busy=0 work=""
usage="usage: stress_training_signal.sh [--trials N] [--build DIR] [--kernels avx2|native] [--max-delay S] [--signals K] [--busy N] [--work DIR]"
bad() { echo "stress_training_signal: $1 ($usage)" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  [[ $# -ge 2 ]] || bad "$1 needs a value"
  case "$1" in
    --trials) [[ "$2" =~ ^[1-9][0-9]*$ ]] || bad "--trials: '$2' is not a positive integer"; trials="$2" ;;
    --build) [[ -x "$2/linsweep" && -x "$2/linsweep-full" ]] || bad "--build: no linsweep and linsweep-full in '$2'"
             build="$(cd "$2" && pwd)" ;;
    --kernels) [[ "$2" == avx2 || "$2" == native ]] || bad "--kernels: '$2' is not avx2 or native"; kernels="$2" ;;
    --max-delay) [[ "$2" =~ ^[0-9]+(\.[0-9]+)?$ ]] || bad "--max-delay: '$2' is not a number of seconds"
                 max_delay="$2" ;;
    --signals) [[ "$2" =~ ^[1-9][0-9]*$ ]] || bad "--signals: '$2' is not a positive integer"; signals="$2" ;;
    --busy) [[ "$2" =~ ^[0-9]+$ ]] || bad "--busy: '$2' is not a count"; busy="$2" ;;
    --work) [[ -n "$2" ]] || bad "--work needs a directory"; work="$2" ;;
    *) bad "unknown argument '$1'" ;;
  esac
  shift 2
done
[[ -x "$build/linsweep" && -x "$build/linsweep-full" ]] || bad "no linsweep and linsweep-full in $build (build first)"
if [[ -z "$work" ]]; then
  work="$(mktemp -d "${TMPDIR:-/tmp}/stress-signal.XXXXXX")"
  keep_work=0
else
  mkdir -p "$work"
  work="$(cd "$work" && pwd)"
  keep_work=1
fi

export LINSWEEP_THREADS="${LINSWEEP_THREADS:-1}"
if [[ $kernels == avx2 ]]; then export ONEDNN_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell ATEN_CPU_CAPABILITY=avx2; fi
# Under AddressSanitizer: the leak report at exit is not what this looks for.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

# One unit: tiny-gpt2's fine-tuning control (no fit needed), far more steps than a trial lasts.
spec="$work/spec.yaml"
cat > "$spec" <<EOF
store: $work/store
context: 32
models:
  - {name: tiny-gpt2, path: $root/tests/data/models/tiny-gpt2}
corpora:
  - {name: stream-a, path: $root/tests/data/models/tiny-gpt2.tokens.npy, format: npy}
splits:
  fit:   {start: 0,    tokens: 1024}
  train: {start: 1024, tokens: 1536}
  eval:  {start: 2560, tokens: 256}
layers: all
experiments:
  finetune: {variants: [], steps: 1000000, lr: 1.0e-3, batch: 8, checkpoint_every: 0, save_model: false}
runtime: {batch: 8, ranks_per_group: 1}
EOF

busy_pids=()
cleanup() {
  for p in "${busy_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  if [[ $keep_work -eq 0 && ${failures:-0} -eq 0 ]]; then rm -rf "$work"; fi
}
trap cleanup EXIT
for _ in $(seq 1 "$busy"); do
  nice -n 19 bash -c 'while :; do :; done' &
  busy_pids+=($!)
done

echo "stress_training_signal: $trials trials, build $build, kernels $kernels, LINSWEEP_THREADS=$LINSWEEP_THREADS," \
  "SIGUSR1 x$signals 0-${max_delay} s after the unit starts, $busy busy loops; work $work"
failures=0
started_all=$SECONDS
for t in $(seq 1 "$trials"); do
  store="$work/store" err="$work/stderr"
  rm -rf "$store"
  t0=$(date +%s.%N)
  "$build/linsweep" run "$spec" --store "$store" --quiet 2> "$err" &
  pid=$!
  for _ in $(seq 1 12000); do   # up to 120 s for the model to load (ASan builds are slow)
    if grep -q '"event":"started".*"unit":"finetune-' "$store/journal.jsonl" 2>/dev/null; then break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
  done
  delay=$(awk -v m="$max_delay" -v r="$RANDOM" 'BEGIN { printf "%.3f", m * r / 32767 }')
  sleep "$delay"
  for ((k = 0; k < signals; k++)); do
    # Not once the unit has stopped: the run then soon drops its handler, and SIGUSR1's
    # default action would end it (exit 138), which says nothing about the heap.
    if [[ $k -gt 0 ]] && grep -q '"event":"interrupted"' "$store/journal.jsonl" 2>/dev/null; then break; fi
    kill -USR1 "$pid" 2>/dev/null || break
    [[ $k -eq $((signals - 1)) ]] || sleep 0.002
  done
  # A run that hangs is a failure too (killed after 300 s: exit 137).
  deadline=$((SECONDS + 300))
  while kill -0 "$pid" 2>/dev/null && [[ $SECONDS -lt $deadline ]]; do sleep 0.05; done
  kill -KILL "$pid" 2>/dev/null || true
  set +e; wait "$pid"; rc=$?; set -e
  seconds=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  verdict=ok
  if [[ $rc -ne 3 ]]; then
    verdict="FAILED: exit $rc, expected 3: $(sed '/^run: to continue/d' "$err" | tail -n 1)"
  elif ! grep '"event":"interrupted"' "$store/journal.jsonl" | grep -q "stopped on request at step"; then
    verdict="FAILED: exit 3 but no \"interrupted\" line for the unit in the journal"
  fi
  echo "trial $t: delay ${delay} s, exit $rc, ${seconds} s: $verdict"
  if [[ $verdict != ok ]]; then
    failures=$((failures + 1))
    mkdir -p "$work/failed-$t"
    if [[ -d $store ]]; then mv "$store" "$work/failed-$t/store"; fi
    mv "$err" "$work/failed-$t/stderr"
  fi
done
echo "$trials trials, $failures failures ($((SECONDS - started_all)) s)"
if [[ $failures -gt 0 ]]; then
  echo "stress_training_signal: the failed trials' stores and stderr are under $work/failed-*/" >&2
  exit 1
fi
