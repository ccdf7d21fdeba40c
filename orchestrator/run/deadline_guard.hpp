// Time-limit awareness for a sweep inside a Slurm job: start no unit that would not finish.
#pragma once

#include <map>
#include <string>
#include <utility>

namespace linsweep {

class Store;
struct Plan;

// LINSWEEP_DEADLINE (unix seconds, exported by the Slurm batch script as job start + time
// limit − grace) is the time by which no unit may still run. A unit is started only when now +
// the mean duration of its kind (committed units in the journal, plus those committed in this
// run) is before it; a kind with no history is started. Without the variable every unit fits.
// Throws InputError when the variable is not a unix time. Not thread safe.
class DeadlineGuard {
 public:
  DeadlineGuard(const Store& store, const Plan& plan);
  bool active() const noexcept { return deadline_ > 0; }
  bool fits(const std::string& kind) const;
  void record(const std::string& kind, double seconds);
  double deadline() const noexcept { return deadline_; }

 private:
  double deadline_ = 0;
  std::map<std::string, std::pair<double, double>> sums_;  // kind -> (seconds, count)
};

}  // namespace linsweep
