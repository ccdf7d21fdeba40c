// `noop`: units that do nothing and commit an empty result; they measure what the coordinator,
// the messages and the store cost per unit (bench/dispatch_throughput.sh), without a model.
#include "experiments/framework/experiment.hpp"
#include "experiments/framework/unit_data.hpp"

namespace linsweep {
namespace {

struct NoopParams {
  std::int64_t units = 1;
};

const ParamSchema<NoopParams>& noop_schema() {
  static const ParamSchema<NoopParams> s =
      ParamSchema<NoopParams>().add("units", &NoopParams::units, at_least(1), "empty units per model and corpus");
  return s;
}

// `units` empty units per model and corpus, independent of their contents.
void expand_noop(const NoopParams& p, PlanBuilder& b) {
  for (const auto& m : b.sweep().models)
    for (const auto& c : b.sweep().corpora)
      for (std::int64_t i = 0; i < p.units; ++i)
        b.add(Unit{.kind = "noop", .model = m.name, .corpus = c.name, .params = {{"index", i}}},
              "/" + std::to_string(i));
}

const ExperimentRegistrar kNoop{make_experiment<NoopParams>(
    "noop", "empty units, for measuring the dispatch (diagnostic)", 0, noop_schema(), expand_noop)};

UnitResult run_noop(const ExperimentInput& in) { return unit_result(in); }

const UnitKindRegistrar kNoopKind{"noop", run_noop, /*needs_model=*/false, {}, /*runs_split=*/true};

}  // namespace
}  // namespace linsweep
