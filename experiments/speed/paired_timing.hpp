// Paired, interleaved timing of two ways of doing the same work (plain and routed decoding),
// with as many repeats as an interval of stated width needs, a time cap, and the machine's load
// recorded beside the times (docs/methods.md, "Speed").
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace linsweep {

struct PairedOptions {
  std::int64_t min_repeats = 5;   // pairs before the interval may end the measurement
  std::int64_t max_repeats = 50;  // pairs at most
  double width_pct = 2.0;         // stop once the saving's 95% interval is at most this wide (points)
  double max_seconds = 60;        // stop after the pair that passes this much wall time (also below min_repeats)
};

// A measured saving 100·(1 − routed/plain time): the geometric mean of the paired ratios, and
// its 95% interval from Student's t on their logarithms (n − 1 degrees of freedom; none for one pair).
struct PairedSaving {
  double saving_pct = 0, low_pct = 0, high_pct = 0;
  std::int64_t pairs = 0;
  // The interval contains 0: no saving (or cost) is shown to be there (marked † in reports).
  bool contains_zero() const noexcept { return low_pct <= 0 && high_pct >= 0; }
};

PairedSaving paired_saving(const std::vector<double>& plain_s, const std::vector<double>& routed_s);

// The 97.5% quantile of Student's t with `df` ≥ 1 degrees of freedom (a table to 30, then the
// first term of its expansion around the normal's 1.96: within 0.001).
double t_quantile_975(std::int64_t df);

// What a paired measurement saw.
struct PairedTiming {
  std::vector<double> plain_s, routed_s;  // seconds of each repeat's two runs, in pair order
  PairedSaving saving;
  double seconds = 0;                      // wall time of the whole measurement
  bool capped = false;                     // ended by max_seconds or max_repeats before the width was reached
  double load_before = 0, load_after = 0;  // the machine's 1-minute load average (/proc/loadavg; −1 unreadable)
  double cpu_share = 0;                    // this process's CPU time over wall time during the measurement
};

// Runs `plain` and `routed` (each returns the seconds it timed) in pairs, alternating which goes
// first (plain, routed; routed, plain; ...) so that neither always runs on a warmer or colder
// machine, until min_repeats pairs are done and the interval is at most width_pct wide, or the
// cap is reached. Not thread safe (the callables').
PairedTiming time_pairs(const std::function<double()>& plain, const std::function<double()>& routed,
                        const PairedOptions& options);

// The 1-minute load average, or −1 when /proc/loadavg cannot be read. Thread safe.
double load_average();

}  // namespace linsweep
