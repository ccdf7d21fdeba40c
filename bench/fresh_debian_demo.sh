#!/usr/bin/env bash
# Times the README's first command (scripts/demo.sh) on a fresh Debian 12: a debootstrap'ed
# chroot with nothing but the minimal base system, a fresh clone of this repository, no
# compiler cache and no cached data or models. Then runs it a second time into a new output
# directory, so only the models are reused. Each run prints its own total ("… since
# scripts/demo.sh started (set-up and build included)").
# Usage: bench/fresh_debian_demo.sh [WORK_DIR]   (root; needs network and debootstrap, which
# it installs when missing). Measure on an otherwise idle machine. Logs: WORK_DIR.*.log.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${1:-/tmp/linsweep-fresh-debian}"
[[ $(id -u) -eq 0 ]] || { echo "fresh_debian_demo: needs root (debootstrap, chroot, mount)" >&2; exit 2; }
command -v debootstrap >/dev/null 2>&1 || apt-get install -y -q debootstrap
unmount() { for m in proc sys dev; do umount -R -l "$work/$m" 2>/dev/null || true; done; }
trap unmount EXIT
unmount
rm -rf "$work"
echo "fresh_debian_demo: debootstrap bookworm into $work (not timed: this is the fresh machine)"
debootstrap --variant=minbase bookworm "$work" http://deb.debian.org/debian > "$work.debootstrap.log" 2>&1 ||
  { tail -20 "$work.debootstrap.log"; exit 1; }
mount -t proc proc "$work/proc"
mount --rbind /sys "$work/sys"
mount --rbind /dev "$work/dev"
cp /etc/resolv.conf "$work/etc/resolv.conf"
# A network that re-signs TLS (a proxy with its own CA) needs that CA on any machine behind it:
# the host's NODE_EXTRA_CA_CERTS bundle goes along for npm, as it would be set up there.
ca_env=()
if [[ -n "${NODE_EXTRA_CA_CERTS:-}" && -f "$NODE_EXTRA_CA_CERTS" ]]; then
  cp "$NODE_EXTRA_CA_CERTS" "$work/root/extra-ca.crt"
  ca_env=(NODE_EXTRA_CA_CERTS=/root/extra-ca.crt)
fi
git clone -q "$root" "$work/root/linsweep"
run_demo() {  # $1: log name, $2: output directory
  chroot "$work" /usr/bin/env -i HOME=/root TERM=dumb LINSWEEP_OUT="$2" "${ca_env[@]}" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -c 'cd /root/linsweep && scripts/demo.sh' > "$work.$1.log" 2>&1 || { tail -30 "$work.$1.log"; exit 1; }
  grep -E "^demo done in|set-up, build and data" "$work.$1.log"
}
echo "== first run (set-up, build, data, training, sweep)"
run_demo first /root/demo-first
echo "== second run (models cached; a new output directory, so the sweep runs again)"
run_demo second /root/demo-second
