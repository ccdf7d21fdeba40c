#!/usr/bin/env bash
# Times the README's first command (scripts/demo.sh) on a fresh Debian 12 (or 13): a
# debootstrap'ed chroot with nothing but the minimal base system, a fresh clone of this
# repository, no compiler cache and no cached data or models. Then runs it a second time into
# a new output directory, so only the models are reused. Each run prints its own total ("…
# since scripts/demo.sh started (set-up and build included)").
# Usage: bench/fresh_debian_demo.sh [WORK_DIR] [RELEASE]   (root; needs network and
# debootstrap, which it installs when missing). RELEASE: bookworm (Debian 12, the default) or
# trixie (Debian 13); given alone it may come first. WORK_DIR defaults to
# /tmp/linsweep-fresh-debian (bookworm) or /tmp/linsweep-fresh-debian-trixie, and is
# debootstrap'ed afresh. Measure on an otherwise idle machine. Logs: WORK_DIR.*.log.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/debian_chroot.sh"
case "${1:-}" in bookworm|trixie) set -- "" "$1" ;; esac
release="${2:-bookworm}"
case "$release" in
  bookworm|trixie) ;;
  *) echo "fresh_debian_demo: unknown release '$release' (bookworm or trixie)" >&2; exit 2 ;;
esac
default_work=/tmp/linsweep-fresh-debian
[[ "$release" == bookworm ]] || default_work+="-$release"
work="${1:-$default_work}"
[[ $(id -u) -eq 0 ]] || { echo "fresh_debian_demo: needs root (debootstrap, chroot, mount)" >&2; exit 2; }
unmount() { chroot_unmount "$work"; }
trap unmount EXIT
unmount
chroot_remove "$work"
echo "fresh_debian_demo: debootstrap $release into $work (not timed: this is the fresh machine)"
chroot_create "$release" "$work" "$work.debootstrap.log"
chroot_mount "$work"
git clone -q "$root" "$work/root/linsweep"
run_demo() {  # $1: log name, $2: output directory
  chroot_run "$work" LINSWEEP_OUT="$2" 'cd /root/linsweep && scripts/demo.sh' > "$work.$1.log" 2>&1 ||
    { tail -30 "$work.$1.log"; exit 1; }
  grep -E "^demo done in|set-up, build and data" "$work.$1.log"
}
echo "== first run (set-up, build, data, training, sweep)"
run_demo first /root/demo-first
echo "== second run (models cached; a new output directory, so the sweep runs again)"
run_demo second /root/demo-second
