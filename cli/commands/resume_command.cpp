// `linsweep resume STORE`: continue the sweep recorded in a store, as `run` would.
#include <CLI/CLI.hpp>
#include <memory>

#include "cli/commands/commands.hpp"
#include "orchestrator/run/local_run.hpp"
#include "orchestrator/run/sweep_setup.hpp"
#include "orchestrator/spec/spec.hpp"
#include "orchestrator/submit/submit.hpp"

namespace linsweep {

void add_resume_command(CLI::App& root, CommandAction* action) {
  auto store = std::make_shared<std::string>();
  auto opts = std::make_shared<RunOptions>();
  auto submit = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  auto sopts = std::make_shared<SubmitOptions>();
  CLI::App* cmd = root.add_subcommand(
      "resume",
      "Continue the sweep last run into STORE (the spec path recorded in STORE/run.json; the spec is re-read and "
      "re-planned, so only units that are not committed run). Same exit codes and MPI use as `run`. With --submit, "
      "asks Slurm first: jobs recorded in STORE/slurm that are still pending or running keep their units, and only "
      "what no live job holds is submitted (as `submit` would), with an explanation of what will run. "
      "--dry-run without --submit prints the units that would run (as `plan` does) and runs nothing.");
  add_store_argument(cmd, store.get());
  cmd->add_option("overrides", opts->overrides,
                  "further spec overrides, applied after those the run recorded: key.path=value, +key.path=value, "
                  "~key.path");
  cmd->add_option("--threads", opts->threads, "torch threads (default: as recorded, then as `run`)")
      ->check(CLI::Range(0, 4096));
  cmd->add_flag("--quiet", opts->quiet, "print only failures and errors");
  cmd->add_flag("--submit", *submit, "submit the missing units to Slurm instead of running them here");
  add_submit_options(cmd, sopts.get());
  cmd->add_flag("--json", *json, "with --submit or --dry-run: print JSON");
  cmd->footer("Example: linsweep resume runs/demo/store --threads 2");
  cmd->callback([cmd, store, opts, submit, json, sopts, action] {
    if (*submit) {
      refuse_flags(cmd, {"--threads", "--quiet"}, "has no effect with --submit (the jobs run `linsweep run`)");
    } else {
      refuse_flags(cmd, {"--split", "--max-concurrent", "--linsweep"}, "needs --submit");
      if (sopts->dry_run)
        refuse_flags(cmd, {"--threads", "--quiet"}, "has no effect with --dry-run");
      else
        refuse_flags(cmd, {"--json"}, "needs --submit or --dry-run");
    }
    *action = [store, opts, submit, json, sopts] {
      RunOptions o = *opts;
      o.command = "resume";
      const std::string spec = recorded_spec(*store, &o);
      if (!*submit && sopts->dry_run) return print_plan(spec, load_spec(spec, o.store_override, o.overrides), *json);
      if (!*submit) return run_command(spec, o);
      SubmitOptions s = *sopts;
      s.store_override = *store;
      s.overrides = o.overrides;
      return print_submit_report(submit_sweep(spec, s), s, *json);
    };
  });
}

}  // namespace linsweep
