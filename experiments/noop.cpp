// `noop`: units that do nothing and commit an empty result; they measure what the coordinator,
// the messages and the store cost per unit (bench/dispatch_throughput.sh), without a model.
#include "experiments/experiment.hpp"

namespace linsweep {
namespace {

UnitResult run_noop(const ExperimentInput& in) {
  UnitResult out;
  out.unit_id = in.unit_id;
  out.kind = in.kind;
  out.params = in.provenance;
  return out;
}

const ExperimentRegistrar kNoop{"noop", run_noop, /*needs_model=*/false};

}  // namespace
}  // namespace linsweep
