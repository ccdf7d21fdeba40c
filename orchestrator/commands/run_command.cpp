// `linsweep run`: run a sweep's pending units (single process in this build).
#include <CLI/CLI.hpp>

#include <memory>

#include "orchestrator/commands/commands.hpp"
#include "orchestrator/runner.hpp"

namespace linsweep {

void add_run_command(CLI::App& root, CommandAction* action) {
  auto spec = std::make_shared<std::string>();
  auto opts = std::make_shared<RunOptions>();
  CLI::App* cmd = root.add_subcommand(
      "run", "Run every pending unit of a sweep spec and commit it to the store (exit 0 done, 1 a unit failed, 3 interrupted). "
             "This build runs in one process.");
  cmd->add_option("spec", *spec, "sweep spec (YAML)")->required();
  cmd->add_option("--store", opts->store_override, "store directory (overrides the spec's store)");
  cmd->add_option("--threads", opts->threads, "torch threads (default: spec runtime.threads, then cores / local ranks)");
  cmd->add_flag("--quiet", opts->quiet, "no per-unit progress lines");
  cmd->callback([spec, opts, action] { *action = [spec, opts] { return run_sweep(*spec, *opts); }; });
}

}  // namespace linsweep
