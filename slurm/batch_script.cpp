// Batch scripts: validated #SBATCH values, shell-quoted paths, signal forwarding and requeue.
#include "slurm/batch_script.hpp"

#include <fmt/format.h>

#include <cctype>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "common/shell_word.hpp"

namespace linsweep {
namespace {

bool safe_sbatch_char(unsigned char c) {
  if (std::isalnum(c)) return true;
  for (char ok : std::string_view("_.,:+=@%&|!*()[]/-"))
    if (c == static_cast<unsigned char>(ok)) return true;
  return false;
}

std::string describe(unsigned char c) {
  if (c == '\n') return "a newline";
  if (c == ' ') return "a space";
  if (c < 0x20 || c == 0x7F) return fmt::format("control character 0x{:02x}", c);
  return fmt::format("'{}'", static_cast<char>(c));
}

void check_value(const std::string& v, const std::string& field, const std::string& spec_file) {
  for (unsigned char c : v)
    if (!safe_sbatch_char(c))
      throw SpecError(spec_file + ": resources." + field + ": '" + printable(v.substr(0, 40)) + "' contains " +
                      describe(c) + " (allowed: letters, digits and _.,:+=@%&|!*()[]/-)");
}

}  // namespace

std::string array_units_file(const std::string& prefix, std::int64_t task) {
  return prefix + std::to_string(task) + ".units";
}

std::vector<std::string> default_launcher_args(const std::string& launcher) {
  if (launcher == "mpirun") return {"--bind-to", "none"};
  return {};
}

std::int64_t slurm_time_seconds(const std::string& time, const std::string& field) {
  auto bad = [&]() -> std::int64_t {
    throw SpecError(field + ": '" + printable(time) +
                    "' is not a Slurm time (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)");
  };
  if (time.empty() || time.size() > 20) bad();
  std::int64_t days = 0;
  std::string rest = time;
  const auto dash = time.find('-');
  std::vector<std::int64_t> parts;
  auto parse = [&](const std::string& s) {
    std::int64_t v = 0;
    if (s.empty() || s.size() > 6) bad();
    for (char c : s) {
      if (!std::isdigit(static_cast<unsigned char>(c))) bad();
      v = v * 10 + (c - '0');
    }
    return v;
  };
  if (dash != std::string::npos) {
    days = parse(time.substr(0, dash));
    rest = time.substr(dash + 1);
  }
  std::size_t start = 0;
  while (true) {
    const auto colon = rest.find(':', start);
    parts.push_back(parse(rest.substr(start, colon == std::string::npos ? std::string::npos : colon - start)));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (parts.size() > 3) bad();
  if (dash != std::string::npos) {  // D-HH[:MM[:SS]]
    std::int64_t s = days * 86400 + parts[0] * 3600;
    if (parts.size() > 1) s += parts[1] * 60;
    if (parts.size() > 2) s += parts[2];
    return s;
  }
  if (parts.size() == 1) return parts[0] * 60;             // MM
  if (parts.size() == 2) return parts[0] * 60 + parts[1];  // MM:SS
  return parts[0] * 3600 + parts[1] * 60 + parts[2];       // HH:MM:SS
}

void check_resources(const ResourcesSpec& r, const std::string& spec_file) {
  for (const auto& [field, value] : {std::pair<const char*, const std::string*>{"partition", &r.partition},
                                     {"account", &r.account},
                                     {"qos", &r.qos},
                                     {"constraint", &r.constraint},
                                     {"mem", &r.mem},
                                     {"time", &r.time}})
    check_value(*value, field, spec_file);
  slurm_time_seconds(r.time, spec_file + ": resources.time");
  for (const auto& line : r.extra_sbatch) {
    if (line.rfind("--", 0) != 0 || line.size() < 3)
      throw SpecError(spec_file + ": resources.extra_sbatch: '" + line.substr(0, 40) +
                      "' is not an sbatch option (--name[=value])");
    for (unsigned char c : line)
      if (c < 0x20 || c == 0x7F || c == '#')
        throw SpecError(spec_file + ": resources.extra_sbatch: '" + line.substr(0, 40) + "' contains " + describe(c));
  }
  if (r.launcher_args)
    for (const auto& arg : *r.launcher_args) {
      if (arg.empty()) throw SpecError(spec_file + ": resources.launcher_args: an empty argument");
      for (unsigned char c : arg)
        if (c < 0x20 || c == 0x7F)
          throw SpecError(spec_file + ": resources.launcher_args: '" + printable(arg.substr(0, 40)) + "' contains " +
                          describe(c));
    }
}

std::string render_batch_script(const ResourcesSpec& r, const BatchJob& job, const std::string& spec_file) {
  check_resources(r, spec_file);
  check_value(job.name, "job name", spec_file);
  const std::int64_t time_limit = slurm_time_seconds(r.time, spec_file + ": resources.time");
  if (time_limit > 0 && time_limit <= job.grace_seconds)
    throw SpecError(spec_file + ": resources.time: " + r.time + " is not longer than runtime.grace_seconds (" +
                    std::to_string(job.grace_seconds) + " s): no unit could ever start");
  std::string s = "#!/bin/bash\n";
  auto sb = [&](const std::string& opt) { s += "#SBATCH " + opt + "\n"; };
  sb("--job-name=" + job.name);
  sb(fmt::format("--nodes={}", r.nodes));
  sb(fmt::format("--ntasks-per-node={}", r.tasks_per_node));
  if (r.gpus_per_node > 0) sb(fmt::format("--gres=gpu:{}", r.gpus_per_node));
  if (r.cpus_per_task > 0) sb(fmt::format("--cpus-per-task={}", r.cpus_per_task));
  if (!r.mem.empty()) sb("--mem=" + r.mem);
  sb("--time=" + r.time);
  if (!r.partition.empty()) sb("--partition=" + r.partition);
  if (!r.account.empty()) sb("--account=" + r.account);
  if (!r.qos.empty()) sb("--qos=" + r.qos);
  if (!r.constraint.empty()) sb("--constraint=" + r.constraint);
  sb(fmt::format("--signal=B:USR1@{}", job.grace_seconds));
  sb("--requeue");
  sb("--open-mode=append");
  if (job.array_tasks > 0)
    sb(fmt::format("--array=0-{}", job.array_tasks - 1) +
       (job.array_limit > 0 ? fmt::format("%{}", job.array_limit) : ""));
  // sbatch does not expand variables in #SBATCH lines, only its own %x (name), %j (id), %A and
  // %a (array id and task); a log directory with spaces cannot be written there, so the
  // script's output goes to the submission's working directory, which `linsweep submit` sets to
  // the log directory.
  sb(job.array_tasks > 0 ? "--output=%x-%A_%a.out" : "--output=%x-%j.out");
  for (const auto& line : r.extra_sbatch) sb(line);
  // --time=0 means no limit: then there is no deadline to keep.
  const std::string deadline =
      time_limit == 0
          ? std::string("# No time limit (--time=0): no deadline for the coordinator.")
          : fmt::format(
                "# The coordinator does not start a unit that would run past the time limit (minus the grace).\n"
                "export LINSWEEP_DEADLINE=$(( $(date +%s) + {} - {} ))",
                time_limit, job.grace_seconds);
  const std::string launcher = (r.launcher == "srun" ? "srun --mpi=pmix" : "mpirun -n \"${SLURM_NTASKS:-1}\"") +
                               std::string(" \"${LAUNCHER_ARGS[@]}\"");
  std::string launcher_args;
  for (const auto& arg : r.launcher_args.value_or(default_launcher_args(r.launcher)))
    launcher_args += (launcher_args.empty() ? "" : " ") + shell_quote(arg);
  // An array task reads the unit list of its own index.
  const std::string units = job.array_tasks > 0 ? shell_quote(job.units_file) + "\"${SLURM_ARRAY_TASK_ID}.units\""
                                                : shell_quote(job.units_file);
  std::string overrides;
  for (const auto& o : job.overrides) overrides += (overrides.empty() ? "" : " ") + shell_quote(o);
  s += fmt::format(R"SH(
# Written by `linsweep submit`. Paths are shell-quoted; the #SBATCH values above were checked.
set -u
LINSWEEP={}
SPEC={}
# Spec overrides given to `linsweep submit` (docs/spec.md, "Overrides").
OVERRIDES=({})
STORE={}
UNITS={}
REQUEUE_LIMIT={}
# resources.launcher_args (docs/slurm.md: what OpenMPI needs across nodes).
LAUNCHER_ARGS=({})
{}
echo "linsweep job ${{SLURM_JOB_ID:-?}}${{SLURM_ARRAY_JOB_ID:+ (array $SLURM_ARRAY_JOB_ID task $SLURM_ARRAY_TASK_ID)}} (restart ${{SLURM_RESTART_COUNT:-0}}) on $(hostname) (nodes ${{SLURM_JOB_NODELIST:-?}}) at $(date -u +%FT%TZ)"

child=0
got_signal=0
forward() {{ got_signal=1; if [ "$child" -ne 0 ]; then kill -USR1 "$child" 2>/dev/null || true; fi; }}
# Slurm's warning (--signal=B:USR1) reaches only this shell: pass it on to the run, which stops
# dispatching, lets running units finish and exits 3.
trap forward USR1 TERM
if [ -n "$UNITS" ]; then
  {} "$LINSWEEP" run "$SPEC" "${{OVERRIDES[@]}}" --store "$STORE" --units "$UNITS" &
else
  {} "$LINSWEEP" run "$SPEC" "${{OVERRIDES[@]}}" --store "$STORE" &
fi
child=$!
# A warning that came before the run existed is passed on now.
if [ "$got_signal" = 1 ]; then kill -USR1 "$child" 2>/dev/null || true; fi
wait "$child"; rc=$?
# A trapped signal interrupts `wait` (status > 128); wait again for the run's own status, which
# bash keeps for a child that has already exited.
while [ "$got_signal" = 1 ] && [ "$rc" -gt 128 ]; do
  got_signal=0; wait "$child"; rc=$?
done
if [ "$rc" -eq 3 ]; then
  if [ "${{SLURM_RESTART_COUNT:-0}}" -lt "$REQUEUE_LIMIT" ]; then
    echo "linsweep: interrupted and resumable; requeueing job $SLURM_JOB_ID (restart $(( ${{SLURM_RESTART_COUNT:-0}} + 1 )) of $REQUEUE_LIMIT)"
    scontrol requeue "$SLURM_JOB_ID"
  else
    echo "linsweep: interrupted; requeue limit $REQUEUE_LIMIT reached: run \`linsweep resume $STORE --submit\`"
  fi
fi
exit "$rc"
)SH",
                   shell_quote(job.linsweep), shell_quote(job.spec), overrides, shell_quote(job.store), units,
                   r.requeue_limit, launcher_args, deadline, launcher, launcher);
  return s;
}

}  // namespace linsweep
