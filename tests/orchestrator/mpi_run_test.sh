#!/usr/bin/env bash
# Runs the fixture sweep with -n 1, mpirun -n 2, -n 3 (one-rank groups summing through MPI,
# runtime.communicator mpi) and -n 3 with ranks_per_group 2, and checks that fits and
# all_linear agree (compare_stores.py) and that each unit records its communicator; then SIGUSR1 and SIGTERM runs
# exit 3 and resume to the same tables, a failing unit kind gives exit 1 with the failures in
# `status`, and SIGKILL at random moments resumes to identical tables.
# After every resume the journal and the unit files must agree: each unit file has exactly one
# "committed" line (a kill between a unit's rename and its journal line is reconciled by the
# next writer, marked "recovered"), and no committed line lacks its file.
# Usage: mpi_run_test.sh LINSWEEP_BINARY TEST_BINARY SOURCE_DIR WORK_DIR [kill-only]
#   TEST_BINARY: linsweep_test_cli, the command line with the `toy` test experiment, whose units
#   fail on request. kill-only: only the reference run and the SIGKILL trials
#   (LINSWEEP_KILL_TRIALS, default 10; ctest's `long` test runs 200).
set -euo pipefail
bin="$1"; testbin="$2"; src="$3"; work="$4"; only="${5:-}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
export LINSWEEP_THREADS=1   # same threads in every rank count: bitwise-equal forwards
rm -rf "$work"; mkdir -p "$work"
spec="$src/examples/fixture.yaml"
sed 's/ranks_per_group: 1 /ranks_per_group: 2 /' "$spec" > "$work/rpg2.yaml"
sed -i "s|\.\./tests/|$src/tests/|g" "$work/rpg2.yaml"
grep -q "ranks_per_group: 2" "$work/rpg2.yaml"
compare="/usr/bin/python3 $src/tests/orchestrator/compare_stores.py"

journal_agrees() {  # STORE: every unit file committed once in the journal, every committed line with its file
  /usr/bin/python3 - "$1" <<'PY'
import json, os, sys
store = sys.argv[1]
files = {n[:-3] for n in os.listdir(f"{store}/units")
         if n.endswith(".h5") and not n.endswith(".arrays.h5") and not n.startswith(".")}
lines = [json.loads(l) for l in open(f"{store}/journal.jsonl") if l.strip()]
committed = [e["unit"] for e in lines if e.get("event") == "committed"]
recovered = sum(1 for e in lines if e.get("event") == "committed" and e.get("recovered"))
twice = {u for u in committed if committed.count(u) > 1}
assert not twice, f"committed more than once in the journal: {sorted(twice)}"
assert set(committed) == files, f"journal and units disagree: {sorted(set(committed) ^ files)}"
print(f"journal agrees with units/: {len(files)} units, {recovered} recovered")
PY
}

"$bin" run "$spec" --store "$work/n1" --quiet
if [ "$only" != "kill-only" ]; then
mpirun -n 2 "$bin" run "$spec" --store "$work/n2" --quiet
# Two worker groups of one rank, each summing through its own communicator (how NCCL runs on
# one GPU); by default one-rank groups sum nothing.
mpirun -n 3 "$bin" run "$spec" --store "$work/n3" --quiet +runtime.communicator=mpi
mpirun -n 3 "$bin" run "$work/rpg2.yaml" --store "$work/n3g2" --quiet
$compare "$work/n1" "$work/n2" --exact
$compare "$work/n1" "$work/n3" --exact
$compare "$work/n1" "$work/n3g2"
communicators() {  # STORE: the distinct `communicator` values of its units
  "$bin" query "$1" units --format json |
    /usr/bin/python3 -c 'import json,sys; print(",".join(sorted({u["communicator"] for u in json.load(sys.stdin)})))'
}
for want in n1:none n2:none n3:mpi n3g2:mpi; do
  got=$(communicators "$work/${want%%:*}")
  [ "$got" = "${want#*:}" ] || { echo "units of ${want%%:*} record communicator '$got', expected '${want#*:}'"; exit 1; }
done
set +e
err=$(mpirun -n 2 "$bin" run "$spec" --store "$work/nccl" --quiet +runtime.communicator=nccl 2>&1)
code=$?
set -e
if [ "$code" -ne 2 ] || ! grep -q "runtime.communicator nccl" <<<"$err"; then
  echo "runtime.communicator nccl without a GPU: expected exit 2 naming it, got $code: $err"; exit 1
fi

# SIGUSR1 (what Slurm sends before a time limit; mpirun forwards it, while SIGTERM makes
# mpirun kill the job): no new units, running ones finish, exit 3; the rerun completes it.
set +e
mpirun -n 2 "$bin" run "$spec" --store "$work/term" --quiet &
pid=$!
for _ in $(seq 1 200); do   # wait until the first unit is committed
  [ -n "$(ls "$work/term/units" 2>/dev/null | grep -v '^\.' | head -1)" ] && break
  sleep 0.05
