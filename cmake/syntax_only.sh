#!/usr/bin/env bash
# Compiler launcher for the include checks (cmake/unity_batches.cmake):
#
#   syntax_only.sh ROOT COMPILER ARGS...
#
# runs the compile command it is given with -fsyntax-only, which writes no object, then leaves an
# empty file where the object would be, so that Ninja runs the check again only when the file or
# a header it reads (the command's depfile) changes. Exit status: the compiler's.
#
# A check that passed is remembered across build directories and clones, as ccache remembers an
# object, in two ways (ROOT, the checkout, written as "." or @ROOT@ throughout):
#  - by the SHA-256 of the compiler's version, the command line and the file preprocessed
#    (preprocessing a file that includes LibTorch takes about 2 s, a fifth of its check);
#  - directly, as ccache's direct mode: by the compiler's version and the command line, with the
#    SHA-256 of every file the depfile names (the source and each header it read). When every
#    one of those files still has its hash, the check passed before with exactly these inputs:
#    its depfile and warnings are written back without running the compiler at all. A header
#    added earlier on the include path than one it shadows is not seen this way (as in ccache).
# A known key replays the check's warnings instead of compiling again. The entries live in
# ccache's cache directory (`ccache -k cache_dir`), so a build with an empty compiler cache checks
# everything afresh, or in ${XDG_CACHE_HOME:-~/.cache}/linsweep when ccache is not installed.
# A failed check is never remembered.
set -uo pipefail
root=$1
shift
out=""
depfile=""
key_args=()
pre_args=()
prev=""
for arg in "$@"; do
  case "$prev" in
    -o) out=$arg ;;
    -MF) depfile=$arg ;;
  esac
  # The preprocessing run writes the depfile Ninja needs and its text to stdout; the object's
  # name, the depfile's and the precompiled header's pragma stay out of it and of the key.
  if [[ "$arg" != -o && "$prev" != -o && "$arg" != -fpch-preprocess ]]; then
    pre_args+=("$arg")
    [[ "$prev" == -MF || "$prev" == -MT || "$prev" == -MQ ]] || key_args+=("${arg//"$root"/.}")
  fi
  prev=$arg
done

if command -v ccache >/dev/null 2>&1; then
  cache="$(ccache -k cache_dir 2>/dev/null)/linsweep-include-checks"
else
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/linsweep/include-checks"
fi
# The direct entry: "sums", a sha256sum list of the depfile's files; "depfile", its text; then
# "warnings", the check's stderr; ROOT written as @ROOT@.
direct_key=$({
  "$1" --version | head -n 1
  printf '%s\n' "${key_args[@]}"
} | sha256sum | cut -c1-64)
direct="$cache/direct/${direct_key:0:2}/$direct_key"
section() { awk -v want="$1" '/^== (sums|depfile|warnings)$/ { on = ($2 == want); next } on' "$2"; }
if [[ -n "$depfile" && -f "$direct" ]] &&
  section sums "$direct" | sed "s|@ROOT@|$root|g" | sha256sum --status -c - 2>/dev/null; then
  section depfile "$direct" | sed "s|@ROOT@|$root|g" >"$depfile"
  section warnings "$direct" | sed "s|@ROOT@|$root|g" >&2
  [[ -z "$out" ]] || : >"$out"
  exit 0
fi

key=$({
  "$1" --version | head -n 1
  printf '%s\n' "${key_args[@]}"
  "${pre_args[@]}" -E -o - 2>/dev/null | sed "s|$root|.|g"
} | sha256sum | cut -c1-64) || key=""
entry="$cache/${key:0:2}/$key"

log=$(mktemp) || exit 1
if [[ -n "$key" && -f "$entry" ]]; then
  cp "$entry" "$log"
else
  "$@" -fsyntax-only 2>"$log"
  rc=$?
  if [[ $rc -ne 0 ]]; then
    cat "$log" >&2
    rm -f "$log"
    exit "$rc"
  fi
  if [[ -n "$key" ]] && mkdir -p "${entry%/*}" 2>/dev/null; then
    cp "$log" "$entry.$$" && mv "$entry.$$" "$entry" || rm -f "$entry.$$"
  fi
fi
cat "$log" >&2
# The direct entry, from the depfile the preprocessing (or the check) wrote: its files' hashes.
if [[ -n "$depfile" && -s "$depfile" ]] && mkdir -p "${direct%/*}" 2>/dev/null; then
  if {
    echo "== sums"
    sed -e 's/\\$//' "$depfile" | tr ' ' '\n' | grep -v -e ':$' -e '^$' | sort -u |
      xargs -r sha256sum | sed "s|$root|@ROOT@|g"
    echo "== depfile"
    sed "s|$root|@ROOT@|g" "$depfile"
    echo "== warnings"
    sed "s|$root|@ROOT@|g" "$log"
  } >"$direct.$$" 2>/dev/null; then
    mv "$direct.$$" "$direct" || rm -f "$direct.$$"
  else
    rm -f "$direct.$$"
  fi
fi
rm -f "$log"
[[ -z "$out" ]] || : >"$out"
