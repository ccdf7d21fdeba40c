// The memory a sweep needs per rank, planned from its models' configs before anything runs
// (docs/spec.md, "Memory"): for every model and unit kind, the largest of its units' needs as
// the kind registers them (experiments/framework/memory_need.hpp), plus this process's own
// footprint (LibTorch and the libraries every rank loads); the limit a rank has; and the stages
// a model is split into (runtime.stages, or the fewest that fit with `auto`).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/framework/memory_need.hpp"
#include "orchestrator/plan/plan.hpp"
#include "orchestrator/spec/spec.hpp"

namespace linsweep {

struct MemoryRow {
  std::string model, kind;
  std::int64_t units = 0;
  MemoryNeed need;  // the largest unit's, by total
  // With stages, why one of its units needs a whole model although the kind runs split
  // (UnitKind::whole_model_reason); empty otherwise.
  std::string whole_model;
};

struct MemoryPlan {
  double process = 0;        // bytes: this process's own footprint, which every rank also holds
  double limit = 0;          // bytes a rank may hold
  std::string limit_source;  // "runtime.memory_per_rank", "the node's memory / 2 ranks", ...
  std::int64_t stages = 1;   // runtime.stages, resolved
  std::vector<MemoryRow> rows;

  // The largest need of any row, with the process's footprint.
  double peak() const;
  nlohmann::json to_json() const;
  // A table for `plan`: one line per model and kind, then the peak against the limit.
  std::string text() const;
};

// Plans `plan`'s memory. With runtime.stages `auto`, stages is the fewest (1 to the largest
// model's layer count) whose peak fits the limit, raised to the next number of stages that
// divides runtime.ranks_per_group (the fewest that fit when none does, or that count when none
// fits). Throws ModelError when a model's config.json cannot be read.
MemoryPlan plan_memory(const SweepSpec& spec, const Plan& plan);

// The estimate of one unit of `plan` (bytes, the process's footprint included): for the test
// that holds the estimates to what units measured.
double unit_memory_estimate(const SweepSpec& spec, const Unit& unit, const MemoryPlan& memory);

// Throws SpecError (exit 2) "<spec>: runtime.memory_per_rank: ..." naming the largest need, its
// parts, the limit and where it came from, when the plan's peak exceeds the limit; and
// "<spec>: runtime.stages: ..." when a split model would run a kind or a unit that needs a whole
// one, has fewer layers than stages, or the stages do not divide runtime.ranks_per_group.
void check_memory(const std::string& spec_path, const SweepSpec& spec, const MemoryPlan& memory);

}  // namespace linsweep