done
kill -USR1 "$pid"
wait "$pid"
code=$?
set -e
units=$(ls "$work/term/units" | grep -vc '^\.' || true)
echo "SIGUSR1 run: exit $code with $units of 18 units committed"
if [ "$code" -ne 3 ] && [ "$units" -ne 18 ]; then echo "expected exit 3"; exit 1; fi
mpirun -n 2 "$bin" run "$spec" --store "$work/term" --quiet
$compare "$work/n1" "$work/term" --exact
started=$(grep -c '"started"' "$work/term/journal.jsonl")
committed=$(grep -c '"committed"' "$work/term/journal.jsonl")
echo "journal: $started started, $committed committed"
[ "$committed" -eq 18 ]   # no committed unit computed twice
# SIGTERM: to the single process, and to every rank of an MPI job (what slurmstepd does to
# the tasks of a step). Both exit 3; `linsweep resume STORE` completes them.
wait_first_unit() {
  for _ in $(seq 1 400); do
    [ -n "$(ls "$1/units" 2>/dev/null | grep -v '^\.' | head -1)" ] && return 0
    sleep 0.05
  done
}
set +e
"$bin" run "$spec" --store "$work/term1" --quiet &
pid=$!
wait_first_unit "$work/term1"
kill -TERM "$pid"
wait "$pid"
code=$?
mpirun -n 3 "$bin" run "$spec" --store "$work/termall" --quiet &
pid=$!
wait_first_unit "$work/termall"
pkill -TERM -f "^$bin run $spec --store $work/termall"
wait "$pid"
codeall=$?
set -e
echo "SIGTERM: single process exit $code, every rank of mpirun -n 3 exit $codeall"
[ "$code" -eq 3 ] && [ "$codeall" -eq 3 ]
"$bin" resume "$work/term1" --quiet
mpirun -n 3 "$bin" resume "$work/termall" --quiet
$compare "$work/n1" "$work/term1" --exact
$compare "$work/n1" "$work/termall" --exact
[ "$(grep -c '"committed"' "$work/termall/journal.jsonl")" -eq 18 ]

# Units that always throw (the test experiment `toy` with fail: true, after the fit): retried,
# recorded, the rest finish, exit 1.
sed "s|\.\./tests/|$src/tests/|g" "$spec" > "$work/fail.yaml"
sed -i 's|^experiments:|experiments:\n  toy: {fail: true, after_fit: true}|' "$work/fail.yaml"
set +e
mpirun -n 3 "$testbin" run "$work/fail.yaml" --store "$work/fail" --quiet 2>/dev/null
code=$?
set -e
failures=$("$bin" status "$work/fail" --json | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)
assert all("fails on purpose" in f["error"] and f["attempts"] == 3 for f in s["failures"]), s
print(len(s["failures"]), s["by_kind"]["fit"]["committed"])')
echo "failing toy units under mpirun: exit $code; failed units, committed fits: $failures"
[ "$code" -eq 1 ] && [ "$failures" = "6 6" ]
fi

# SIGKILL of the whole mpirun at seeded random moments; each time the rerun resumes and the
# final tables equal the uninterrupted run's, with no committed unit computed twice. A moment
# is "once k of the 18 units are committed, plus j ms" (k in 0..17, j in 0..49), so trials
# spread over the sweep whatever this machine's speed (a fixed delay range mostly landed
# before the first commit or after the last).
trials="${LINSWEEP_KILL_TRIALS:-10}"
RANDOM=20261129
committed_units() { ls "$1/units" 2>/dev/null | grep -vc '^\.' || true; }
for t in $(seq 1 "$trials"); do
  rm -rf "$work/kill"
  k=$(( RANDOM % 18 )); j=$(( RANDOM % 50 ))
  mpirun -n 3 "$bin" run "$spec" --store "$work/kill" --quiet &
  pid=$!
  for _ in $(seq 1 2000); do   # at most ~20 s
    [ "$(committed_units "$work/kill")" -ge "$k" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
  done
  sleep "$(printf '0.%03d' "$j")"
  kill -KILL "$pid" 2>/dev/null || true
  pkill -KILL -f "linsweep run $spec --store $work/kill" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  before=$(committed_units "$work/kill")
  mpirun -n 3 "$bin" run "$spec" --store "$work/kill" --quiet
  $compare "$work/n1" "$work/kill" --exact >/dev/null
  commits=$(grep -c '"committed"' "$work/kill/journal.jsonl")
  echo "kill trial $t: SIGKILL ${j} ms after unit $k was committed: $before units committed; resumed to $commits commits; $(journal_agrees "$work/kill")"
  [ "$commits" -eq 18 ]
done
echo "mpi run test passed"
