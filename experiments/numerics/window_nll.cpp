#include "experiments/numerics/window_nll.hpp"

#include <stdexcept>

namespace linsweep {

std::string window_nll_key(const std::string& model, const std::string& corpus, const std::string& experiment,
                           std::int64_t layer) {
  std::string key = "nll/" + model + "/" + corpus + "/" + experiment;
  if (layer >= 0) key += "/layer" + std::to_string(layer);
  return key;
}

void add_window_nll(UnitResult& out, const std::string& prefix, const Split& split, std::int64_t context,
                    const std::vector<std::pair<std::string, std::vector<double>>>& series) {
  const std::int64_t windows = context > 0 ? split.tokens / context : 0;
  std::vector<double> start(static_cast<std::size_t>(windows));
  for (std::int64_t i = 0; i < windows; ++i)
    start[static_cast<std::size_t>(i)] = static_cast<double>(split.start + i * context);
  out.arrays[prefix + "/window_start"] = {{windows}, std::move(start)};
  for (const auto& [name, nll] : series) {
    if (static_cast<std::int64_t>(nll.size()) != windows)
      throw std::invalid_argument(out.unit_id + ": " + prefix + "/" + name + " holds " + std::to_string(nll.size()) +
                                  " window sums, the split " + std::to_string(windows));
    out.arrays[prefix + "/" + name] = {{windows}, nll};
  }
}

}  // namespace linsweep
