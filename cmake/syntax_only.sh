#!/usr/bin/env bash
# Compiler launcher for the include checks (cmake/unity_batches.cmake):
#
#   syntax_only.sh ROOT COMPILER ARGS...
#
# runs the compile command it is given with -fsyntax-only, which writes no object, then leaves an
# empty file where the object would be, so that Ninja runs the check again only when the file or
# a header it reads (the command's depfile) changes. Exit status: the compiler's.
#
# A file that includes none of the libraries of the target's precompiled header (CMake's
# cmake_pch.hxx, given with -include) is checked without it: loading LibTorch's precompiled
# header costs about 4 s, more than such a file's whole check, and without it the check is
# stricter. The libraries are the first path components of the system headers the precompiled
# header names (ATen, torch); a file's includes are followed through the headers found beside it
# or on the -I paths.
#
# A check that passed is remembered across build directories and clones, as ccache's direct mode
# remembers an object: by the compiler's version, the command line, the text of every project
# header the precompiled header names, and the SHA-256 of every file the check's depfile names
# (the source and each header it read; ROOT, the checkout, written as "." or @ROOT@ throughout).
# When every one of those files still has its hash, the check passed before with exactly these
# inputs: its depfile and warnings are written back without running the compiler at all. A
# header added earlier on the include path than one it shadows is not seen this way (as in
# ccache). The entries live in ccache's cache directory (`ccache -k cache_dir`), so a build with
# an empty compiler cache checks everything afresh, or in ${XDG_CACHE_HOME:-~/.cache}/linsweep
# when ccache is not installed. A failed check is never remembered.
set -uo pipefail
root=$1
shift
out=""
depfile=""
source=""
pch=""
include_dirs=()
args=()
prev=""
for arg in "$@"; do
  case "$prev" in
    -o) out=$arg ;;
    -MF) depfile=$arg ;;
    -c) source=$arg ;;
    -include) [[ "$arg" == */cmake_pch.hxx ]] && pch=$arg ;;
  esac
  case "$arg" in
    -I?*) include_dirs+=("${arg#-I}") ;;
  esac
  prev=$arg
done

# headers FILE...: FILE and every header it reaches through #include lines that resolve beside
# the including file or on the -I paths, one per line; the includes that resolve nowhere are
# printed as "<name>" (system headers).
headers() {
  local -A seen=()
  local queue=("$@") file name dir found
  while ((${#queue[@]})); do
    file=${queue[-1]}
    unset 'queue[-1]'
    [[ -z "${seen[$file]:-}" ]] || continue
    seen[$file]=1
    echo "$file"
    while IFS= read -r name; do
      found=""
      for dir in "${file%/*}" "${include_dirs[@]}"; do
        if [[ -f "$dir/$name" ]]; then
          found="$dir/$name"
          break
        fi
      done
      if [[ -n "$found" ]]; then
        queue+=("$found")
      elif [[ -z "${seen[<$name>]:-}" ]]; then
        seen[<$name>]=1
        echo "<$name>"
      fi
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]\([^>"]*\)[>"].*/\1/p' "$file")
  done
}
# The libraries of the precompiled header: "ATen/", "torch/", ...
libraries() { headers "$1" | sed -n 's|^<\([^/>]*/\).*>$|\1|p' | sort -u; }

cmd=("$@")
pch_text=""
if [[ -n "$pch" && -n "$source" && -f "$pch" ]]; then
  mapfile -t libs < <(libraries "$pch")
  # grep reads every line (no -q): under pipefail, headers stopped early would count as a miss.
  if ((${#libs[@]})) && ! headers "$source" | grep -F -f <(printf '<%s\n' "${libs[@]}") >/dev/null; then
    cmd=()
    for ((i = 1; i <= $#; i++)); do
      if [[ "${!i}" == -include && $i -lt $# ]]; then
        next=$((i + 1))
        [[ "${!next}" == "$pch" ]] && { i=$next; continue; }
      fi
      cmd+=("${!i}")
    done
  else
    # The precompiled header's headers are not in the depfile: their text joins the key.
    pch_text=$(headers "$pch" | grep -v '^<' | xargs -r cat)
  fi
fi

key_args=()
prev=""
for arg in "${cmd[@]}"; do
  # The object's name, the depfile's and the precompiled header's pragma stay out of the key.
  if [[ "$arg" != -o && "$prev" != -o && "$prev" != -MF && "$prev" != -MT && "$prev" != -MQ &&
    "$arg" != -fpch-preprocess ]]; then
    key_args+=("${arg//"$root"/.}")
  fi
  prev=$arg
done

if command -v ccache >/dev/null 2>&1; then
  cache="$(ccache -k cache_dir 2>/dev/null)/linsweep-include-checks"
else
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/linsweep/include-checks"
fi
# An entry: "sums", a sha256sum list of the depfile's files; "depfile", its text; then
# "warnings", the check's stderr; ROOT written as @ROOT@.
key=$({
  "${cmd[0]}" --version | head -n 1
  printf '%s\n' "${key_args[@]}"
  printf '%s' "$pch_text" | sed "s|$root|.|g"
} | sha256sum | cut -c1-64)
entry="$cache/direct/${key:0:2}/$key"
section() { awk -v want="$1" '/^== (sums|depfile|warnings)$/ { on = ($2 == want); next } on' "$2"; }
if [[ -n "$depfile" && -f "$entry" ]] &&
  section sums "$entry" | sed "s|@ROOT@|$root|g" | sha256sum --status -c - 2>/dev/null; then
  section depfile "$entry" | sed "s|@ROOT@|$root|g" >"$depfile"
  section warnings "$entry" | sed "s|@ROOT@|$root|g" >&2
  [[ -z "$out" ]] || : >"$out"
  exit 0
fi

log=$(mktemp) || exit 1
"${cmd[@]}" -fsyntax-only 2>"$log"
rc=$?
cat "$log" >&2
if [[ $rc -ne 0 ]]; then
  rm -f "$log"
  exit "$rc"
fi
if [[ -n "$depfile" && -s "$depfile" ]] && mkdir -p "${entry%/*}" 2>/dev/null; then
  if {
    echo "== sums"
    sed -e 's/\\$//' "$depfile" | tr ' ' '\n' | grep -v -e ':$' -e '^$' | sort -u |
      xargs -r sha256sum | sed "s|$root|@ROOT@|g"
    echo "== depfile"
    sed "s|$root|@ROOT@|g" "$depfile"
    echo "== warnings"
    sed "s|$root|@ROOT@|g" "$log"
  } >"$entry.$$" 2>/dev/null; then
    mv "$entry.$$" "$entry" || rm -f "$entry.$$"
  else
    rm -f "$entry.$$"
  fi
fi
rm -f "$log"
[[ -z "$out" ]] || : >"$out"
