#!/usr/bin/env bash
# linsweep against a real single-node Slurm cluster (scripts/slurm_cluster.sh starts munged,
# slurmctld and slurmd here and stops them afterwards):
#   1. a fixture sweep submitted with `linsweep submit` completes, and its tables equal a local
#      `mpirun -n 2` run; `status` shows the job RUNNING, then COMPLETED;
#   2. a job sent USR1 mid-sweep (`scancel --signal=USR1 --batch`) exits 3, requeues itself
#      (status: REQUEUED) and completes;
#   3. a job cancelled mid-sweep (status: CANCELLED) is completed by `linsweep resume --submit`,
#      which does not resubmit while a job is alive;
#   4. a split submission (units:K) chains its jobs with afterok (the second job pends with
#      Dependency=afterok:<first> while the first cannot start) and completes;
#   5. a rejected job (unknown partition), a missing sbatch and an unreachable controller exit 2
#      and record nothing.
# Usage: slurm_test.sh LINSWEEP_BINARY TEST_BINARY SOURCE_DIR WORK_DIR
# (TEST_BINARY: linsweep_test_cli, whose `toy` experiment has units that sleep: it slows the
# sweeps down so that signals and cancellations land mid-sweep.)
set -euo pipefail
bin="$1"; testbin="$2"; src="$3"; work="$4"
state="$work/cluster"
rm -rf "$work"; mkdir -p "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
export LINSWEEP_THREADS=1
"$src/scripts/slurm_cluster.sh" start "$state" > "$work/cluster.log" 2>&1 || { cat "$work/cluster.log"; exit 1; }
trap '"$src/scripts/slurm_cluster.sh" stop "$state" > /dev/null 2>&1 || true' EXIT
export SLURM_CONF="$state/slurm.conf"

spec="$work/spec.yaml"
. "$src/tests/support/fixture_sweep.sh"
write_spec() {  # $1: extra resources
  fixture_sweep "$src" "$work/unused" > "$spec"
  cat >> "$spec" <<YAML
runtime: {batch: 8, grace_seconds: 20}
resources: {tasks_per_node: 2, time: "00:10:00"$1}
YAML
}
write_spec ""

