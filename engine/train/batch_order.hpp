// Which training windows each optimizer step reads: a pure function of (seed, step).
#pragma once

#include <cstdint>
#include <vector>

namespace linsweep {

// Epochs of seeded permutations of `count` windows, read `batch` at a time: step s reads
// positions [s·batch, (s+1)·batch) of the concatenated epochs. Because the order is a function
// of (seed, step) alone, a run resumed at step s reads exactly what an uninterrupted run
// would, and the checkpoint needs no data position beyond the step. The permutation is a
// Fisher–Yates shuffle driven by splitmix64, the same on every platform and standard library.
// Caches the current epoch; not thread safe.
class BatchOrder {
 public:
  // Throws InputError when count or batch < 1.
  BatchOrder(std::int64_t count, std::int64_t batch, std::uint64_t seed);
  // Window indices of step `step` (batch of them; may span two epochs).
  std::vector<std::int64_t> windows(std::int64_t step);

 private:
  const std::vector<std::int64_t>& epoch(std::int64_t e);

  std::int64_t count_, batch_;
  std::uint64_t seed_;
  std::int64_t cached_epoch_ = -1;
  std::vector<std::int64_t> order_;
};

// Learning rate at `step` (0-based) of `total`: linear warmup over `warmup` steps, then
// constant or a cosine decay to `min_ratio`·lr at the last step.
enum class LrSchedule { kConstant, kCosine };
double learning_rate(LrSchedule schedule, double lr, std::int64_t step, std::int64_t total, std::int64_t warmup,
                     double min_ratio = 0.1);

}  // namespace linsweep
