# Sourced by bench/eval_throughput.sh and bench/training_throughput.sh: the Python peer also run
# under PyTorch 2.6, Debian 13's python3-torch, in the trixie chroot that
# scripts/test_debian13.sh builds (TORCH26_CHROOT=DIR). The benchmark's files are copied into
# DIR/tmp, the chroot is mounted for the run (what was mounted here is unmounted on exit), and
# the peer runs with the same threads and kernel settings as the host's.
# shellcheck source=../scripts/debian_chroot.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/debian_chroot.sh"

torch26_dir="" torch26_tmp="" torch26_mounted=0

# torch26_setup BENCH_DIR [WORK_DIR]: copies the bench scripts (and WORK_DIR) into the chroot.
torch26_setup() {
  torch26_dir="$(realpath -m "$TORCH26_CHROOT")"
  [[ "$(chroot_release "$torch26_dir")" == trixie ]] ||
    { echo "torch26_peer: TORCH26_CHROOT=$TORCH26_CHROOT is not a trixie chroot" >&2; exit 2; }
  [[ -d "$torch26_dir/usr/lib/python3/dist-packages/torch" ]] ||
    { echo "torch26_peer: $TORCH26_CHROOT has no python3-torch (apt-get install python3-torch in it)" >&2; exit 2; }
  torch26_tmp="$(mktemp -d "$torch26_dir/tmp/linsweep-bench.XXXXXX")"
  cp "$1"/*.py "$torch26_tmp/"
  [[ -z "${2:-}" ]] || cp -r "$2" "$torch26_tmp/work"
  [[ -n "$(chroot_mounts "$torch26_dir")" ]] || { chroot_mount "$torch26_dir"; torch26_mounted=1; }
}

# torch26_python SCRIPT ARGS...: runs bench/SCRIPT in the chroot; "@WORK" in ARGS names the
# copied WORK_DIR there.
torch26_python() {
  local script="$1"; shift
  local inside="${torch26_tmp#"$torch26_dir"}" a v env=()
  local cmd="/usr/bin/python3 $inside/$script"
  for a in "$@"; do cmd+=" $(printf '%q' "${a//@WORK/$inside/work}")"; done
  for v in OMP_NUM_THREADS ONEDNN_MAX_CPU_ISA OPENBLAS_CORETYPE ATEN_CPU_CAPABILITY; do
    [[ -z "${!v:-}" ]] || env+=("$v=${!v}")
  done
  chroot_run "$torch26_dir" "${env[@]}" "$cmd"
}

torch26_cleanup() {
  [[ -z "$torch26_tmp" ]] || rm -rf "$torch26_tmp"
  [[ $torch26_mounted -eq 0 ]] || chroot_unmount "$torch26_dir"
}
