// `nofly`: routing lists. Tokens whose linearisation at layer ℓ hurts consistently on a source
// corpus (≥10 observations, mean δ > 0.05, > 60% of δ positive), tested on target corpora with
// the surrogate refitted there: how many listed tokens are found (≥3 observations), stay
// listed, or flip (mean δ < 0), and the Pearson r of per-token mean δ over tokens seen ≥3
// times on both (DESIGN §4 "Routing lists").
#include <map>

#include "common/errors.hpp"
#include "experiments/capture_data.hpp"
#include "experiments/classification.hpp"
#include "experiments/experiment.hpp"
#include "experiments/unit_data.hpp"

namespace linsweep {
namespace {

struct TokenDelta {
  double sum = 0;
  std::int64_t count = 0, positive = 0;
  double mean() const { return sum / static_cast<double>(count); }
};

std::map<std::int32_t, TokenDelta> per_token(const CapturedRows& rows) {
  std::map<std::int32_t, TokenDelta> out;
  for (std::size_t i = 0; i < rows.delta.size(); ++i) {
    TokenDelta& t = out[rows.token_ids[i]];
    t.sum += rows.delta[i], ++t.count, t.positive += rows.delta[i] > 0;
  }
  return out;
}

UnitResult run_nofly(const ExperimentInput& in) {
  const auto layer = in.params["layer"].get<std::int64_t>();
  const auto corpora = in.params["corpora"].get<std::vector<std::string>>();  // source, then targets: the deps' order
  if (corpora.size() < 2 || in.deps.size() != corpora.size())
    throw InputError(in.unit_id + ": nofly needs the capture units of its source and targets");
  const auto min_listed = in.params["min_count"].get<std::int64_t>(), min_found = in.params["min_found"].get<std::int64_t>();
  const double min_mean = in.params["min_mean_delta"].get<double>(), min_positive = in.params["min_positive"].get<double>();
  auto listed = [&](const TokenDelta& t, std::int64_t min_count) {
    return t.count >= min_count && t.mean() > min_mean &&
           static_cast<double>(t.positive) > min_positive * static_cast<double>(t.count);
  };
  const auto source = per_token(read_captured(in.store_dir, in.deps[0], "gate", layer));
  std::vector<std::int32_t> list;
  for (const auto& [token, t] : source)
    if (listed(t, min_listed)) list.push_back(token);

  Table rows = empty_table("nofly");
  for (std::size_t k = 1; k < corpora.size(); ++k) {
    const auto target = per_token(read_captured(in.store_dir, in.deps[k], "gate", layer));
    std::int64_t found = 0, still = 0, flipped = 0;
    for (std::int32_t token : list) {
      auto it = target.find(token);
      if (it == target.end() || it->second.count < min_found) continue;
      ++found;
      // Still listed on the target with the source's criteria, at the lower observation count.
      still += listed(it->second, min_found);
      flipped += it->second.mean() < 0;
    }
    std::vector<double> a, b;
    for (const auto& [token, t] : source) {
      auto it = target.find(token);
      if (t.count >= min_found && it != target.end() && it->second.count >= min_found) a.push_back(t.mean()), b.push_back(it->second.mean());
    }
    rows.rows.push_back({in.model_name, layer, corpora[0], corpora[k], static_cast<std::int64_t>(list.size()), found, still,
                         flipped, pearson_r(a, b)});
  }
  UnitResult out = unit_result(in);
  out.tables.push_back(std::move(rows));
  return out;
}

const ExperimentRegistrar kNofly{"nofly", run_nofly, /*needs_model=*/false};

}  // namespace
}  // namespace linsweep
