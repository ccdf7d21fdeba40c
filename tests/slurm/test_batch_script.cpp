// Batch scripts: expected #SBATCH headers for a matrix of resources, shell quoting that
// survives $(…), backticks, quotes and newlines, and refusal of unsafe #SBATCH values.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "common/errors.hpp"
#include "common/shell_word.hpp"
#include "slurm/batch_script.hpp"
#include "slurm/scheduler.hpp"
#include "support/catch.hpp"

using namespace linsweep;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;

namespace {

BatchJob job(const std::string& store = "/runs/s") {
  return BatchJob{"ls-s-1-0", "/opt/linsweep/bin/linsweep", "/specs/a.yaml", store, "", "/runs/s/slurm/logs", 60};
}

// The #SBATCH lines of a script, joined.
std::string header(const std::string& script) {
  std::istringstream in(script);
  std::string line, out;
  while (std::getline(in, line))
    if (line.rfind("#SBATCH ", 0) == 0) out += line + "\n";
  return out;
}

}  // namespace

TEST_CASE("good_: #SBATCH lines for a matrix of resource settings", "[slurm]") {
  struct Case {
    const char* name;
    ResourcesSpec r;
    const char* want;
  };
  ResourcesSpec defaults;
  ResourcesSpec gpu;
  gpu.nodes = 2, gpu.tasks_per_node = 4, gpu.gpus_per_node = 4, gpu.cpus_per_task = 8, gpu.mem = "64G",
  gpu.time = "1-12:00:00";
  gpu.partition = "gpu", gpu.account = "proj_42", gpu.qos = "high", gpu.constraint = "a100|h100";
  gpu.extra_sbatch = {"--exclusive", "--mail-type=END"};
  ResourcesSpec srun = defaults;
  srun.launcher = "srun";
  srun.time = "30";
  const std::vector<Case> cases = {
      {"defaults", defaults,
       "#SBATCH --job-name=ls-s-1-0\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n#SBATCH --time=01:00:00\n"
       "#SBATCH --signal=B:USR1@60\n#SBATCH --requeue\n#SBATCH --open-mode=append\n#SBATCH --output=%x-%j.out\n"},
      {"gpu cluster", gpu,
       "#SBATCH --job-name=ls-s-1-0\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\n#SBATCH --gres=gpu:4\n"
       "#SBATCH --cpus-per-task=8\n#SBATCH --mem=64G\n#SBATCH --time=1-12:00:00\n#SBATCH --partition=gpu\n"
       "#SBATCH --account=proj_42\n#SBATCH --qos=high\n#SBATCH --constraint=a100|h100\n#SBATCH --signal=B:USR1@60\n"
       "#SBATCH --requeue\n#SBATCH --open-mode=append\n#SBATCH --output=%x-%j.out\n#SBATCH --exclusive\n#SBATCH "
       "--mail-type=END\n"},
      {"srun launcher", srun,
       "#SBATCH --job-name=ls-s-1-0\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n#SBATCH --time=30\n"
       "#SBATCH --signal=B:USR1@60\n#SBATCH --requeue\n#SBATCH --open-mode=append\n#SBATCH --output=%x-%j.out\n"},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      const std::string s = render_batch_script(c.r, job(), "spec.yaml");
      CHECK(header(s) == c.want);
      CHECK(s.rfind("#!/bin/bash\n", 0) == 0);
      if (c.r.launcher == "srun") {
        CHECK(s.find("srun --mpi=pmix \"${LAUNCHER_ARGS[@]}\" \"$LINSWEEP\" run") != std::string::npos);
        CHECK(s.find("\nLAUNCHER_ARGS=()\n") != std::string::npos);
      } else {
        CHECK(s.find("mpirun -n \"${SLURM_NTASKS:-1}\" \"${LAUNCHER_ARGS[@]}\" \"$LINSWEEP\" run") !=
              std::string::npos);
        CHECK(s.find("\nLAUNCHER_ARGS=('--bind-to' 'none')\n") !=
              std::string::npos);  // each rank keeps the node's CPUs
      }
      CHECK(s.find("REQUEUE_LIMIT=3") != std::string::npos);
      CHECK(s.find("scontrol requeue \"$SLURM_JOB_ID\"") != std::string::npos);
    }
  }
  CHECK(slurm_time_seconds("1-12:00:00", "t") == 129600);
  CHECK(slurm_time_seconds("30", "t") == 1800);
  CHECK(slurm_time_seconds("02:30", "t") == 150);
  CHECK(slurm_time_seconds("1-2", "t") == 93600);
  CHECK_THROWS_AS(slurm_time_seconds("1h", "t"), SpecError);
}

