// `noop`: units that do nothing and commit an empty result; they measure what the coordinator,
// the messages and the store cost per unit (bench/dispatch_throughput.sh), without a model.
#include "experiments/experiment.hpp"
#include "experiments/unit_data.hpp"

namespace linsweep {
namespace {

UnitResult run_noop(const ExperimentInput& in) {
  UnitResult out = unit_result(in);
  return out;
}

const ExperimentRegistrar kNoop{"noop", run_noop, /*needs_model=*/false};

}  // namespace
}  // namespace linsweep
