#!/bin/sh
# Compiler launcher for the include checks (cmake/unity_batches.cmake): runs the compile command
# it is given with -fsyntax-only, which writes no object, then leaves an empty file where the
# object would be, so that Ninja runs the check again only when the file or a header it reads
# (the command's depfile) changes. Exit status: the compiler's.
out=""
prev=""
for arg in "$@"; do
  [ "$prev" = "-o" ] && out="$arg"
  prev="$arg"
done
"$@" -fsyntax-only || exit $?
[ -n "$out" ] && : >"$out"
