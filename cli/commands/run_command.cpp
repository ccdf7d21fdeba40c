// `linsweep run`: run a sweep's pending units, in one process or as an MPI job.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>

#include "cli/commands/commands.hpp"
#include "common/errors.hpp"
#include "common/launch_env.hpp"
#include "engine/comm/communicator.hpp"
#include "orchestrator/run/local_run.hpp"
#include "orchestrator/run/mpi_run.hpp"
#include "orchestrator/spec/spec.hpp"

namespace linsweep {

// Under mpirun/srun with more than one rank: MPI coordinator and worker groups.
void refuse_flags(const CLI::App* cmd, const std::vector<std::string>& flags, const std::string& why) {
  for (const auto& f : flags)
    if (cmd->count(f) > 0) throw InputError(cmd->get_name() + ": " + f + " " + why);
}

int run_command(const std::string& spec, const RunOptions& opts) {
  const int world = std::max({env_int("OMPI_COMM_WORLD_SIZE", 1), env_int("PMI_SIZE", 1), env_int("PMIX_SIZE", 1)});
  if (world <= 1) return run_sweep_local(spec, opts);
  int argc = 0;
  char** argv = nullptr;
  MpiSession mpi(&argc, &argv);
  if (mpi.world_size() <= 1) return run_sweep_local(spec, opts);
  return run_sweep_mpi(spec, opts);
}

void add_run_command(CLI::App& root, CommandAction* action) {
  auto spec = std::make_shared<std::string>();
  auto opts = std::make_shared<RunOptions>();
  CLI::App* cmd =
      root.add_subcommand("run",
                          "Run every pending unit of a sweep spec and commit it to the store (exit 0 done, 1 a unit "
                          "failed, 2 bad input, never retried, 3 interrupted: Ctrl-C stops after the running units, "
                          "twice aborts, and the last line is the command that continues). "
                          "Under mpirun -n N (N > 1), rank 0 coordinates and the other ranks form worker groups.");
  add_spec_arguments(cmd, {spec.get(), &opts->overrides, &opts->store_override});
  cmd->add_option("--threads", opts->threads, "torch threads (default: spec runtime.threads, then cores / local ranks)")
      ->check(CLI::Range(0, 4096));
  cmd->add_flag("--quiet", opts->quiet, "print only failures and errors (no per-unit lines, no live progress line)");
  cmd->add_option(
      "--units", opts->units_file,
      "run only the unit ids listed in this file (one per line; written by `linsweep submit` for split jobs); "
      "takes the store lock shared, so jobs with disjoint units run side by side");
  auto dry_run = std::make_shared<bool>(false);
  cmd->add_flag("--dry-run", *dry_run, "print the units that would run (as `plan` does) and run nothing");
  cmd->footer("Example: linsweep run examples/fixture_measure.yaml 'experiments.fit.lambda=[0.1]' --store runs/fx");
  cmd->callback([cmd, spec, opts, dry_run, action] {
    if (*dry_run) refuse_flags(cmd, {"--threads", "--quiet", "--units"}, "has no effect with --dry-run");
    *action = [spec, opts, dry_run] {
      if (*dry_run) return print_plan(*spec, load_spec(*spec, opts->store_override, opts->overrides), false);
      return run_command(*spec, *opts);
    };
  });
}

}  // namespace linsweep
