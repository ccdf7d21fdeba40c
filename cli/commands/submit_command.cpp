// `linsweep submit SPEC`: render the sweep's Slurm batch script(s) and submit them with sbatch.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.hpp"
#include "orchestrator/submit/submit.hpp"

namespace linsweep {

namespace {

// "every pending unit", "12 units", or "12 units in an array of 3 tasks (at most 2 at once)".
std::string job_units(const PlannedJob& j) {
  if (j.units.empty()) return "every pending unit";
  std::string s = std::to_string(j.units.size()) + " units";
  if (!j.tasks.empty())
    s += " in an array of " + std::to_string(j.tasks.size()) + " tasks" +
         (j.array_limit > 0 ? " (at most " + std::to_string(j.array_limit) + " at once)" : "");
  return s;
}

}  // namespace

int print_submit_report(const SubmitReport& r, const SubmitOptions& o, bool json) {
  if (json) {
    std::printf("%s\n", r.to_json().dump().c_str());
    return 0;
  }
  if (o.dry_run) {
    for (const auto& j : r.jobs) {
      std::printf("# ---- %s (%s)%s\n", j.name.c_str(), job_units(j).c_str(),
                  j.dependencies.empty() ? "" : (" after " + nlohmann::json(j.dependencies).dump()).c_str());
      std::printf("%s", j.script.c_str());
    }
  }
  std::fprintf(stderr, "submit: %zu units: %zu committed, %zu pending", r.total, r.committed, r.pending);
  if (r.held > 0)
    std::fprintf(stderr, ", %zu of them held by live job(s) %s", r.held, nlohmann::json(r.live_jobs).dump().c_str());
  std::fprintf(stderr, "\n");
  if (r.jobs.empty()) {
    std::fprintf(stderr, "submit: nothing to submit\n");
    return 0;
  }
  for (const auto& j : r.jobs)
    std::fprintf(stderr, "submit: %s %s: %s%s\n", o.dry_run ? "would submit" : ("job " + j.job_id).c_str(),
                 j.name.c_str(), job_units(j).c_str(),
                 j.dependencies.empty() ? "" : (", after " + nlohmann::json(j.dependencies).dump()).c_str());
  if (!o.dry_run)
    std::fprintf(stderr, "submit: scripts and logs under %s/slurm; follow with `linsweep status %s`\n", r.store.c_str(),
                 r.store.c_str());
  return 0;
}

void add_submit_options(CLI::App* cmd, SubmitOptions* o) {
  cmd->add_flag("--dry-run", o->dry_run,
                "print the batch script(s) and what would be submitted; submit and record nothing");
  cmd->add_option("--split", o->split,
                  "none (one job), model (a job per model) or units:K (the units by dependency depth, "
                  "at most K per job; a depth of several jobs is one job array; each depth waits for "
                  "the one before with --dependency=afterok)")
      ->capture_default_str();
  cmd->add_option("--max-concurrent", o->max_concurrent,
                  "at most this many of the jobs at once (an array's %N; afterany "
                  "chains between plain jobs; 0: no cap)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 20));
  cmd->add_option("--linsweep", o->linsweep, "linsweep binary the jobs run (default: this one)");
}

void add_submit_command(CLI::App& root, CommandAction* action) {
  auto spec = std::make_shared<std::string>();
  auto opts = std::make_shared<SubmitOptions>();
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = root.add_subcommand(
      "submit",
      "Submit a sweep to Slurm: renders a batch script from the spec's `resources` (launcher, --signal=B:USR1@grace, "
      "requeue on interruption up to resources.requeue_limit, logs under STORE/slurm/logs), submits it with "
      "`sbatch --parsable` and records the job in STORE/slurm/jobs.jsonl. Units that a recorded job still alive holds "
      "are not submitted again. Exit 2 when sbatch is missing, the controller unreachable or the job rejected.");
  add_spec_arguments(cmd, {spec.get(), &opts->overrides, &opts->store_override}, "; the jobs run with them");
  add_submit_options(cmd, opts.get());
  cmd->add_flag("--json", *json, "print the submission as JSON");
  cmd->footer("Example: linsweep submit examples/fixture.yaml --split units:4 --dry-run");
  cmd->callback([cmd, spec, opts, json, action] {
    if (opts->split == "none") refuse_flags(cmd, {"--max-concurrent"}, "has no effect with --split none (one job)");
    *action = [spec, opts, json] { return print_submit_report(submit_sweep(*spec, *opts), *opts, *json); };
  });
}

}  // namespace linsweep
