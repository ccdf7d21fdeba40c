// Edit distance (optimal string alignment) over three rows of the dynamic-programming table.
#include "common/suggest.hpp"

#include <algorithm>
#include <numeric>

namespace linsweep {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  // Three rows of the table: a transposition looks two rows back.
  std::vector<std::size_t> before(b.size() + 1), prev(b.size() + 1), row(b.size() + 1);
  std::iota(prev.begin(), prev.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) row[j] = std::min(row[j], before[j - 2] + 1);
    }
    before.swap(prev);
    prev.swap(row);
  }
  return prev[b.size()];
}

std::string closest_name(const std::string& name, const std::vector<std::string>& known) {
  const std::size_t limit = std::max<std::size_t>(1, name.size() / 3);
  std::string best;
  std::size_t best_distance = limit + 1;
  for (const auto& k : known) {
    const std::size_t d = edit_distance(name, k);
    if (d < best_distance) best = k, best_distance = d;
  }
  if (!best.empty() || name.size() < 3) return best;
  for (const auto& k : known)  // an abbreviation: "delta" for "delta_pct"
    if (k.size() > name.size() && k.compare(0, name.size(), name) == 0 && (best.empty() || k.size() < best.size()))
      best = k;
  return best;
}

std::string did_you_mean(const std::string& name, const std::vector<std::string>& known) {
  const std::string c = closest_name(name, known);
  return c.empty() ? "" : " (did you mean '" + c + "'?)";
}

}  // namespace linsweep
