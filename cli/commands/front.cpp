// `linsweep`: query, compare, status, gc, tokenize and catalogue run here, without LibTorch; every other command
// (and --help, --version) runs in `linsweep-full`. Loading LibTorch costs most of a second of CPU
// per start (measured: docs/reliability.md, "Test time"), which a query or a status check should
// not pay.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "cli/commands/commands.hpp"
#include "common/blas_kernels.hpp"
#include "common/child_process.hpp"
#include "common/errors.hpp"

namespace linsweep {
namespace {

using AddCommand = void (*)(CLI::App&, CommandAction*);

// The commands that need no model and no experiment's code (the report, tables and figures draw
// through the experiments' registered sections): they link no LibTorch or MPI.
constexpr std::pair<const char*, AddCommand> kLightCommands[] = {
    {"query", add_query_command}, {"compare", add_compare_command},   {"status", add_status_command},
    {"gc", add_gc_command},       {"tokenize", add_tokenize_command}, {"catalogue", add_catalogue_command},
};

// Replaces this process with linsweep-full from this executable's folder (same pid, so that
// signals from mpirun, Slurm or a terminal reach it); returns only when that failed.
// Unless the caller chose otherwise, OpenMP's idle threads sleep (OMP_WAIT_POLICY=PASSIVE) rather
// than spin: between parallel regions, torch's spinning threads take the cores from OpenBLAS's
// threads in the same rank, and from other ranks and jobs on a shared node. libgomp reads the
// variable once, when it loads, so it is set here, before linsweep-full starts (measured:
// bench/omp_wait.sh, docs/benchmarks.md). The ranks and jobs linsweep-full starts inherit it.
// For the same reason OPENBLAS_CORETYPE is set here when OpenBLAS would fall back to kernels
// narrower than the CPU's (blas_kernels.hpp).
int exec_full(char** argv) {
  if (::setenv("OMP_WAIT_POLICY", "PASSIVE", /*overwrite=*/0) != 0) {
    std::fprintf(stderr, "linsweep: cannot set OMP_WAIT_POLICY: %s\n", std::strerror(errno));
    return static_cast<int>(ExitCode::kUnitsFailed);
  }
  if (std::getenv("OPENBLAS_CORETYPE") == nullptr) {
    const std::optional<std::string> chosen = loaded_openblas_core();
    const std::optional<std::string> better = chosen ? better_openblas_core(*chosen, cpu_vector_isa()) : std::nullopt;
    if (better && ::setenv("OPENBLAS_CORETYPE", better->c_str(), /*overwrite=*/0) != 0) {
      std::fprintf(stderr, "linsweep: cannot set OPENBLAS_CORETYPE: %s\n", std::strerror(errno));
      return static_cast<int>(ExitCode::kUnitsFailed);
    }
  }
  std::string full;
  try {
    full = (std::filesystem::path(self_executable()).parent_path() / "linsweep-full").string();
  } catch (const Error& e) {
    std::fprintf(stderr, "linsweep: %s\n", e.what());
    return static_cast<int>(ExitCode::kUnitsFailed);
  }
  ::execv(full.c_str(), argv);
  std::fprintf(stderr, "linsweep: cannot start %s: %s (it is built and installed beside linsweep)\n", full.c_str(),
               std::strerror(errno));
  return static_cast<int>(ExitCode::kUnitsFailed);
}

}  // namespace

int linsweep_front_main(int argc, char** argv) {
  if (argc > 1) {
    for (const auto& [name, add] : kLightCommands) {
      if (std::strcmp(argv[1], name) != 0) continue;
      const std::unique_ptr<CLI::App> app = make_root_app();
      CommandAction action;
      add(*app, &action);
      return parse_and_run(*app, action, argc, argv);
    }
  }
  return exec_full(argv);
}

}  // namespace linsweep
