#!/usr/bin/env bash
# `linsweep` runs query, compare, status, gc and tokenize without LibTorch and hands every other
# command to `linsweep-full` beside it (docs/architecture.md, "Two executables"). Checks:
#  1. linsweep needs no LibTorch, c10, MPI, NCCL or CUDA library;
#  2. its query, compare, status, gc and tokenize parse and print help exactly as linsweep-full's
#     do (the table catalogue it was built with lists every table the experiments register), and --version
#     and an unknown command reach linsweep-full;
#  3. a linsweep without linsweep-full beside it still runs query and says, exit 1, that it
#     cannot start linsweep-full for a command that needs it;
#  4. linsweep-full starts with OMP_WAIT_POLICY=PASSIVE unless the caller set it (a stand-in
#     linsweep-full beside a copy of linsweep prints what it was given).
# Usage: front_test.sh LINSWEEP LINSWEEP_FULL WORK_DIR
set -euo pipefail
front="$1" full="$2" work="$3"
rm -rf "$work"; mkdir -p "$work"

heavy=$(readelf -d "$front" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -E '^lib(torch|c10|mpi|nccl|cudart|gomp)' || true)
[[ -z "$heavy" ]] || { echo "FAIL: $front needs $(echo $heavy)"; exit 1; }
echo "ok: $(basename "$front") needs no LibTorch, MPI or CUDA library"

for args in "query --help" "compare --help" "status --help" "gc --help" "tokenize --help" "catalogue --help" "catalogue --json" "catalogue --markdown" "catalogue gates" "--version" "frobnicate" "query" "status $work/none"; do
  set +e
  "$front" $args >"$work/front.out" 2>&1; a=$?
  "$full" $args >"$work/full.out" 2>&1; b=$?
  set -e
  [[ $a == "$b" ]] || { echo "FAIL: linsweep $args exits $a, linsweep-full $b"; exit 1; }
  cmp -s "$work/front.out" "$work/full.out" ||
    { echo "FAIL: linsweep $args prints otherwise than linsweep-full:"; diff "$work/front.out" "$work/full.out"; exit 1; }
  echo "ok: linsweep $args: as linsweep-full (exit $a)"
done

mkdir "$work/alone"
cp "$front" "$work/alone/linsweep"
"$work/alone/linsweep" query --help >/dev/null
set +e
"$work/alone/linsweep" run spec.yaml 2>"$work/alone.err"; rc=$?
set -e
grep -q "cannot start $work/alone/linsweep-full" "$work/alone.err" && [[ $rc == 1 ]] ||
  { echo "FAIL: linsweep without linsweep-full: exit $rc, $(cat "$work/alone.err")"; exit 1; }
echo "ok: without linsweep-full: $(cat "$work/alone.err")"

mkdir "$work/stand_in"
cp "$front" "$work/stand_in/linsweep"
printf '#!/bin/sh\necho "OMP_WAIT_POLICY=${OMP_WAIT_POLICY-unset} $*"\n' >"$work/stand_in/linsweep-full"
chmod +x "$work/stand_in/linsweep-full"
for given in unset ACTIVE; do
  if [[ $given == unset ]]; then got=$(env -u OMP_WAIT_POLICY "$work/stand_in/linsweep" run spec.yaml); want=PASSIVE
  else got=$(OMP_WAIT_POLICY=$given "$work/stand_in/linsweep" run spec.yaml); want=$given; fi
  [[ $got == "OMP_WAIT_POLICY=$want run spec.yaml" ]] ||
    { echo "FAIL: OMP_WAIT_POLICY $given before linsweep: linsweep-full got '$got'"; exit 1; }
  echo "ok: OMP_WAIT_POLICY $given before linsweep: linsweep-full started with $want"
done
