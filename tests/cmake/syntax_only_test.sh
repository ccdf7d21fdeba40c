#!/usr/bin/env bash
# cmake/syntax_only.sh, the include checks' launcher: a file that compiles alone passes and leaves
# its empty object and depfile; the same check from another checkout (another root, same text)
# is answered from the cache without compiling, and replays the warning and the depfile; nothing
# is ever preprocessed; a file missing an include fails every time and is never remembered; a
# changed file, or a changed header it includes, is checked again. With a precompiled header
# (CMake's cmake_pch.hxx): a file that includes one of its libraries is checked with it, one that
# includes none is checked without it (so a header only the precompiled one brought in is
# missed), and a change to a project header the precompiled header names is checked again.
# Usage: syntax_only_test.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src="$1"; work="$2"
rm -rf "$work"; mkdir -p "$work/one/src" "$work/one/b" "$work/two/b"
export CCACHE_DIR="$work/ccache" XDG_CACHE_HOME="$work/xdg"
# The compiler, through a wrapper that logs every -fsyntax-only run.
cat > "$work/cxx" <<SH
#!/bin/sh
case " \$* " in *" -fsyntax-only "*) echo "\$*" >> "$work/compiled.log" ;; esac
case " \$* " in *" -E "*) echo "\$*" >> "$work/preprocessed.log" ;; esac
exec g++ "\$@"
SH
chmod +x "$work/cxx"
printf '#include <vector>\n#include "a.h"\nint f() { std::vector<int> v; int unused; return int(v.size()) + kA; }\n' > "$work/one/src/a.cpp"
printf 'constexpr int kA = 1;\n' > "$work/one/src/a.h"
printf 'int g() { std::string s; return int(s.size()); }\n' > "$work/one/src/bad.cpp"
cp -r "$work/one/src" "$work/two/"

check() {  # $1 root, $2 file stem: runs the launcher as Ninja would, from the build directory
  (cd "$1/b" && "$src/cmake/syntax_only.sh" "$1" "$work/cxx" -Wall -I"$1/src" -MD -MT "$2.o" -MF "$2.d" \
     -o "$2.o" -c "$1/src/$2.cpp")
}
compiled() { [ -f "$work/compiled.log" ] && wc -l < "$work/compiled.log" || echo 0; }
preprocessed() { [ -f "$work/preprocessed.log" ] && wc -l < "$work/preprocessed.log" || echo 0; }

check "$work/one" a 2> "$work/first.err"
[ -f "$work/one/b/a.o" ] && [ ! -s "$work/one/b/a.o" ] && grep -q "a.cpp" "$work/one/b/a.d"
grep -q "unused variable" "$work/first.err"
[ "$(compiled)" -eq 1 ]

check "$work/two" a 2> "$work/second.err"
[ "$(compiled)" -eq 1 ] || { echo "the second checkout compiled again"; exit 1; }
[ "$(preprocessed)" -eq 0 ] || { echo "a check preprocessed its file"; exit 1; }
grep -q "unused variable" "$work/second.err"
grep -q "$work/two/src/a.cpp" "$work/second.err" || { echo "the warning names another checkout"; exit 1; }
[ -f "$work/two/b/a.o" ] && grep -q "$work/two/src/a.cpp" "$work/two/b/a.d" && grep -q "$work/two/src/a.h" "$work/two/b/a.d"

echo 'constexpr int kB = 2;' >> "$work/two/src/a.h"
check "$work/two" a 2> /dev/null
[ "$(compiled)" -eq 2 ] || { echo "a changed header was answered from the cache"; exit 1; }

for _ in 1 2; do
  if check "$work/one" bad 2> "$work/bad.err"; then echo "a file missing <string> passed"; exit 1; fi
  grep -q "string" "$work/bad.err"
done
[ "$(compiled)" -eq 4 ] || { echo "a failed check was answered from the cache"; exit 1; }

echo 'int h() { return 1; }' >> "$work/two/src/a.cpp"
check "$work/two" a 2> /dev/null
[ "$(compiled)" -eq 5 ] || { echo "a changed file was answered from the cache"; exit 1; }
[ -n "$(ls "$work"/ccache/linsweep-include-checks/*/* 2>/dev/null || ls "$work"/xdg/linsweep/include-checks/*/*)" ]

# The precompiled header: it names a project header that brings <string> and the library
# "fakelib" (a system header, on -isystem); lib_user.cpp includes fakelib and relies on the
# precompiled header for <string>, as a batch would let it; bad.cpp includes no fakelib header.
mkdir -p "$work/one/sys/fakelib" "$work/one/pch"
printf '#pragma once\n' > "$work/one/sys/fakelib/small.h"
printf '#pragma once\n#include <string>\n' > "$work/one/sys/fakelib/big.h"
printf '#pragma once\n#include <fakelib/big.h>\n' > "$work/one/src/pch_list.h"
printf '#include <pch_list.h>\n' > "$work/one/pch/cmake_pch.hxx"
printf '#include <fakelib/small.h>\nint u() { std::string s; return int(s.size()); }\n' > "$work/one/src/lib_user.cpp"
check_pch() {
  (cd "$work/one/b" && "$src/cmake/syntax_only.sh" "$work/one" "$work/cxx" -I"$work/one/src" -isystem "$work/one/sys" \
     -include "$work/one/pch/cmake_pch.hxx" -MD -MT "$1.o" -MF "$1.d" -o "$1.o" -c "$work/one/src/$1.cpp")
}
before=$(compiled)
check_pch lib_user 2> /dev/null || { echo "a file of the precompiled header's library was checked without it"; exit 1; }
grep "lib_user" "$work/compiled.log" | grep -q "cmake_pch.hxx"
if check_pch bad 2> /dev/null; then echo "a file outside the precompiled header's libraries was checked with it"; exit 1; fi
grep "bad.cpp" "$work/compiled.log" | tail -n 1 | grep -v -q "cmake_pch.hxx"
check_pch lib_user 2> /dev/null
[ "$(compiled)" -eq $((before + 2)) ] || { echo "an unchanged check with a precompiled header ran again"; exit 1; }
printf '#pragma once\n#include <fakelib/big.h>\n#include <vector>\n' > "$work/one/src/pch_list.h"
check_pch lib_user 2> /dev/null
[ "$(compiled)" -eq $((before + 3)) ] || { echo "a change to the precompiled header's list was answered from the cache"; exit 1; }
[ "$(preprocessed)" -eq 0 ] || { echo "a check preprocessed its file"; exit 1; }
echo "syntax_only: all checks passed"
