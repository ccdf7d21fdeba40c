// `linsweep resume STORE`: continue the sweep recorded in a store, as `run` would.
#include <CLI/CLI.hpp>

#include <memory>

#include "orchestrator/commands/commands.hpp"
#include "orchestrator/runner.hpp"

namespace linsweep {

void add_resume_command(CLI::App& root, CommandAction* action) {
  auto store = std::make_shared<std::string>();
  auto opts = std::make_shared<RunOptions>();
  CLI::App* cmd = root.add_subcommand(
      "resume", "Continue the sweep last run into STORE (the spec path recorded in STORE/run.json; the spec is re-read and "
                "re-planned, so only units that are not committed run). Same exit codes and MPI use as `run`.");
  cmd->add_option("store", *store, "store directory")->required();
  cmd->add_option("--threads", opts->threads, "torch threads (default: as recorded, then as `run`)");
  cmd->add_flag("--quiet", opts->quiet, "print only failures and errors");
  cmd->callback([store, opts, action] {
    *action = [store, opts] {
      RunOptions o = *opts;
      const std::string spec = recorded_spec(*store, &o);
      return run_command(spec, o);
    };
  });
}

}  // namespace linsweep
