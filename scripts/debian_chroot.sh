# Sourced by bench/fresh_debian_demo.sh and scripts/test_debian13.sh: a minimal Debian chroot
# made with debootstrap, the mounts a build and the tests need inside it, and a clean command
# line in it. Needs root, debootstrap (installed when missing) and network to deb.debian.org.

# debootstrap RELEASE (bookworm, trixie) into DIR, its output in LOG. DIR must not exist.
chroot_create() {
  local release="$1" dir="$2" log="$3"
  command -v debootstrap >/dev/null 2>&1 || apt-get install -y -q debootstrap >/dev/null
  # Bookworm's debootstrap knows trixie (its scripts link every codename to sid's).
  debootstrap --variant=minbase "$release" "$dir" http://deb.debian.org/debian >"$log" 2>&1 ||
    { tail -20 "$log" >&2; return 1; }
  touch "$dir/.linsweep-chroot"  # made here: chroot_remove may delete it
}

# The release DIR holds (VERSION_CODENAME of its /etc/os-release), or nothing.
chroot_release() { (. "$1/etc/os-release" 2>/dev/null && echo "${VERSION_CODENAME:-}"); }

# What is mounted at or below DIR (one line each, deepest first).
chroot_mounts() {
  local dir
  dir="$(realpath -m "$1")"
  awk -v d="$dir" '$2 == d || index($2, d "/") == 1 {print $2}' /proc/mounts | sort -r
}

# proc, sys and dev (recursive binds, not propagated back to the host), the host's DNS
# settings, and the host's NODE_EXTRA_CA_CERTS bundle as DIR/root/extra-ca.crt: a network that
# re-signs TLS (a proxy with its own CA) needs that CA for npm on any machine behind it.
# Mounts only what is not mounted yet; chroot_unmount undoes it.
chroot_mount() {
  local dir="$1"
  mountpoint -q "$dir/proc" || mount -t proc proc "$dir/proc"
  if ! mountpoint -q "$dir/sys"; then mount --rbind /sys "$dir/sys"; mount --make-rslave "$dir/sys"; fi
  if ! mountpoint -q "$dir/dev"; then mount --rbind /dev "$dir/dev"; mount --make-rslave "$dir/dev"; fi
  cp /etc/resolv.conf "$dir/etc/resolv.conf"
  if [[ -n "${NODE_EXTRA_CA_CERTS:-}" && -f "$NODE_EXTRA_CA_CERTS" ]]; then
    cp "$NODE_EXTRA_CA_CERTS" "$dir/root/extra-ca.crt"
  fi
}

chroot_unmount() {
  local m
  for m in proc sys dev; do umount -R -l "$1/$m" 2>/dev/null || true; done
}

# rm -rf DIR, only when it looks like a chroot (made by chroot_create, or holding a Debian
# system, and not /) and nothing is mounted below it (a bind of /dev or of a checkout would be
# emptied too).
chroot_remove() {
  local dir="$1" left
  [[ -e "$dir" ]] || return 0
  if [[ "$(realpath -m "$dir")" == / ]] || { [[ ! -e "$dir/.linsweep-chroot" ]] && [[ ! -e "$dir/etc/debian_version" ]]; }; then
    echo "not removing $dir: not a chroot" >&2; return 1
  fi
  left="$(chroot_mounts "$dir")"
  [[ -z "$left" ]] || { echo "not removing $dir: still mounted below it: $left" >&2; return 1; }
  rm -rf "$dir"
}

# Runs the bash command line CMD in DIR as root with a clean environment: HOME=/root, the
# standard PATH, NODE_EXTRA_CA_CERTS when chroot_mount copied a bundle, and every NAME=VALUE
# given before CMD.
#   chroot_run DIR [NAME=VALUE...] CMD
chroot_run() {
  local dir="$1"; shift
  local env=(HOME=/root TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
  [[ -f "$dir/root/extra-ca.crt" ]] && env+=(NODE_EXTRA_CA_CERTS=/root/extra-ca.crt)
  while [[ $# -gt 1 ]]; do env+=("$1"); shift; done
  chroot "$dir" /usr/bin/env -i "${env[@]}" bash -c "$1"
}
