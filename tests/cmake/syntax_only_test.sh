#!/usr/bin/env bash
# cmake/syntax_only.sh, the include checks' launcher: a file that compiles alone passes and leaves
# its empty object and depfile; the same check from another checkout (another root, same text)
# is answered from the cache without compiling or even preprocessing, and replays the warning
# and the depfile; a file missing an include fails every time and is never remembered; a changed
# file, or a changed header it includes, is checked again.
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
[ "$(preprocessed)" -eq 1 ] || { echo "the second checkout preprocessed again"; exit 1; }
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
echo "syntax_only: all checks passed"
