// The runtime and resources sections' declarations.
#include "orchestrator/spec/spec_sections.hpp"

#include "common/byte_size.hpp"

namespace linsweep {
namespace {

std::string device_problem(const std::string& d) {
  if (d == "auto" || d == "cpu" || d == "cuda") return "";
  if (d.rfind("cuda:", 0) == 0 && d.size() > 5 && d.find_first_not_of("0123456789", 5) == std::string::npos) return "";
  return "'" + d + "' is not a device (auto, cpu, cuda or cuda:N)";
}

std::string stages_problem(const std::string& s) {
  if (s == "auto") return "";
  if (!s.empty() && s.size() <= 4 && s.find_first_not_of("0123456789") == std::string::npos && std::stoi(s) >= 1)
    return "";
  return "'" + s + "' is not a number of stages (1 to 9999) or auto";
}

std::string memory_problem(const std::string& s) {
  return s.empty() || parse_byte_size(s) ? "" : "'" + s + "' is not a size (bytes, or with a unit: 512MiB, 80GB)";
}

ParamRange checked(std::string (*problem)(const std::string&)) {
  ParamRange r;
  r.check = problem;
  return r;
}

ParamRange device_range() {
  ParamRange r;
  r.check = device_problem;
  return r;
}

}  // namespace

const ParamSchema<RuntimeSpec>& runtime_schema() {
  static const ParamSchema<RuntimeSpec> s = [] {
    ParamSchema<RuntimeSpec> s;
    s.add("device", &RuntimeSpec::device, device_range(),
          "`auto` (a GPU by local rank when one is visible), `cpu`, `cuda`, `cuda:N`")
        .add("dtype", &RuntimeSpec::dtype, one_of({"float32", "bfloat16", "float16"}),
             "compute dtype (a model's own `dtype` overrides it); part of the identity of every unit that "
             "runs the model")
        .add("batch", &RuntimeSpec::batch, in_range(1, 1 << 20), "windows per forward pass")
        .add("ranks_per_group", &RuntimeSpec::ranks_per_group, in_range(1, 4096),
             "MPI ranks that share one unit (windows sharded across them)")
        .add("retries", &RuntimeSpec::retries, in_range(0, 100),
             "attempts after a unit's first failure (none after bad input: a broken corpus, a split past its end)")
        .add("grace_seconds", &RuntimeSpec::grace_seconds, in_range(0, 86400),
             "time running units get after SIGTERM / SIGUSR1")
        .add("threads", &RuntimeSpec::threads, in_range(0, 4096),
             "torch threads per rank; 0: CPUs / ranks on the node (LINSWEEP_THREADS overrides)")
        .add("groups_span_nodes", &RuntimeSpec::groups_span_nodes, any_value(),
             "let a worker group of several ranks span nodes (its all-reduces then cross the network)")
        .add("activation_dtype", &RuntimeSpec::activation_dtype, one_of({"float16", "float32", "bfloat16"}),
             "activation shards' dtype; part of the identity of the units that write and read them")
        .add("communicator", &RuntimeSpec::communicator, one_of({"auto", "mpi", "nccl"}),
             "how a worker group sums its partial results: `auto` (NCCL when a GPU is visible and `device` is not "
             "`cpu`, else MPI), `mpi` or `nccl`")
        .add("stages", &RuntimeSpec::stages, checked(stages_problem),
             "split each model by layers over this many consecutive ranks of a worker group (`ranks_per_group` a "
             "multiple of it), or `auto`: the fewest that fit `memory_per_rank`")
        .add("memory_per_rank", &RuntimeSpec::memory_per_rank, checked(memory_problem),
             "bytes a rank may hold (`512MiB`, `80GB`); empty: the device's free memory, or the node's memory "
             "divided by its ranks. `plan`, `run` and `submit` refuse a spec whose estimate exceeds it");
    return s;
  }();
  return s;
}

const ParamSchema<ResourcesSpec>& resources_schema() {
  static const ParamSchema<ResourcesSpec> s = [] {
    ParamSchema<ResourcesSpec> s;
    s.add("nodes", &ResourcesSpec::nodes, in_range(1, 100000), "nodes of the job")
        .add("tasks_per_node", &ResourcesSpec::tasks_per_node, in_range(1, 4096), "MPI ranks per node")
        .add("gpus_per_node", &ResourcesSpec::gpus_per_node, in_range(0, 64), "requested as --gres=gpu:N")
        .add("cpus_per_task", &ResourcesSpec::cpus_per_task, in_range(0, 4096), "0: not requested")
        .add("mem", &ResourcesSpec::mem, any_value(),
             "memory per node as sbatch writes it (`64G`); empty: not requested")
        .add("time", &ResourcesSpec::time, any_value(),
             "a Slurm time: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS")
        .add("partition", &ResourcesSpec::partition, any_value(), "empty: not requested")
        .add("account", &ResourcesSpec::account, any_value(), "empty: not requested")
        .add("qos", &ResourcesSpec::qos, any_value(), "empty: not requested")
        .add("constraint", &ResourcesSpec::constraint, any_value(), "empty: not requested")
        .add("extra_sbatch", &ResourcesSpec::extra_sbatch, any_value(),
             "further #SBATCH lines, each one `--option[=value]`")
        .add("launcher", &ResourcesSpec::launcher, one_of({"mpirun", "srun"}),
             "`mpirun` (mpirun -n $SLURM_NTASKS) or `srun` (srun --mpi=pmix)")
        .optional_strings("launcher_args", &ResourcesSpec::launcher_args, any_value(),
                          "the launcher's own arguments, one word each, before the linsweep command; unset: "
                          "mpirun's [--bind-to, none], srun's []")
        .add("requeue_limit", &ResourcesSpec::requeue_limit, in_range(0, 1000),
             "how often an interrupted job (exit 3) requeues itself");
    return s;
  }();
  return s;
}

}  // namespace linsweep