TEST_CASE("bad_: unsafe #SBATCH values are refused, naming the field", "[slurm]") {
  struct Case {
    const char* name;
    void (*set)(ResourcesSpec&);
    const char* want;
  };
  const std::vector<Case> cases = {
      {"bad_partition_subshell", [](ResourcesSpec& r) { r.partition = "gpu$(touch /tmp/pwned)"; },
       "resources.partition"},
      {"bad_account_backtick", [](ResourcesSpec& r) { r.account = "a`id`"; }, "resources.account"},
      {"bad_qos_quote", [](ResourcesSpec& r) { r.qos = "hi'gh"; }, "resources.qos"},
      {"bad_constraint_newline", [](ResourcesSpec& r) { r.constraint = "a100\nrm -rf /"; }, "contains a newline"},
      {"bad_mem_space", [](ResourcesSpec& r) { r.mem = "64 G"; }, "contains a space"},
      {"bad_time", [](ResourcesSpec& r) { r.time = "1h"; }, "is not a Slurm time"},
      {"bad_extra_newline", [](ResourcesSpec& r) { r.extra_sbatch = {"--exclusive\necho pwned"}; },
       "resources.extra_sbatch"},
      {"bad_extra_not_option", [](ResourcesSpec& r) { r.extra_sbatch = {"$(id)"}; }, "is not an sbatch option"},
      {"bad_extra_hash", [](ResourcesSpec& r) { r.extra_sbatch = {"--comment=a#b"}; }, "resources.extra_sbatch"},
      {"bad_launcher_arg_empty",
       [](ResourcesSpec& r) {
         r.launcher_args = std::vector<std::string>{"--bind-to", ""};
       },
       "resources.launcher_args: an empty argument"},
      {"bad_launcher_arg_newline", [](ResourcesSpec& r) { r.launcher_args = std::vector<std::string>{"lo\nrm -rf /"}; },
       "resources.launcher_args: 'lo\\nrm -rf /' contains a newline"},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      ResourcesSpec r;
      c.set(r);
      CHECK_THROWS_WITH(render_batch_script(r, job(), "spec.yaml"),
                        ContainsSubstring(c.want) && StartsWith("spec.yaml: "));
      CHECK_THROWS_AS(check_resources(r, "spec.yaml"), SpecError);
    }
  }
}

TEST_CASE("good_: paths with $(…), backticks, quotes and newlines reach the run unchanged", "[slurm]") {
  const std::string nasty = "/tmp/store $(touch /tmp/linsweep-pwned) `id` 'q' \"dq\" \\ $HOME\nline2; rm -rf x";
  std::filesystem::remove("/tmp/linsweep-pwned");
  const std::string script = render_batch_script(ResourcesSpec{}, job(nasty), "spec.yaml");
  // Run the script's variable assignments in bash and print STORE back.
  std::string assignments;
  std::istringstream in(script);
  std::string line;
  bool in_store = false;
  while (std::getline(in, line)) {
    if (line.rfind("STORE=", 0) == 0) in_store = true;
    if (in_store) assignments += line + "\n";
    if (in_store && line.rfind("UNITS=", 0) == 0) break;
  }
  std::random_device rd;
  const std::string path = std::filesystem::temp_directory_path() / ("linsweep-quote-" + std::to_string(rd()) + ".sh");
  {
    std::ofstream out(path);
    out << assignments << "printf '%s' \"$STORE\"\n";
  }
  const ProgramOutput r = run_program({"bash", path}, 30);
  std::filesystem::remove(path);
  CHECK(r.status == 0);
  CHECK(r.out == nasty);
  CHECK_FALSE(std::filesystem::exists("/tmp/linsweep-pwned"));
  CHECK(shell_quote("a'b") == "'a'\\''b'");
  // The whole script parses.
  const std::string whole =
      std::filesystem::temp_directory_path() / ("linsweep-script-" + std::to_string(rd()) + ".sh");
  {
    std::ofstream out(whole);
    out << script;
  }
  CHECK(run_program({"bash", "-n", whole}, 30).status == 0);
  std::filesystem::remove(whole);
}

