#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/: clang with ASan and UBSan, torch-free sources only)
# into build-fuzz/ and runs each for SECONDS; prints every fuzzer's executions and whether it
# crashed. Installs what is missing (scripts/setup.sh) and configures on first use.
#
#   scripts/fuzz.sh SECONDS [TARGET...]    (targets: the fuzz_<target>.cpp in tests/fuzz; default all)
#   scripts/fuzz.sh --build-only           (configures and builds every fuzzer, runs none)
#
# Exit status: 0 when no fuzzer crashed; 1 when one did (ASan/UBSan report, uncaught exception,
# abort, a hang past 10 s or a 2 GiB allocation): its input is kept in build-fuzz/crashes/<target>/
# and its log in build-fuzz/logs/<target>.log; a fixed crash's input belongs in
# tests/fuzz/regressions/<target>/, which the regular build's ctest replays (fuzz.replay.*).
# 2: bad usage or a failed build.
#
# Each corpus grows in build-fuzz/corpus/<target>/ from tests/fuzz/seeds/<target>/ and the saved
# regressions. Fuzzers run LINSWEEP_FUZZ_JOBS at a time (default: the number of cores), so the
# wall time is about ceil(targets / jobs) * SECONDS plus the build. LINSWEEP_FUZZ_BUILD_DIR
# replaces build-fuzz.
#
# The compiler is the clang the Debian release ships (clang-14 on bookworm, clang-19 on trixie;
# scripts/setup.sh installs it with its libFuzzer runtime), else the newest clang-NN or `clang`
# on PATH that links a libFuzzer target with ASan and UBSan; LINSWEEP_FUZZ_CLANG (e.g.
# clang-19) picks one. A build-fuzz/ configured with another clang is configured afresh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/debian_release.sh"
seconds="${1:-}"
build_only=0
if [[ "$seconds" == --build-only && $# -eq 1 ]]; then
  build_only=1
elif [[ ! "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 SECONDS [TARGET...] | --build-only" >&2
  exit 2
fi
shift
build="${LINSWEEP_FUZZ_BUILD_DIR:-$root/build-fuzz}"
jobs="${LINSWEEP_FUZZ_JOBS:-$(nproc)}"

targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  for f in "$root"/tests/fuzz/fuzz_*.cpp; do
    t="$(basename "$f" .cpp)"
    t="${t#fuzz_}"
    [[ "$t" == support ]] || targets+=("$t")
  done
fi
for t in "${targets[@]}"; do
  [[ -f "$root/tests/fuzz/fuzz_$t.cpp" ]] || { echo "fuzz.sh: unknown target '$t'" >&2; exit 2; }
done

"$root/scripts/setup.sh"

# 0 when clang++ $1 links a libFuzzer target with ASan and UBSan (its runtime is installed).
links_fuzzer() {
  local dir rc=0
  command -v "$1" >/dev/null 2>&1 || return 1
  dir="$(mktemp -d)"
  printf '%s\n' '#include <cstddef>' '#include <cstdint>' \
    'extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }' >"$dir/t.cpp"
  "$1" -fsanitize=fuzzer,address,undefined "$dir/t.cpp" -o "$dir/t" >/dev/null 2>&1 || rc=1
  rm -rf "$dir"
  return "$rc"
}
find_clang() {
  local candidates=() v release
  if [[ -n "${LINSWEEP_FUZZ_CLANG:-}" ]]; then
    candidates=("$LINSWEEP_FUZZ_CLANG")
    [[ "$LINSWEEP_FUZZ_CLANG" == *clang++* ]] || candidates=("${LINSWEEP_FUZZ_CLANG/clang/clang++}")
  else
    release="$(debian_release 2>/dev/null)" && candidates+=("clang++-$(release_clang_version "$release")")
    for v in $(compgen -c clang++- | sed -n 's/^clang++-\([0-9][0-9]*\)$/\1/p' | sort -rnu); do candidates+=("clang++-$v"); done
    candidates+=(clang++)
  fi
  for cxx in "${candidates[@]}"; do
    if links_fuzzer "$cxx"; then echo "$cxx"; return 0; fi
  done
  echo "fuzz.sh: no clang++ links a libFuzzer target with ASan and UBSan (tried ${candidates[*]});" \
       "scripts/setup.sh installs the release's clang-NN and libclang-rt-NN-dev" >&2
  return 1
}
cxx="$(find_clang)" || exit 2
cc="${cxx/clang++/clang}"
cxx_path="$(command -v "$cxx")"
configured="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)"
if [[ -n "$configured" && "$configured" != "$cxx_path" ]]; then
  echo "fuzz.sh: $build was configured with $configured; configuring it afresh for $cxx_path"
  rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
fi
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  CC="$cc" CXX="$cxx" cmake -S "$root/tests/fuzz" -B "$build" -G Ninja >/dev/null || exit 2
fi
echo "fuzz.sh: $cxx ($("$cxx" --version | head -n 1))"
start=$SECONDS
cmake --build "$build" --parallel "$(nproc)" || exit 2
echo "fuzz.sh: build took $((SECONDS - start)) s"
[[ $build_only -eq 0 ]] || exit 0

mkdir -p "$build/logs"
run_one() {
  local t="$1" rc=0
  local dirs=("$build/corpus/$t" "$root/tests/fuzz/seeds/$t")
  [[ -d "$root/tests/fuzz/regressions/$t" ]] && dirs+=("$root/tests/fuzz/regressions/$t")
  mkdir -p "$build/corpus/$t" "$build/crashes/$t"
  # A dictionary of the input's syntax (tests/fuzz/dicts/) lets mutations spell tokens out.
  local dict=()
  case "$t" in
    spec) dict=(-dict="$root/tests/fuzz/dicts/yaml.dict") ;;
    npy) dict=(-dict="$root/tests/fuzz/dicts/npy.dict") ;;
    safetensors|safetensors_index|model_config|vocab_merges|tokenizer_json|tokenizer_config|lambada)
      dict=(-dict="$root/tests/fuzz/dicts/json.dict") ;;
  esac
  # libhdf5 mallocs sizes it reads from the file and handles a NULL (the file is refused, as
  # outside the fuzzer); ASan would abort on a request past its limit instead. Our own code's
  # `new` still reports such a request.
  local asan="${ASAN_OPTIONS:-}"
  [[ "$t" == unit_file ]] && asan="allocator_may_return_null=1${asan:+:$asan}"
  # -timeout: an input that takes 10 s is a hang; -rss_limit_mb (also the malloc limit): an
  # allocation sized by an unchecked length fails here instead of on a user's machine.
  ASAN_OPTIONS="$asan" "$build/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "${dict[@]}" \
    -artifact_prefix="$build/crashes/$t/" "${dirs[@]}" >"$build/logs/$t.log" 2>&1 || rc=$?
  echo "$rc" >"$build/logs/$t.rc"
}

# libhdf5's own leaks on malformed files (tests/fuzz/lsan.supp says why).
export LSAN_OPTIONS="suppressions=$root/tests/fuzz/lsan.supp:print_suppressions=0"
start=$SECONDS
for t in "${targets[@]}"; do
  while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do wait -n || true; done
  run_one "$t" &
done
wait

crashed=0
printf '%-18s %12s %9s  %s\n' target executions exec/s result
for t in "${targets[@]}"; do
  log="$build/logs/$t.log"
  rc="$(cat "$build/logs/$t.rc")"
  # libFuzzer's -print_final_stats lines (also printed when it crashes); none if it died early.
  execs="$(awk '/^stat::number_of_executed_units:/ {n = $2} END {print n}' "$log")"
  rate="$(awk '/^stat::average_exec_per_sec:/ {n = $2} END {print n}' "$log")"
  if [[ "$rc" == 0 ]]; then
    result=ok
  else
    crashed=1
    why="$(grep -m 1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|fuzz target:|terminate called|SUMMARY:' "$log" || true)"
    input="$(sed -n 's/.*Test unit written to //p' "$log" | tail -n 1)"
    result="CRASH (exit $rc): ${why:-see $log}${input:+; input $input}"
  fi
  printf '%-18s %12s %9s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$result"
done
echo "fuzz.sh: ${#targets[@]} fuzzers, ${seconds} s each, $jobs at a time, $((SECONDS - start)) s"
exit "$crashed"
