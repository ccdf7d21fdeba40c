// Submitting a sweep to Slurm, and reconciling the scheduler's view with the store.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace linsweep {

struct SubmitOptions {
  std::string store_override;          // --store
  bool dry_run = false;                // print the scripts, submit and record nothing
  std::string split = "none";          // none (one job) | model (a job per model) | units:K (at most K units per job)
  std::int64_t max_concurrent = 0;     // at most this many of the submission's jobs at once (0: no cap)
  std::string linsweep;                // the binary the jobs run (default: this one)
  std::vector<std::string> overrides;  // key.path=value ... applied to the spec; the jobs get them too
  bool quiet = false;
};

// A job of a submission as planned (and, unless dry-run, submitted).
struct PlannedJob {
  std::string name, job_id, script_path, units_file;  // units_file: a job array's unit lists' prefix
  std::vector<std::string> units;                     // empty: every pending unit
  std::vector<std::vector<std::string>> tasks;        // a job array: each task's units; empty: a plain job
  std::int64_t array_limit = 0;                       // a job array: tasks at once (0: no limit)
  std::vector<std::string> dependencies;              // "afterok:ID" / "afterany:ID"
  std::string script;                                 // the rendered text
};

// What `submit` / `resume --submit` found and did.
struct SubmitReport {
  std::string store;
  std::size_t total = 0, committed = 0, pending = 0, held = 0;  // held: pending units a live job still holds
  std::vector<std::string> live_jobs;                           // recorded jobs still pending or running
  std::vector<PlannedJob> jobs;
  nlohmann::json to_json() const;
};

// Plans the spec against its store, leaves out units that a recorded job or array task that is
// still alive holds (so nothing is submitted twice; also in a dry run), splits the rest into
// jobs (split_units: units:K makes a job array of each dependency depth with several tasks;
// afterok on the job of this submission, or the live job, that holds a unit's dependency;
// max_concurrent: %N on arrays, afterany chains between plain jobs), renders each batch
// script, and unless dry-run writes STORE/slurm/<name>.sh (and the unit lists: <name>.units,
// or <name>.<task>.units for an array), submits every job with sbatch and then records them in
// STORE/slurm/jobs.jsonl. Throws SpecError for a bad spec or split, SlurmError (exit 2) when
// sbatch is missing, the controller unreachable or a job rejected: a submission is all or
// nothing (jobs already accepted are cancelled, no record, no files).
SubmitReport submit_sweep(const std::string& spec_path, const SubmitOptions& options);

}  // namespace linsweep