TEST_CASE("good_: a job array reads its task's unit list; launcher arguments reach the launcher as words", "[slurm]") {
  ResourcesSpec r;
  r.nodes = 2, r.tasks_per_node = 2;
  r.launcher_args = std::vector<std::string>{"--mca", "btl_tcp_if_include", "lo", "a b'$(touch /tmp/linsweep-pwned)"};
  BatchJob j = job("/runs/my store");
  j.units_file = "/runs/my store/slurm/ls-s-1-0.";
  j.array_tasks = 4, j.array_limit = 2;
  const std::string script = render_batch_script(r, j, "spec.yaml");
  CHECK(header(script).find("#SBATCH --array=0-3%2\n#SBATCH --output=%x-%A_%a.out\n") != std::string::npos);
  j.array_limit = 0;
  CHECK(header(render_batch_script(r, j, "spec.yaml")).find("#SBATCH --array=0-3\n") != std::string::npos);
  CHECK(array_units_file(j.units_file, 3) == "/runs/my store/slurm/ls-s-1-0.3.units");
  // The assignments as bash sees them in task 2.
  std::string assignments;
  std::istringstream in(script);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("UNITS=", 0) == 0 || line.rfind("LAUNCHER_ARGS=", 0) == 0) assignments += line + "\n";
  std::filesystem::remove("/tmp/linsweep-pwned");
  const ProgramOutput out =
      run_program({"bash", "-c",
                   "set -u; SLURM_ARRAY_TASK_ID=2; " + assignments + "printf '%s|' \"$UNITS\" \"${LAUNCHER_ARGS[@]}\""},
                  30);
  CHECK(out.status == 0);
  CHECK(out.out ==
        "/runs/my store/slurm/ls-s-1-0.2.units|--mca|btl_tcp_if_include|lo|a b'$(touch /tmp/linsweep-pwned)|");
  CHECK_FALSE(std::filesystem::exists("/tmp/linsweep-pwned"));
  // Outside an array the task's list does not exist: the script stops instead of guessing.
  CHECK(run_program({"bash", "-c", "set -u; " + assignments}, 30).status != 0);
  // A plain job keeps its one list and %j.
  const std::string plain = render_batch_script(r, job(), "spec.yaml");
  CHECK(header(plain).find("--array") == std::string::npos);
  CHECK(header(plain).find("#SBATCH --output=%x-%j.out\n") != std::string::npos);
  CHECK(plain.find("\nUNITS=''\n") != std::string::npos);
}

TEST_CASE("scheduler commands: a missing program is reported, scontrol lines are parsed", "[slurm]") {
  const ProgramOutput r = run_program({"linsweep-no-such-program"}, 5);
  CHECK(r.status == 127);
  const auto kv =
      parse_scontrol_line("JobId=12 JobName=ls-x JobState=PENDING Reason=BeginTime Dependency=(null) Restarts=1");
  CHECK(kv.at("JobState") == "PENDING");
  CHECK(kv.at("Restarts") == "1");
  JobInfo j;
  j.state = "PENDING";
  CHECK(j.alive());
  j.reason = "DependencyNeverSatisfied";
  CHECK_FALSE(j.alive());
  j = JobInfo{};
  j.state = "CANCELLED";
  CHECK_FALSE(j.alive());
}
