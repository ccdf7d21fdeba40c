#!/usr/bin/env bash
# The store's disk fills up while a sweep commits (a small tmpfs, filled with a file but for
# SLACK bytes), in one process and under mpirun -n 3: the run exits 1 with one line naming the
# file and "No space left on device" and what to do, commits nothing half (every units/*.h5
# reads whole, no temporary file stays behind, store.h5 from the earlier run still reads, the
# lock record is emptied), and once the filler is deleted `linsweep resume` completes to the
# tables of an uninterrupted run. Needs root's `mount -t tmpfs`: exits 77 (skipped) without it.
# Usage: disk_full_test.sh LINSWEEP_BINARY SOURCE_DIR WORK_DIR
set -euo pipefail
bin="$1"; src="$2"; work="$3"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
export LINSWEEP_THREADS=1
umount "$work/mnt" 2>/dev/null || true
rm -rf "$work"; mkdir -p "$work/mnt"
if ! mount -t tmpfs -o size=32m tmpfs "$work/mnt" 2> "$work/mount.err"; then
  echo "skipped: cannot mount a tmpfs here: $(head -1 "$work/mount.err")"
  exit 77
fi
trap 'umount "$work/mnt" 2>/dev/null || umount -l "$work/mnt" 2>/dev/null || true' EXIT
compare="/usr/bin/python3 $src/tests/orchestrator/compare_stores.py"
spec="$work/spec.yaml"
. "$src/tests/support/fixture_sweep.sh"
{ fixture_sweep "$src" "$work/unused"; echo "runtime: {batch: 8, grace_seconds: 20}"; } > "$spec"
"$bin" run "$spec" --store "$work/ref" --quiet
total=$(ls "$work/ref/units" | grep -v '\.arrays\.h5$' | grep -c '\.h5$')  # unit files, not arrays files
"$bin" plan "$spec" --store "$work/ref" --json |
  /usr/bin/python3 -c 'import json,sys; print("\n".join(u["id"] for u in json.load(sys.stdin)["units"] if u["kind"] == "stats"))' \
  > "$work/stats.units"

committed() { ls "$1/units" | grep -v '\.arrays\.h5$' | grep -c '^[^.].*\.h5$' || true; }
# Every committed unit file reads whole, store.h5 reads, nothing temporary is left.
check_store() {
  /usr/bin/python3 - "$1" <<'PY'
import os, sys, h5py
store = sys.argv[1]
for n in sorted(os.listdir(f"{store}/units")):
    assert not n.startswith("."), f"temporary file left in units/: {n}"
    arrays = n.endswith(".arrays.h5")
    with h5py.File(f"{store}/units/{n}", "r") as f:
        uid = f.attrs["unit_id"]
        uid = uid.decode() if isinstance(uid, bytes) else str(uid)
        if arrays:
            assert uid == n[:-10] and "arrays" in f, f"{n}: not a whole arrays file"
            assert os.path.exists(f"{store}/units/{n[:-10]}.h5"), f"{n}: arrays of no committed unit"
        else:
            assert uid == n[:-3] and "tables" in f, f"{n}: not a whole unit file"
with h5py.File(f"{store}/store.h5", "r") as f:
    f["tables/fits"][:]
left = [n for n in os.listdir(store) if n.startswith(".tmp-")]
assert not left, f"temporary files left in the store: {left}"
assert open(f"{store}/lock").read().strip() == "", "lock record not emptied"
PY
}

# $1: label, $2: slack bytes left free, $3...: the launcher prefix ("" or "mpirun -n 3")
scenario() {
  local label="$1" slack="$2"; shift 2
  local store="$work/mnt/$label"
  # A store with store.h5 first (the stats units), then the disk filled but for `slack` bytes.
  "$@" "$bin" run "$spec" --store "$store" --units "$work/stats.units" --quiet
  local before; before=$(committed "$store")
  local avail; avail=$(df --output=avail -B1 "$work/mnt" | tail -1)
  # Never fill any other file system than the test's own tmpfs.
  [ "$(stat -f -c %T "$work/mnt")" = tmpfs ] || { echo "$work/mnt is not the test's tmpfs"; exit 1; }
  fallocate -l $((avail - slack)) "$work/mnt/filler"
  set +e
  "$@" "$bin" run "$spec" --store "$store" --quiet > "$work/$label.out" 2> "$work/$label.err"
  local code=$?
  set -e
  local after; after=$(committed "$store")
  local line; line=$(grep -c 'No space left on device' "$work/$label.err" || true)
  echo "$label: slack $slack bytes: exit $code, $before -> $after of $total units committed; stderr:"
  sed 's/^/    /' "$work/$label.err"
  [ "$code" -eq 1 ] || { echo "expected exit 1"; exit 1; }
  [ "$line" -eq 1 ] || { echo "expected one 'No space left on device' line"; exit 1; }
  grep -q '^linsweep: .*No space left on device (disk full: free space, then rerun or `linsweep resume STORE`; committed units are kept)$' \
    "$work/$label.err" || { echo "the disk-full line is not linsweep's one-line message"; exit 1; }
  if [ -z "$*" ]; then  # one process prints nothing else (mpirun adds its own report)
    [ "$(wc -l < "$work/$label.err")" -eq 1 ] || { echo "expected one line on stderr"; exit 1; }
  fi
  rm -f "$work/mnt/filler"
  check_store "$store"
  "$@" "$bin" resume "$store" --quiet
  check_store "$store"
  $compare "$work/ref" "$store" > /dev/null
  [ "$(committed "$store")" -eq "$total" ]
  echo "$label: after the filler was deleted, resume completed: $total units, tables equal to the uninterrupted run"
}

scenario single-full 0
scenario single-64k 65536
scenario single-1536k 1572864
scenario mpi-full 0 mpirun -n 3
scenario mpi-64k 65536 mpirun -n 3
scenario mpi-1536k 1572864 mpirun -n 3
echo "disk full test passed"
