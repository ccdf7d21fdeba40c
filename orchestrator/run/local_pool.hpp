// One process as the run loop's only worker group: units run here, one at a time.
#pragma once

#include <optional>

#include "orchestrator/run/unit_attempt.hpp"
#include "orchestrator/run/unit_executor.hpp"
#include "orchestrator/run/worker_pool.hpp"

namespace linsweep {

struct Plan;
struct SweepSpec;

// A unit assigned by the run loop runs, synchronously, inside the next call to next(); a signal
// therefore waits for the running unit (long units check the stop request and checkpoint).
// Units stage their results in `store` like remote workers, so commits take one path.
class LocalPool final : public WorkerPool {
 public:
  LocalPool(const SweepSpec& spec, const Plan& plan, const Store& store);

  int groups() const override { return 1; }
  int ranks_per_group() const override { return 1; }
  int leader_rank(int) const override { return 0; }
  void assign(int group, std::size_t index) override;
  std::optional<PoolEvent> next(const std::function<bool()>& give_up) override;
  void stop(int) override {}
  [[noreturn]] void abort(int code) override;

 private:
  const Plan& plan_;
  const Store& store_;
  UnitExecutor executor_;
  AttemptContext context_;
  bool announced_ = false;
  std::optional<std::size_t> assigned_;
};

}  // namespace linsweep