job_field() {  # $1 store, $2 job index, $3 field
  "$bin" status "$1" --json | /usr/bin/python3 -c "import json,sys; j=json.load(sys.stdin)['slurm_jobs'][$2]; print(j['$3'])"
}
wait_state() {  # $1 store, $2 job index, $3 state regex, $4 timeout seconds
  local s=""
  for _ in $(seq 1 "$4"); do
    s=$(job_field "$1" "$2" state)
    if [[ "$s" =~ ^($3)$ ]]; then echo "job $(job_field "$1" "$2" job_id): $s"; return 0; fi
    sleep 1
  done
  echo "timed out waiting for $3 (last state: $s)"; "$bin" status "$1"; tail -n 30 "$1"/slurm/logs/*.out || true; return 1
}
wait_committed() {  # $1 store, $2 count
  for _ in $(seq 1 120); do
    [ "$(ls "$1/units" 2>/dev/null | grep -v '\.arrays\.h5$' | grep -c '\.h5$' || true)" -ge "$2" ] && return 0
    sleep 0.5
  done
  return 1
}
compare() { /usr/bin/python3 "$src/tests/orchestrator/compare_stores.py" "$work/local" "$1" --ignore=toy; }

mpirun -n 2 "$bin" run "$spec" --store "$work/local" --quiet

echo "== 1. submit, run to completion"
"$bin" submit "$spec" --store "$work/s1"
wait_state "$work/s1" 0 "RUNNING|COMPLETED" 60
wait_state "$work/s1" 0 "COMPLETED" 240
compare "$work/s1"
"$bin" status "$work/s1" | grep -q "COMPLETED"

echo "== 2. USR1 mid-sweep: exit 3, requeue, complete"
# The same sweep with sleeping toy units beside it, so that the signal lands mid-sweep.
sed 's|^experiments:|experiments:\n  toy: {units: 6, sleep: 1}|' "$spec" > "$work/slow.yaml"
"$testbin" submit "$work/slow.yaml" --store "$work/s2"
wait_committed "$work/s2" 2
id=$(job_field "$work/s2" 0 job_id)
scancel --signal=USR1 --batch "$id"
wait_state "$work/s2" 0 "REQUEUED|PENDING" 60
[ "$(job_field "$work/s2" 0 restarts)" -ge 1 ]
wait_state "$work/s2" 0 "COMPLETED" 300
grep -q "requeueing job $id" "$work"/s2/slurm/logs/*.out
compare "$work/s2"

echo "== 3. cancelled mid-sweep, completed by resume --submit"
"$testbin" submit "$work/slow.yaml" --store "$work/s3"
wait_committed "$work/s3" 2
"$testbin" resume "$work/s3" --submit 2>&1 | tee "$work/resume-live.txt"
grep -q "held by live job" "$work/resume-live.txt"   # a running job is not submitted twice
[ "$(wc -l < "$work/s3/slurm/jobs.jsonl")" -eq 1 ]
scancel "$(job_field "$work/s3" 0 job_id)"
wait_state "$work/s3" 0 "CANCELLED" 60
"$testbin" resume "$work/s3" --submit 2>&1 | tee "$work/resume.txt"
grep -q "submit: job " "$work/resume.txt"
wait_state "$work/s3" 1 "COMPLETED" 300
compare "$work/s3"

echo "== 4. split submission: afterok chain"
# An exclusive job holds the node first, so the chain's first job cannot start (and finish)
# before the second job is inspected: its afterok dependency on the first is still unfulfilled.
# units:4 cuts across a model/corpus chain (stats, fit, all_linear), so each job needs the one before.
blocker=$(sbatch --parsable --exclusive --output=/dev/null --wrap "sleep 120")
"$bin" submit "$spec" --store "$work/s4" --split units:4 --json > "$work/split.json"
n=$(/usr/bin/python3 -c "import json; print(len(json.load(open('$work/split.json'))['jobs']))" )
[ "$n" -ge 2 ]
wait_state "$work/s4" 1 "PENDING" 10
first=$(job_field "$work/s4" 0 job_id); second=$(job_field "$work/s4" 1 job_id)
dep=$(scontrol show job "$second" | grep -o "Dependency=[^ ]*")
echo "job $second: $dep"
[[ "$dep" == "Dependency=afterok:${first}"* ]]
[ "$(job_field "$work/s4" 0 state)" = PENDING ]
scancel "$blocker"
wait_state "$work/s4" $((n - 1)) "COMPLETED" 300
compare "$work/s4"

echo "== 5. errors: exit 2, nothing recorded"
write_spec ", partition: nope"
set +e
"$bin" submit "$spec" --store "$work/s5" 2> "$work/err5.txt"; rc=$?
set -e
cat "$work/err5.txt"; [ "$rc" -eq 2 ]; grep -q "Invalid partition" "$work/err5.txt"
[ ! -e "$work/s5/slurm/jobs.jsonl" ]; [ -z "$(ls "$work/s5/slurm/"*.sh 2>/dev/null)" ]
write_spec ""
set +e
PATH=/nonexistent "$bin" submit "$spec" --store "$work/s6" 2> "$work/err6.txt"; rc=$?
set -e
cat "$work/err6.txt"; [ "$rc" -eq 2 ]; grep -q "sbatch: not found on PATH" "$work/err6.txt"
[ ! -e "$work/s6/slurm/jobs.jsonl" ]
kill "$(cat "$state"/slurmctld.pid)"; sleep 1
set +e
"$bin" submit "$spec" --store "$work/s7" 2> "$work/err7.txt"; rc=$?
set -e
cat "$work/err7.txt"; [ "$rc" -eq 2 ]; grep -q "cannot reach the Slurm controller" "$work/err7.txt"
[ ! -e "$work/s7/slurm/jobs.jsonl" ]
echo "slurm: all checks passed"
