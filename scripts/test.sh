#!/usr/bin/env bash
# Runs every check a change must pass, in phases, and prints each phase's time and the ten
# slowest tests at the end:
#   setup        the Debian packages (scripts/setup.sh)
#   format       the C++ formatting (scripts/check_format.sh)
#   build        the build (scripts/build.sh)
#   ctest        every test except the `long` label (LINSWEEP_LONG_TESTS=1 ctest -L long), run
#                LINSWEEP_TEST_JOBS at a time (default: the cores plus one, as the tests wait
#                about a fifth of their time, and their idle OpenMP threads sleep; tests that
#                share a resource, the Slurm clusters' ports, lock it); isa and sanitize run as
#                many
#   isa          the tests labelled `isa` again with the kernels of an AVX2 CPU
#                (scripts/test_isa.sh)
#   sanitize     the Catch2 suite and the fuzz replays under ASan and UBSan (scripts/sanitize.sh)
#   fuzz         every fuzzer for 10 s (scripts/fuzz.sh)
# The sanitizer build and the fuzzers' build start with ctest, at idle priority (SCHED_IDLE): they
# take only the CPU the tests leave idle (tests wait on clusters, MPI start-up and timeouts), and
# the phase `wait` waits for what is left of them before sanitize ("background" in the phase
# times: how long they took).
# --quick, the inner loop: format, build, and the tests labelled `quick` (the unit tests that
# need no cluster, MPI job or browser). Measured times: docs/reliability.md, "Test time".
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
quick=0
case "${1:-}" in
  "") ;;
  --quick) quick=1 ;;
  *) echo "usage: scripts/test.sh [--quick]" >&2; exit 2 ;;
esac
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
build="${LINSWEEP_BUILD_DIR:-$root/build}"
export LINSWEEP_TEST_JOBS="${LINSWEEP_TEST_JOBS:-$(($(nproc) + 1))}"
jobs=$LINSWEEP_TEST_JOBS
log="$(mktemp -d "${TMPDIR:-/tmp}/linsweep-test.XXXXXX")"
background=""
trap 'stop_background_builds; rm -rf "$log"' EXIT
started=$SECONDS
phases=()

# phase NAME COMMAND...: runs COMMAND, records its time; stops the script when it fails.
phase() {
  local name=$1 t0=$SECONDS rc=0
  shift
  echo "test.sh: == $name"
  "$@" 2>&1 | tee "$log/$name.out" || rc=${PIPESTATUS[0]}
  phases+=("$(printf '%-9s %5ds' "$name" $((SECONDS - t0)))")
  if [[ $rc -ne 0 ]]; then
    summary
    echo "test.sh: FAILED in phase $name (exit $rc) after $(minutes $((SECONDS - started)))"
    exit "$rc"
  fi
}
minutes() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
# The phase times so far and the ten slowest tests of every ctest run ("Test #N: name ... X sec").
summary() {
  echo "test.sh: phase times"
  printf '  %s\n' "${phases[@]}"
  echo "test.sh: the ten slowest tests (phase, seconds)"
  for f in "$log"/*.out; do
    sed -n "s/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) .* \([0-9.]*\) sec$/\2 \1 $(basename "$f" .out)/p" "$f"
  done | sort -rn | head -10 | awk '{printf "  %-40s %-9s %7.1f\n", $2, $3, $1}'
}
run_ctest() { (cd "$build" && ctest --output-on-failure --timeout 1800 -j "$jobs" "$@"); }
# The sanitizer and fuzz builds, in that order, at idle priority; their output goes to
# $log/background.log (shown when they fail). They stay in this session: a session of their own
# would be an autogroup of its own, which the kernel gives as much CPU as the tests' whatever
# the priority of its processes.
start_background_builds() {
  local idle=(chrt --idle 0)
  "${idle[@]}" true 2>/dev/null || idle=(nice -n 19)
  "${idle[@]}" bash -c 't0=$SECONDS; "$1/scripts/sanitize.sh" --build-only && "$1/scripts/fuzz.sh" --build-only
    echo "$? $((SECONDS - t0))" >"$2/background.rc"' background "$root" "$log" >"$log/background.log" 2>&1 &
  background=$!
}
# kill_tree PID: stops PID and every process below it, children first.
kill_tree() {
  local child
  for child in $(pgrep -P "$1"); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
# A failed or interrupted run stops the background builds.
stop_background_builds() {
  [[ -z "$background" ]] || kill_tree "$background"
  wait 2>/dev/null || true
}
# Waits for the background builds (the phase "wait"); stops the script, with their output's end,
# when they failed.
wait_background_builds() {
  local rc elapsed t0=$SECONDS
  echo "test.sh: == wait (for the sanitizer and fuzz builds)"
  wait "$background" || true
  background=""
  read -r rc elapsed <"$log/background.rc" || { rc=1; elapsed=0; }
  phases+=("$(printf '%-9s %5ds' wait $((SECONDS - t0)))")
  phases+=("$(printf '%-9s %5ds (beside ctest and isa, at idle priority)' background "$elapsed")")
  grep -h 'build took' "$log/background.log" || true
  if [[ $rc -ne 0 ]]; then
    tail -n 60 "$log/background.log"
    summary
    echo "test.sh: FAILED in the sanitizer or fuzz build (exit $rc) after $(minutes $((SECONDS - started)))"
    exit "$rc"
  fi
}

phase setup "$root/scripts/setup.sh"
phase format "$root/scripts/check_format.sh"
phase build "$root/scripts/build.sh"
if [[ $quick -eq 1 ]]; then
  phase quick run_ctest -L quick
else
  start_background_builds
  phase ctest run_ctest -LE long
  phase isa "$root/scripts/test_isa.sh" "$build"
  wait_background_builds
  phase sanitize "$root/scripts/sanitize.sh"
  phase fuzz "$root/scripts/fuzz.sh" "${LINSWEEP_CI_FUZZ_SECONDS:-10}"
fi
summary
echo "test.sh: everything passed in $(minutes $((SECONDS - started)))"
