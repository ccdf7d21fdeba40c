// Talking to Slurm through its commands (sbatch, squeue, scontrol, sacct), never through a shell.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace linsweep {

// Output of a program run with argv (no shell): exit status, stdout, stderr.
struct ProgramOutput {
  int status = -1;  // exit code; 127 when the program was not found; 124 on timeout
  std::string out, err;
};

// Runs argv[0] (searched on PATH) with stdin from /dev/null, capturing both streams, killed
// after `timeout_seconds`. Never throws for the program's own failure; throws SlurmError only
// when the process cannot be created at all.
ProgramOutput run_program(const std::vector<std::string>& argv, int timeout_seconds = 60);

// What the scheduler says about one job.
struct JobInfo {
  std::string id;
  std::string state;   // PENDING, RUNNING, REQUEUED, COMPLETED, CANCELLED, TIMEOUT, PREEMPTED, FAILED,
                       // NODE_FAIL, OUT_OF_MEMORY, ... or UNKNOWN when no source knows the job
  std::string reason;  // e.g. Dependency, BeginTime, Resources; empty when none
  std::int64_t restarts = 0;
  std::string source;  // "squeue", "scontrol", "sacct" or "" (unknown)
  // True while the job may still run its units (pending, running, requeued, suspended...).
  bool alive() const;
};

// Submits `script` with `sbatch --parsable --chdir=<workdir>` (plus
// --dependency=<d1>,<d2>,… when `dependencies` — each "afterok:ID" or "afterany:ID" — is not
// empty: all of them must hold) and returns the job id. Throws SlurmError (exit code 2) with
// one line naming the cause: sbatch missing from PATH, the controller unreachable, or the
// submission rejected (sbatch's own message).
std::string submit_batch(const std::string& script, const std::string& workdir,
                         const std::vector<std::string>& dependencies);

// The state of each id (a job, or an array task "<array id>_<task>"): squeue for jobs in the
// queue, then `scontrol show job` for recently finished ones, then sacct (when accounting is
// configured). Jobs none of them knows are UNKNOWN. Throws SlurmError when squeue is missing or
// the controller is unreachable.
std::map<std::string, JobInfo> query_jobs(const std::vector<std::string>& ids);

// Parses one line of `scontrol show job -o` (Key=Value pairs) into a map.
std::map<std::string, std::string> parse_scontrol_line(const std::string& line);

}  // namespace linsweep
