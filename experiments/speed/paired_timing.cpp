// Paired timing with adaptive repeats; Student's t interval on log ratios.
#include "experiments/speed/paired_timing.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <fstream>
#include <vector>

namespace linsweep {
namespace {

using Clock = std::chrono::steady_clock;

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return s(u.ru_utime) + s(u.ru_stime);
}

}  // namespace

double t_quantile_975(std::int64_t df) {
  static constexpr std::array<double, 30> kTable = {
      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
      2.120,  2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return INFINITY;
  if (df <= 30) return kTable[static_cast<std::size_t>(df - 1)];
  return 1.95996 + 2.3722 / static_cast<double>(df);  // z + (z³ + z)/(4·df)
}

PairedSaving paired_saving(const std::vector<double>& plain_s, const std::vector<double>& routed_s) {
  PairedSaving out;
  const std::size_t n = std::min(plain_s.size(), routed_s.size());
  out.pairs = static_cast<std::int64_t>(n);
  if (n == 0) return out;
  std::vector<double> logs;
  double mean = 0;
  for (std::size_t i = 0; i < n; ++i) {
    logs.push_back(std::log(routed_s[i] / plain_s[i]));
    mean += logs.back() / static_cast<double>(n);
  }
  double var = 0;
  for (const double v : logs) var += (v - mean) * (v - mean) / (n > 1 ? static_cast<double>(n - 1) : 1.0);
  const double half =
      n > 1 ? t_quantile_975(static_cast<std::int64_t>(n) - 1) * std::sqrt(var / static_cast<double>(n)) : INFINITY;
  out.saving_pct = 100.0 * (1.0 - std::exp(mean));
  out.low_pct = 100.0 * (1.0 - std::exp(mean + half));
  out.high_pct = 100.0 * (1.0 - std::exp(mean - half));
  return out;
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double one = -1;
  if (!(in >> one)) return -1;
  return one;
}

PairedTiming time_pairs(const std::function<double()>& plain, const std::function<double()>& routed,
                        const PairedOptions& options) {
  PairedTiming t;
  t.load_before = load_average();
  const auto t0 = Clock::now();
  const double cpu0 = cpu_seconds();
  for (std::int64_t r = 0; r < options.max_repeats; ++r) {
    if (r % 2 == 0) {
      t.plain_s.push_back(plain());
      t.routed_s.push_back(routed());
    } else {
      t.routed_s.push_back(routed());
      t.plain_s.push_back(plain());
    }
    t.saving = paired_saving(t.plain_s, t.routed_s);
    t.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    const bool enough = r + 1 >= options.min_repeats;
    if (enough && t.saving.high_pct - t.saving.low_pct <= options.width_pct) break;
    if (t.seconds >= options.max_seconds || r + 1 == options.max_repeats) {
      t.capped = true;
      break;
    }
  }
  t.cpu_share = t.seconds > 0 ? (cpu_seconds() - cpu0) / t.seconds : 0.0;
  t.load_after = load_average();
  return t;
}

}  // namespace linsweep
