// Planning a sweep's memory per rank before anything runs.
#include "orchestrator/plan/memory_plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "common/byte_size.hpp"
#include "common/errors.hpp"
#include "common/launch_env.hpp"
#include "common/peak_memory.hpp"
#include "engine/device_memory.hpp"
#include "engine/model/architecture_registry.hpp"
#include "engine/model/model_config.hpp"
#include "engine/runtime.hpp"
#include "experiments/framework/experiment.hpp"

namespace linsweep {
namespace {

double dtype_bytes(const std::string& dtype) { return dtype == "float32" ? 4.0 : 2.0; }

ModelSize shape_of(const ModelSpec& m, const std::string& runtime_dtype) {
  const ModelConfig c = read_model_config(m.path);
  const Architecture& a = ArchitectureRegistry::instance().get(c.architecture, m.path);
  return ModelSize{.parameters = a.count_parameters(c),
                   .outer_parameters = c.vocab_size * c.d_model * (c.tied_head ? 1 : 2),
                   .d_model = c.d_model,
                   .d_ff = c.d_ff,
                   .layers = c.n_layers,
                   .vocab = c.vocab_size,
                   .heads = c.n_heads,
                   .weight_bytes = dtype_bytes(m.dtype.value_or(runtime_dtype))};
}

// The limit a rank has, and where it comes from.
std::pair<double, std::string> rank_limit(const SweepSpec& spec) {
  if (!spec.runtime.memory_per_rank.empty())
    return {parse_byte_size(spec.runtime.memory_per_rank).value_or(0), "runtime.memory_per_rank"};
  std::string device = "cpu";
  try {
    device = resolve_device(spec.runtime.device);
  } catch (const Error&) {
    // a device this machine lacks: plan for the node's memory, as `submit` from a login node does
  }
  if (device != "cpu") return {device_free_bytes(device), device + "'s free memory"};
  // The ranks that hold models: rank 0 coordinates and holds none. Launchers place ranks
  // 0..k−1 on the first node (by slot, or Slurm's block distribution), so a rank whose world and
  // local ranks are equal shares its node with the coordinator; planned from a login node
  // (`submit`), a job of one node does.
  const bool launched = local_size() > 1;
  const int here = launched ? local_size() : static_cast<int>(std::max<std::int64_t>(1, spec.resources.tasks_per_node));
  const bool coordinator_here = launched ? world_rank() == local_rank() : spec.resources.nodes == 1;
  const int ranks = std::max(1, here - (coordinator_here && here > 1 ? 1 : 0));
  const double node = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  return {node / ranks, fmt::format("the node's memory / {} worker rank{}", ranks, ranks == 1 ? "" : "s")};
}

MemoryQuery query_of(const SweepSpec& spec, const Unit& u, const ModelSize& shape, std::int64_t stages) {
  MemoryQuery q{u.params, shape, spec.runtime.batch, stages, spec.context, {}};
  for (const auto& [name, split] : spec.splits) q.split_tokens[name] = split.tokens;
  return q;
}

std::vector<MemoryRow> rows_for(const SweepSpec& spec, const Plan& plan, const std::map<std::string, ModelSize>& shapes,
                                std::int64_t stages) {
  std::map<std::pair<std::string, std::string>, MemoryRow> rows;
  for (const Unit& u : plan.units) {
    const UnitKind& kind = ExperimentRegistry::instance().kind(u.kind);
    const MemoryNeed need = kind.need(query_of(spec, u, shapes.at(u.model), stages));
    MemoryRow& r = rows[{u.model, u.kind}];
    r.model = u.model, r.kind = u.kind;
    if (stages > 1 && kind.whole_model_reason && r.whole_model.empty())
      r.whole_model = kind.whole_model_reason(u.params);
    if (++r.units == 1 || need.total() > r.need.total()) r.need = need;
  }
  std::vector<MemoryRow> out;
  for (auto& [key, r] : rows) out.push_back(std::move(r));
  return out;
}

double peak_of(const std::vector<MemoryRow>& rows) {
  double peak = 0;
  for (const auto& r : rows) peak = std::max(peak, r.need.total());
  return peak;
}

}  // namespace

double MemoryPlan::peak() const { return process + peak_of(rows); }

MemoryPlan plan_memory(const SweepSpec& spec, const Plan& plan) {
  std::map<std::string, ModelSize> shapes;
  std::int64_t most_layers = 1;
  for (const auto& m : spec.models) {
    shapes[m.name] = shape_of(m, spec.runtime.dtype);
    most_layers = std::max(most_layers, shapes[m.name].layers);
  }
  MemoryPlan mp;
  mp.process = peak_resident_mib() * 1024.0 * 1024.0;
  std::tie(mp.limit, mp.limit_source) = rank_limit(spec);
  if (spec.runtime.stages == "auto") {
    // The fewest stages that fit, raised to the next that divides the worker group (a group
    // holds whole copies of the model); when none does, the fewest that fit, which
    // check_memory refuses with what the group would need.
    std::int64_t fit = most_layers;
    for (std::int64_t s = 1; s <= most_layers; ++s)
      if (mp.process + peak_of(rows_for(spec, plan, shapes, s)) <= mp.limit) {
        fit = s;
        break;
      }
    mp.stages = fit;
    for (std::int64_t s = fit; s <= spec.runtime.ranks_per_group; ++s)
      if (spec.runtime.ranks_per_group % s == 0) {
        mp.stages = s;
        break;
      }
  } else {
    mp.stages = std::stoll(spec.runtime.stages);
  }
  mp.rows = rows_for(spec, plan, shapes, mp.stages);
  return mp;
}

double unit_memory_estimate(const SweepSpec& spec, const Unit& unit, const MemoryPlan& memory) {
  const ModelSize shape = shape_of(*spec.model(unit.model), spec.runtime.dtype);
  return memory.process +
         ExperimentRegistry::instance().kind(unit.kind).need(query_of(spec, unit, shape, memory.stages)).total();
}

namespace {
std::vector<std::string> split_kinds() {
  std::vector<std::string> kinds;
  for (const auto& name : ExperimentRegistry::instance().kind_names())
    if (ExperimentRegistry::instance().kind(name).runs_split && name != "noop") kinds.push_back(name);
  return kinds;
}

// The kinds and units of the plan that need a whole model, refused with their reasons.
void check_split_kinds(const std::string& spec_path, const MemoryPlan& memory) {
  std::vector<std::string> whole, reasons;
  for (const auto& r : memory.rows) {
    if (ExperimentRegistry::instance().kind(r.kind).runs_split) continue;
    if (std::find(whole.begin(), whole.end(), r.kind) == whole.end()) whole.push_back(r.kind);
    if (!r.whole_model.empty() && std::find(reasons.begin(), reasons.end(), r.whole_model) == reasons.end())
      reasons.push_back(r.whole_model);
  }
  if (!whole.empty())
    throw SpecError(fmt::format(
        "{}: runtime.stages: {} stages split each model by layers, and units of kind {} run only on a whole "
        "model{}{} (a split model runs {}; docs/spec.md, \"Memory\")",
        spec_path, memory.stages, fmt::join(whole, ", "), reasons.empty() ? "" : ": ", fmt::join(reasons, "; "),
        fmt::join(split_kinds(), ", ")));
  for (const auto& r : memory.rows)
    if (!r.whole_model.empty())
      throw SpecError(
          fmt::format("{}: runtime.stages: {} stages split each model by layers, and {} units of {} "
                      "need a whole model: {} (docs/spec.md, \"Memory\")",
                      spec_path, memory.stages, r.kind, r.model, r.whole_model));
}
}  // namespace

void check_memory(const std::string& spec_path, const SweepSpec& spec, const MemoryPlan& memory) {
  const bool automatic = spec.runtime.stages == "auto";
  if (memory.peak() > memory.limit) {
    const MemoryRow* worst = &memory.rows.front();
    for (const auto& r : memory.rows)
      if (r.need.total() > worst->need.total()) worst = &r;
    const MemoryNeed& n = worst->need;
    throw SpecError(fmt::format(
        "{}: runtime.memory_per_rank: the plan needs {} per rank ({} units of {}: weights {}, activations {}, "
        "statistics {}, optimizer {}, this process {}; {}{} stage{}), {} allowed ({})",
        spec_path, byte_size_text(memory.peak()), worst->kind, worst->model, byte_size_text(n.weights),
        byte_size_text(n.activations), byte_size_text(n.statistics), byte_size_text(n.optimizer),
        byte_size_text(memory.process), automatic ? "even with " : "", memory.stages, memory.stages == 1 ? "" : "s",
        byte_size_text(memory.limit), memory.limit_source));
  }
  if (memory.stages > 1) check_split_kinds(spec_path, memory);
  for (const auto& m : spec.models)
    if (memory.stages > m.layers)
      throw SpecError(
          fmt::format("{}: runtime.stages: {} stages split model {}, which has {} layer{} (a stage "
                      "holds at least one layer)",
                      spec_path, memory.stages, m.name, m.layers, m.layers == 1 ? "" : "s"));
  if (spec.runtime.ranks_per_group % memory.stages == 0) return;
  if (automatic)
    throw SpecError(fmt::format(
        "{}: runtime.stages: auto needs {} stages to fit {} a rank; runtime.ranks_per_group "
        "{} holds no whole copy of the model over them (make it a multiple of {})",
        spec_path, memory.stages, byte_size_text(memory.limit), spec.runtime.ranks_per_group, memory.stages));
  throw SpecError(
      fmt::format("{}: runtime.stages: {} stages do not divide runtime.ranks_per_group {} (a worker group "
                  "holds whole copies of the model, each over `stages` consecutive ranks)",
                  spec_path, memory.stages, spec.runtime.ranks_per_group));
}

nlohmann::json MemoryPlan::to_json() const {
  nlohmann::json rows_json = nlohmann::json::array();
  for (const auto& r : rows)
    rows_json.push_back({{"model", r.model},
                         {"kind", r.kind},
                         {"units", r.units},
                         {"weights", r.need.weights},
                         {"activations", r.need.activations},
                         {"statistics", r.need.statistics},
                         {"optimizer", r.need.optimizer},
                         {"total", process + r.need.total()}});
  return {{"process", process}, {"limit", limit}, {"limit_source", limit_source},
          {"stages", stages},   {"peak", peak()}, {"rows", rows_json}};
}

std::string MemoryPlan::text() const {
  std::string out = fmt::format(
      "memory per rank (estimated; {} stage{}):\n  {:<16} {:<14} {:>5} {:>10} {:>11} {:>10} {:>10} {:>10}\n", stages,
      stages == 1 ? "" : "s", "model", "kind", "units", "weights", "activations", "statistics", "optimizer", "total");
  for (const auto& r : rows)
    out += fmt::format("  {:<16} {:<14} {:>5} {:>10} {:>11} {:>10} {:>10} {:>10}\n", r.model, r.kind, r.units,
                       byte_size_text(r.need.weights), byte_size_text(r.need.activations),
                       byte_size_text(r.need.statistics), byte_size_text(r.need.optimizer),
                       byte_size_text(process + r.need.total()));
  return out + fmt::format("  peak {} (this process {} included), {} allowed ({})\n", byte_size_text(peak()),
                           byte_size_text(process), byte_size_text(limit), limit_source);
}

}  // namespace linsweep
