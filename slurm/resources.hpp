// What a Slurm job asks for: the spec's `resources` section.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace linsweep {

struct ResourcesSpec {
  std::int64_t nodes = 1;
  std::int64_t tasks_per_node = 1;
  std::int64_t gpus_per_node = 0;
  std::int64_t cpus_per_task = 0;  // 0: not requested
  std::string mem;                 // e.g. "64G"; empty: not requested
  std::string time = "01:00:00";
  std::string partition, account, qos, constraint;
  std::vector<std::string> extra_sbatch;
  std::string launcher = "mpirun";  // mpirun | srun
  // Arguments the launcher gets before the linsweep command, one word each; unset: the
  // launcher's defaults (default_launcher_args).
  std::optional<std::vector<std::string>> launcher_args;
  std::int64_t requeue_limit = 3;
};

}  // namespace linsweep
