// What every fuzz target shares: a scratch directory per process, input files, the error policy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "common/errors.hpp"
#include "support/test_paths.hpp"

// Each fuzz_<name>.cpp defines `int fuzz_<name>(const std::uint8_t*, std::size_t)`. The
// libFuzzer build (tests/fuzz/CMakeLists.txt, -DLINSWEEP_LIBFUZZER) makes it the binary's
// LLVMFuzzerTestOneInput; the regular build links every target into fuzz_replay instead, which
// needs distinct names.
#ifdef LINSWEEP_LIBFUZZER
#define LINSWEEP_FUZZ_ENTRY(target)                                                   \
  extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) { \
    return ::linsweep::target(data, size);                                            \
  }
#else
#define LINSWEEP_FUZZ_ENTRY(target)
#endif

namespace linsweep::fuzz {

// A directory of this process, made on first use under $TMPDIR (or /tmp) and removed with
// everything in it when the process exits normally. Targets write their inputs there at fixed
// paths, so that millions of inputs leave no files behind and two fuzzers never collide.
const std::string& scratch_dir();

// Writes `bytes` to scratch_dir()/`name` (creating its parent directories, replacing the file)
// and returns the path. Aborts when the file cannot be written: that is the harness's fault.
std::string write_input(const std::string& name, std::string_view bytes);

// Creates (once) scratch_dir()/`name` as a symbolic link to `target`; returns the link's path.
std::string link_input(const std::string& name, const std::string& target);

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A two-file input (vocab.json + merges.txt) is one fuzz input cut at its first NUL byte,
// which neither file needs: JSON forbids a raw NUL, and merges.txt is text. Without a NUL the
// second part is empty.
std::pair<std::string_view, std::string_view> split_input(std::string_view input);

// Aborts the process with `what` on stderr: an invariant the sanitizers cannot see is broken
// (a parser accepted something it promised to refuse, or refused with the wrong exit code).
[[noreturn]] void fail(const std::string& what);

// Runs `parse`. A malformed input must end in a project error that means bad input (exit 2,
// as the bad-input catalogue requires of every reader); that outcome is expected. Any other
// exception escapes, so that libFuzzer reports it as a crash ("uncaught exception").
template <class F>
void expect_bad_input(F&& parse) {
  try {
    parse();
  } catch (const Error& e) {
    if (e.exit_code() != ExitCode::kBadInput)
      fail(std::string("a malformed input gave exit code ") + std::to_string(static_cast<int>(e.exit_code())) +
           ", not 2 (bad input): " + e.what());
  }
}

// Registers stand-in spec experiments (stand_in_experiments.cpp) unless real ones are linked in.
void register_spec_experiments();

// tests/data and the source tree of this build.
inline std::string test_data_dir() { return linsweep::test::test_data_path(); }
inline std::string source_dir() { return linsweep::test::source_path(); }

}  // namespace linsweep::fuzz
