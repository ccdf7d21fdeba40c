// Float64 statistics accumulation (NormalEquationSums::add: convert, column sums, Xᵀ·[X Y],
// Σ‖y‖²) in GFLOP/s next to a plain at::mm of the same shape on float64 inputs already in
// memory. Target: accumulation >= 70% of the plain product.
// Usage: bench_stats_accumulation [d] [rows] [repeats]   (default 1024 4096 5)
#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "engine/runtime.hpp"
#include "experiments/numerics/normal_equations.hpp"

namespace {

template <class F>
double best_seconds(int repeats, F&& f) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t d = argc > 1 ? std::atoll(argv[1]) : 1024;
  const std::int64_t rows = argc > 2 ? std::atoll(argv[2]) : 4096;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
  linsweep::configure_threads(0);
  at::manual_seed(0);
  const at::Tensor x = at::randn({rows, d}), y = at::randn({rows, d});  // float32, as a hook sees them
  const at::Tensor xd = x.to(at::kDouble), zd = at::cat({x, y}, 1).to(at::kDouble);
  const double flops = 2.0 * static_cast<double>(rows) * static_cast<double>(d) * static_cast<double>(2 * d);
  at::Tensor out = at::zeros({d, 2 * d}, at::kDouble);
  const double mm = best_seconds(repeats, [&] { at::mm_out(out, xd.t(), zd); });
  linsweep::NormalEquationSums sums(d, at::TensorOptions().dtype(at::kDouble));
  const double acc = best_seconds(repeats, [&] { sums.add(x, y); });
  std::printf("d=%lld rows=%lld threads=%d\n", static_cast<long long>(d), static_cast<long long>(rows),
              at::get_num_threads());
  std::printf("plain at::mm [%lld x %lld] x [%lld x %lld] float64: %.1f GFLOP/s (%.3f s)\n", static_cast<long long>(d),
              static_cast<long long>(rows), static_cast<long long>(rows), static_cast<long long>(2 * d),
              flops / mm / 1e9, mm);
  std::printf("statistics accumulation (float32 in):          %.1f GFLOP/s (%.3f s)\n", flops / acc / 1e9, acc);
  std::printf("accumulation / plain mm: %.0f%% (target >= 70%%)\n", 100.0 * mm / acc);
  return 0;
}
