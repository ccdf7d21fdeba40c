// Reasons a row is flagged (degenerate.hpp).
#include "experiments/numerics/degenerate.hpp"

#include <algorithm>
#include <cmath>

namespace linsweep {

void Flags::add_if(bool cond, const std::string& reason) {
  if (!cond) return;
  text_ += (text_.empty() ? "" : "; ") + reason;
}

std::string gate_flag(const std::vector<std::uint8_t>& train_labels, double auc, double pct_linear) {
  Flags f;
  const auto ones = std::count(train_labels.begin(), train_labels.end(), std::uint8_t{1});
  f.add_if(ones == 0 || ones == static_cast<std::ptrdiff_t>(train_labels.size()),
           "constant labels: every training row on one side of the δ threshold");
  f.add_if(!std::isfinite(auc), "AUC undefined: the hold-out has one label");
  f.add_if(pct_linear == 0, "routes no position to the surrogate");
  f.add_if(pct_linear == 100, "routes every position to the surrogate");
  return f.text();
}

std::string nofly_flag(const NoflyCounts& c) {
  Flags f;
  f.add_if(c.listed == 0 && c.eligible == 0,
           "empty list: no source token seen min_count = " + std::to_string(c.min_count) + " times");
  f.add_if(c.listed == 0 && c.eligible > 0,
           "empty list: none of the " + std::to_string(c.eligible) + " tokens seen min_count times passes the mean δ");
  const std::string found = correlation_flag("r over found", c.listed_r, "found", "mean δ");
  f.add_if(!found.empty(), found);
  const std::string shared = correlation_flag("r over shared", c.shared_r, "shared", "mean δ");
  f.add_if(!shared.empty(), shared);
  return f.text();
}

}  // namespace linsweep
