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
# object: the key is the SHA-256 of the compiler's version, the command line and the file
# preprocessed (a fifth of the check's time), with ROOT, the checkout, written as "." in both.
# A known key replays the check's warnings instead of compiling again. The entries live in
# ccache's cache directory (`ccache -k cache_dir`), so a build with an empty compiler cache checks
# everything afresh, or in ${XDG_CACHE_HOME:-~/.cache}/linsweep when ccache is not installed.
# A failed check is never remembered.
set -uo pipefail
root=$1
shift
out=""
key_args=()
pre_args=()
prev=""
for arg in "$@"; do
  case "$prev" in
    -o) out=$arg ;;
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
key=$({
  "$1" --version | head -n 1
  printf '%s\n' "${key_args[@]}"
  "${pre_args[@]}" -E -o - 2>/dev/null | sed "s|$root|.|g"
} | sha256sum | cut -c1-64) || key=""
entry="$cache/${key:0:2}/$key"

if [[ -n "$key" && -f "$entry" ]]; then
  cat "$entry" >&2
else
  log=$(mktemp) || exit 1
  "$@" -fsyntax-only 2>"$log"
  rc=$?
  cat "$log" >&2
  if [[ $rc -ne 0 ]]; then
    rm -f "$log"
    exit "$rc"
  fi
  if [[ -n "$key" ]] && mkdir -p "${entry%/*}" 2>/dev/null; then
    mv "$log" "$entry.$$" && mv "$entry.$$" "$entry" || rm -f "$log" "$entry.$$"
  else
    rm -f "$log"
  fi
fi
[[ -z "$out" ]] || : >"$out"
