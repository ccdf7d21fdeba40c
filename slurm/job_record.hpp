// The jobs a store was submitted as: STORE/slurm/jobs.jsonl, one JSON object per submitted job.
#pragma once

#include <string>
#include <vector>

namespace linsweep {

struct JobRecord {
  std::string job_id;
  std::string name;
  std::string script;              // STORE/slurm/<name>.sh
  std::string units_file;          // empty: the job runs every pending unit; an array: the lists' prefix
  std::vector<std::string> units;  // the unit ids it holds (empty: all)
  std::vector<std::string> after;  // afterok dependencies (job ids)
  double time = 0;                 // submission, seconds since the epoch
  // A job array: the units of each task (`units` holds all of them); empty for a plain job.
  std::vector<std::vector<std::string>> tasks;
};

// What the scheduler runs of a record: the job itself, or each task of a job array as
// "<job id>_<task>" with that task's units.
struct ScheduledJob {
  std::string id;
  const JobRecord* record = nullptr;
  std::vector<std::string> units;  // empty for a plain job that runs every pending unit
};
std::vector<ScheduledJob> scheduled_jobs(const std::vector<JobRecord>& records);

// Appends `r` as one line (O_APPEND, fsynced) to STORE/slurm/jobs.jsonl, creating the
// directory. Only called after sbatch accepted the job, so a failed submission records
// nothing. Throws SlurmError on a write failure.
void append_job_record(const std::string& store_dir, const JobRecord& r);

// Every record, oldest first; a torn last line is skipped; missing file: none. A line over
// 64 MiB is refused (SlurmError, exit 2) before it is read whole.
std::vector<JobRecord> read_job_records(const std::string& store_dir);

}  // namespace linsweep
