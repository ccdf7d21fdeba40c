# Sourced by scripts/setup.sh and scripts/fuzz.sh: which Debian release this is, and the
# package names and compiler that differ between the releases linsweep supports.
#
#   debian_release         prints the codename: bookworm (Debian 12) or trixie (Debian 13);
#                          LINSWEEP_DEBIAN_RELEASE overrides it (e.g. a derivative whose
#                          codename is neither); exits 2 naming the release when it is unknown
#   release_clang_version  the clang whose libFuzzer runtime scripts/fuzz.sh uses: 14 on
#                          bookworm, 19 on trixie (the one each release ships as `clang`)

debian_release() {
  local codename="${LINSWEEP_DEBIAN_RELEASE:-}" version=""
  if [[ -z "$codename" && -r /etc/os-release ]]; then
    codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
  fi
  # /etc/os-release of a testing system may lack VERSION_CODENAME; /etc/debian_version has
  # "12.8" on bookworm, "13.1" on trixie and "trixie/sid" while trixie was testing.
  if [[ -z "$codename" && -r /etc/debian_version ]]; then
    version="$(cat /etc/debian_version)"
    case "$version" in
      12.*|bookworm/*) codename=bookworm ;;
      13.*|trixie/*) codename=trixie ;;
    esac
  fi
  case "$codename" in
    bookworm|trixie) echo "$codename" ;;
    *)
      echo "linsweep: unknown Debian release '${codename:-${version:-?}}' (known: bookworm = Debian 12," \
           "trixie = Debian 13); set LINSWEEP_DEBIAN_RELEASE=bookworm or trixie to use that release's packages" >&2
      return 2 ;;
  esac
}

release_clang_version() {
  case "$1" in
    bookworm) echo 14 ;;
    trixie) echo 19 ;;
  esac
}
