// Seeded epoch permutations and learning-rate schedules for training loops.
#include "engine/train/batch_order.hpp"

#include <cmath>
#include <numbers>

#include "common/errors.hpp"

namespace linsweep {
namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

BatchOrder::BatchOrder(std::int64_t count, std::int64_t batch, std::uint64_t seed)
    : count_(count), batch_(batch), seed_(seed) {
  if (count < 1) throw InputError("training split holds no window");
  if (batch < 1) throw InputError("training batch must be at least 1");
}

const std::vector<std::int64_t>& BatchOrder::epoch(std::int64_t e) {
  if (e == cached_epoch_) return order_;
  order_.resize(static_cast<std::size_t>(count_));
  for (std::int64_t i = 0; i < count_; ++i) order_[static_cast<std::size_t>(i)] = i;
  std::uint64_t state = seed_ * 0x100000001B3ull + static_cast<std::uint64_t>(e);
  for (std::int64_t i = count_ - 1; i > 0; --i) {
    // Multiply-shift maps 64 random bits onto [0, i]; the bias is below 2^-40 for any split.
    const auto j = static_cast<std::int64_t>(
        (static_cast<unsigned __int128>(splitmix64(state)) * static_cast<std::uint64_t>(i + 1)) >> 64);
    std::swap(order_[static_cast<std::size_t>(i)], order_[static_cast<std::size_t>(j)]);
  }
  cached_epoch_ = e;
  return order_;
}

std::vector<std::int64_t> BatchOrder::windows(std::int64_t step) {
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(batch_));
  for (std::int64_t k = 0; k < batch_; ++k) {
    const std::int64_t pos = step * batch_ + k;
    out.push_back(epoch(pos / count_)[static_cast<std::size_t>(pos % count_)]);
  }
  return out;
}

double learning_rate(LrSchedule schedule, double lr, std::int64_t step, std::int64_t total, std::int64_t warmup,
                     double min_ratio) {
  if (warmup > 0 && step < warmup) return lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
  if (schedule == LrSchedule::kConstant || total <= warmup + 1) return lr;
  const double progress = static_cast<double>(step - warmup) / static_cast<double>(total - warmup - 1);
  return lr * (min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + std::cos(std::numbers::pi * std::min(1.0, progress))));
}

}  // namespace linsweep
