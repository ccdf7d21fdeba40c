// Rendering a Slurm batch script for a sweep (or a share of it) from the spec's resources.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "slurm/resources.hpp"

namespace linsweep {

// One job of a submission.
struct BatchJob {
  std::string name;                 // job name (validated like the resource strings)
  std::string linsweep;             // absolute path of the linsweep binary
  std::string spec;                 // absolute path of the spec
  std::string store;                // absolute path of the store
  std::string units_file;           // empty: every pending unit; else the file of unit ids this job runs
  std::string log_dir;              // absolute; the job's output goes to <log_dir>/<name>-<job id>.out
  std::int64_t grace_seconds = 60;  // --signal=B:USR1@<grace>
  // > 0: a job array of that many tasks (--array=0-<n-1>); task i runs the units listed in
  // array_units_file(units_file, i), and its output goes to <log_dir>/<name>-<array id>_<i>.out.
  std::int64_t array_tasks = 0;
  std::int64_t array_limit = 0;        // at most this many tasks at once (--array=…%<limit>); 0: no limit
  std::vector<std::string> overrides;  // spec overrides the run gets after SPEC (shell-quoted)
};

// The unit list of task `task` of an array job whose units_file is `prefix`.
std::string array_units_file(const std::string& prefix, std::int64_t task);

// What the launcher gets when resources.launcher_args is unset: for mpirun `--bind-to none`
// (OpenMPI 4.1 binds every rank to one core when a job has at most 2 ranks, which would leave a
// rank alone on a node one thread; unbound, each rank takes the node's CPUs divided by the
// ranks on the node), for srun nothing (Slurm's own binding applies).
std::vector<std::string> default_launcher_args(const std::string& launcher);

// Seconds of a Slurm time limit ("MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS").
// Throws SpecError naming `field` when it is none of these.
std::int64_t slurm_time_seconds(const std::string& time, const std::string& field);

// Checks every resource string that reaches an #SBATCH line: partition, account, qos,
// constraint, mem and time may only hold [A-Za-z0-9_.,:+=@%&|!*()\[\]/-] (no spaces, quotes,
// $, backticks, semicolons or newlines: sbatch reads these lines itself, so quoting cannot
// protect them); each extra line must be one "--option[=value]" of printable characters
// without newlines or a '#'; each launcher argument must be a non-empty word of printable
// characters (it is shell-quoted). Throws SpecError "<spec file>: resources.<field>: ..."
// naming the offending character.
void check_resources(const ResourcesSpec& r, const std::string& spec_file);

// The batch script for `job`: #SBATCH lines for the resources (nodes, tasks per node, GPUs as
// gres, CPUs per task, memory, time, partition, account, qos, constraint, extra lines), the
// job name, --signal=B:USR1@grace, --requeue and --open-mode=append; then a bash body in which
// every path is shell-quoted; a job array also gets --array and its task's unit list. The
// body exports LINSWEEP_DEADLINE (job start + time limit − grace) so the coordinator stops
// starting units that would not finish, runs the launcher (mpirun, or srun --mpi=pmix, with
// the launcher arguments) in the background, forwards USR1/TERM to it, and when the run
// exits 3 (interrupted, resumable) requeues the job with `scontrol requeue` while
// SLURM_RESTART_COUNT is below requeue_limit. Calls check_resources first.
std::string render_batch_script(const ResourcesSpec& r, const BatchJob& job, const std::string& spec_file);

}  // namespace linsweep
