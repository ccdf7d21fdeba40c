// The single-process worker group.
#include "orchestrator/run/local_pool.hpp"

#include <stdexcept>

#include "common/errors.hpp"
#include "common/signal_recorder.hpp"
#include "orchestrator/plan/plan.hpp"

namespace linsweep {

LocalPool::LocalPool(const SweepSpec& spec, const Plan& plan, const Store& store)
    : plan_(plan), store_(store), executor_(spec) {
  executor_.set_stop_check([] { return SignalRecorder::received() != 0; });
  context_.host = this_host();
}

void LocalPool::assign(int, std::size_t index) { assigned_ = index; }

std::optional<PoolEvent> LocalPool::next(const std::function<bool()>&) {
  PoolEvent event;
  event.host = context_.host;
  if (!announced_) {
    announced_ = true;
    return event;
  }
  if (!assigned_) throw std::logic_error("LocalPool::next: no unit is assigned");
  const std::size_t i = *assigned_;
  assigned_.reset();
  event.report = attempt_unit(executor_, plan_.units[i], i, store_, context_).report;
  return event;
}

// next() runs each unit to its end and never gives up, so the grace period cannot end with a
// unit running here; should it, the run is interrupted (exit 3) like any other.
void LocalPool::abort(int) { throw InterruptedError("the grace period ended with a unit running"); }

}  // namespace linsweep
