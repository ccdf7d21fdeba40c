// `linsweep resume STORE`: continue the sweep recorded in a store, as `run` would.
#include <CLI/CLI.hpp>

#include <memory>

#include "orchestrator/commands/commands.hpp"
#include "orchestrator/runner.hpp"
#include "orchestrator/submit.hpp"

namespace linsweep {

void add_resume_command(CLI::App& root, CommandAction* action) {
  auto store = std::make_shared<std::string>();
  auto opts = std::make_shared<RunOptions>();
  auto submit = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  auto sopts = std::make_shared<SubmitOptions>();
  CLI::App* cmd = root.add_subcommand(
      "resume", "Continue the sweep last run into STORE (the spec path recorded in STORE/run.json; the spec is re-read and "
                "re-planned, so only units that are not committed run). Same exit codes and MPI use as `run`. With --submit, "
                "asks Slurm first: jobs recorded in STORE/slurm that are still pending or running keep their units, and only "
                "what no live job holds is submitted (as `submit` would), with an explanation of what will run.");
  cmd->add_option("store", *store, "store directory")->required();
  cmd->add_option("--threads", opts->threads, "torch threads (default: as recorded, then as `run`)")->check(CLI::Range(0, 4096));
  cmd->add_flag("--quiet", opts->quiet, "print only failures and errors");
  cmd->add_flag("--submit", *submit, "submit the missing units to Slurm instead of running them here");
  add_submit_options(cmd, sopts.get());
  cmd->add_flag("--json", *json, "with --submit: print the submission as JSON");
  cmd->callback([store, opts, submit, json, sopts, action] {
    *action = [store, opts, submit, json, sopts] {
      RunOptions o = *opts;
      const std::string spec = recorded_spec(*store, &o);
      if (!*submit) return run_command(spec, o);
      SubmitOptions s = *sopts;
      s.store_override = *store;
      return print_submit_report(submit_sweep(spec, s), s, *json);
    };
  });
}

}  // namespace linsweep
