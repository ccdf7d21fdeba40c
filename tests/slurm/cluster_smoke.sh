#!/usr/bin/env bash
# Smoke test of the single-node Slurm cluster (scripts/slurm_cluster.sh): start it,
# run one batch job to completion, check its state and output, stop it.
# Needs root. Not registered in ctest; run by hand:  tests/slurm/cluster_smoke.sh
# The pattern for other Slurm integration tests: start, `export SLURM_CONF=...`,
# sbatch --parsable, poll `scontrol show job` with a deadline, stop in an EXIT trap.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
state="${1:-/tmp/linsweep-slurm-smoke}"
cluster="$root/scripts/slurm_cluster.sh"
work="$(mktemp -d /tmp/linsweep-slurm-smoke-work.XXXXXX)"

cleanup() { "$cluster" stop "$state" >/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

"$cluster" start "$state"
export SLURM_CONF="$state/slurm.conf"
sinfo --version

# Poll until the job leaves PENDING/RUNNING/COMPLETING, at most $2 seconds.
# Prints the final JobState. Uses scontrol: squeue -j shows nothing once it ended.
wait_job() {
  local id="$1" deadline=$(( SECONDS + $2 )) st
  while :; do
    st="$(scontrol show job "$id" | grep -oE 'JobState=[A-Z_]+' | cut -d= -f2)"
    case "$st" in PENDING|RUNNING|COMPLETING|CONFIGURING|REQUEUED) ;; *) echo "$st"; return 0 ;; esac
    if [ "$SECONDS" -ge "$deadline" ]; then echo "TIMEOUT_WAITING($st)"; return 1; fi
    sleep 0.5
  done
}

id="$(cd "$work" && timeout 30 sbatch --parsable -o "$work/job-%j.out" --wrap 'hostname')"
echo "submitted job $id"
state_final="$(wait_job "$id" 60)" || { echo "FAIL: job $id not done: $state_final" >&2; scontrol show job "$id" >&2; exit 1; }
if [ "$state_final" != COMPLETED ]; then
  echo "FAIL: job $id ended $state_final" >&2; scontrol show job "$id" >&2; exit 1
fi
out="$(cat "$work/job-$id.out")"
if [ "$out" != "$(hostname)" ]; then
  echo "FAIL: job output '$out', expected '$(hostname)'" >&2; exit 1
fi
scontrol show job "$id" | grep -E 'JobState=|ExitCode=' | sed 's/^ */  /'
echo "PASS: slurm cluster smoke test (job $id COMPLETED, output '$out')"
