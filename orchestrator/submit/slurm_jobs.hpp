// A store's recorded Slurm jobs and what the scheduler says of them: shared by `submit` and
// `resume --submit` (which leave out the units a live job holds) and `status` (which shows
// them). Torch-free: `linsweep`, which runs `status` without LibTorch, links it.
#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "slurm/job_record.hpp"
#include "slurm/scheduler.hpp"

namespace linsweep {

// The store's recorded jobs (and array tasks) with the scheduler's state of each. Not
// copyable: `scheduled` points into `records` (a move keeps the pointers valid).
struct RecordedJobs {
  std::vector<JobRecord> records;
  std::vector<ScheduledJob> scheduled;
  std::map<std::string, JobInfo> states;
  RecordedJobs() = default;
  RecordedJobs(RecordedJobs&&) = default;
  RecordedJobs(const RecordedJobs&) = delete;
};

// Reads STORE/slurm/jobs.jsonl and asks the scheduler (squeue, then sacct) about every job and
// array task in it; the scheduler is not asked when nothing is recorded. Throws SlurmError
// when the scheduler cannot be asked, InputError for an unreadable record.
RecordedJobs recorded_jobs(const std::string& store_dir);

// One entry per recorded job, or per task of a job array ("<array id>_<task>"), with the
// scheduler's state (pending, running, requeued, preempted, timeout, failed, node failure,
// cancelled, completed) and its units' progress in the store; an empty list when the store
// has no Slurm jobs. Throws SlurmError when the scheduler cannot be asked.
nlohmann::json slurm_jobs_status(const std::string& store_dir);

}  // namespace linsweep
