#!/usr/bin/env bash
# Dispatch throughput: `mpirun -n 3` (rank 0 coordinates, 2 one-rank worker groups) over
# `noop` units, which do nothing but stage and commit an empty unit file. Units/s from the
# journal (first "started" to last "committed"), so start-up and planning are excluded.
# The store is put on tmpfs (/dev/shm) to measure the coordinator, messages and commit
# protocol; a second run on the disk under $TMPDIR shows what the filesystem adds (each
# unit creates a unit file and a log file). Target >= 2,000 units/s (tmpfs).
# Usage: bench/dispatch_throughput.sh [UNITS]   (default 3000)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${LINSWEEP_BUILD_DIR:-$root/build}/linsweep"
units="${1:-3000}"
work="$(mktemp -d)"
shm=""
[ -d /dev/shm ] && [ -w /dev/shm ] && shm="$(mktemp -d -p /dev/shm)"
trap 'rm -rf "$work" ${shm:+"$shm"}' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe LINSWEEP_THREADS=1
rate() {  # units/s between the first start and the last commit in a journal
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
s = [e["time"] for e in ev if e["event"] == "started"]
c = [e["time"] for e in ev if e["event"] == "committed"]
print(f"{len(c)} units committed at {len(c) / (max(c) - min(s)):.0f} units/s")
PY
}
for where in ${shm:+tmpfs} disk; do
  dir="$work"; [ "$where" = tmpfs ] && dir="$shm"
  cat > "$work/$where.yaml" <<YAML
store: $dir/store
models: [{name: m, path: $root/tests/data/models/tiny-gpt2}]
corpora: [{name: a, path: $root/tests/data/models/tiny-gpt2.tokens.npy}]
experiments: {noop: {units: $units}}
YAML
  mpirun -n 3 "$bin" run "$work/$where.yaml" --quiet
  echo "dispatch, store on $where: $(rate "$dir/store/journal.jsonl")"
done
echo "target: >= 2000 units/s with the store on tmpfs"
