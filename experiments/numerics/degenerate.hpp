// Why a row is not a measurement: the `flag` column ("" when the row is one) of the tables
// whose rows can come out empty or undefined (docs/methods.md, "Flagged results"). The report
// shows the column and `linsweep status` lists every flagged row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/numerics/correlation.hpp"

namespace linsweep {

// Reasons joined by "; ", in the order added.
class Flags {
 public:
  void add_if(bool cond, const std::string& reason);
  const std::string& text() const noexcept { return text_; }

 private:
  std::string text_;
};

// A gate variant's row: labels of one class on the gate split's training rows (the threshold
// cannot split δ), an undefined hold-out AUC, or hard routing that sends no position, or every
// position, to the surrogate on eval.
std::string gate_flag(const std::vector<std::uint8_t>& train_labels, double auc, double pct_linear);

// What a routing-list row counted: `eligible` source tokens seen `min_count` times, `listed`
// of them listed, and the two correlations: over the `found` listed tokens and over the
// `shared` tokens seen `min_found` times on both (each with its n).
struct NoflyCounts {
  std::int64_t min_count = 0, eligible = 0, listed = 0;
  Correlation listed_r, shared_r;
};
// An empty list (and whether min_count or the threshold emptied it), and each r that is
// undefined or taken over fewer than kMinCorrelationN tokens, with its n.
std::string nofly_flag(const NoflyCounts& c);

}  // namespace linsweep
