// `nofly`: routing lists. Tokens whose linearisation at layer ℓ hurts consistently on a source
// corpus (≥10 observations, mean δ > 0.05, > 60% of δ positive), tested on target corpora with
// the surrogate refitted there: how many listed tokens are found (≥3 observations), stay
// listed, or flip (mean δ < 0), and the Pearson r of per-token mean δ over tokens seen ≥3
// times on both (docs/methods.md, "Routing lists").
#include <algorithm>
#include <map>
#include <tuple>

#include "common/errors.hpp"
#include "experiments/capture_data.hpp"
#include "experiments/classification.hpp"
#include "experiments/experiment.hpp"
#include "experiments/unit_data.hpp"
#include "presentation/cells.hpp"
#include "presentation/section.hpp"
#include "storage/table_def.hpp"

namespace linsweep {
namespace {

struct NoflyParams {
  std::int64_t layer = -1;
  std::string source;
  std::vector<std::string> targets;
  std::int64_t min_count = 10;
  std::int64_t min_found = 3;
  double min_mean_delta = 0.05;
  double min_positive = 0.6;
};

const ParamSchema<NoflyParams>& nofly_schema() {
  static const ParamSchema<NoflyParams> s =
      ParamSchema<NoflyParams>()
          .add("layer", &NoflyParams::layer, at_least(-1), "the layer (−1: each model's middle layer)")
          .corpus("source", &NoflyParams::source, "corpus the list is built on (empty: the first)")
          .corpora("targets", &NoflyParams::targets, "corpora it is tested on (empty: every other)")
          .add("min_count", &NoflyParams::min_count, at_least(1), "observations of a token to list it")
          .add("min_found", &NoflyParams::min_found, at_least(1), "observations to count a token on a target and in r")
          .add("min_mean_delta", &NoflyParams::min_mean_delta, any_value(), "mean δ above which a token is listed")
          .add("min_positive", &NoflyParams::min_positive, unit_interval(), "share of a token's δ that must be > 0");
  return s;
}

struct NoflyUnitParams {
  std::int64_t layer = 0;
  std::vector<std::string> corpora;  // source, then targets: the deps' order
  std::int64_t min_count = 0, min_found = 0;
  double min_mean_delta = 0, min_positive = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(NoflyUnitParams, layer, corpora, min_count, min_found, min_mean_delta, min_positive)

struct NoflyRow {
  std::string model;
  std::int64_t layer = 0;
  std::string source, target;
  std::int64_t listed = 0, found = 0, still_listed = 0, flipped = 0;
  double pearson_r = 0;
};

const TableDef<NoflyRow>& nofly_table() {
  static const TableDef<NoflyRow> t =
      TableDef<NoflyRow>("nofly", "one row per model and target corpus")
          .key("model", &NoflyRow::model)
          .key("layer", &NoflyRow::layer)
          .key("source", &NoflyRow::source)
          .key("target", &NoflyRow::target)
          .key("listed", &NoflyRow::listed, "tokens listed on the source")
          .key("found", &NoflyRow::found, "listed tokens seen min_found times on the target")
          .key("still_listed", &NoflyRow::still_listed, "found tokens that the target lists too")
          .key("flipped", &NoflyRow::flipped, "found tokens whose mean δ is negative on the target")
          .key("pearson_r", &NoflyRow::pearson_r, "r of per-token mean δ over tokens seen on both");
  return t;
}
const TableRegistrar kNoflyTable{nofly_table().schema()};

std::string nofly_source(const NoflyParams& p, const Sweep& sweep) {
  return p.source.empty() ? sweep.corpora.front().name : p.source;
}

std::vector<std::string> nofly_targets(const NoflyParams& p, const Sweep& sweep) {
  std::vector<std::string> targets = p.targets;
  if (targets.empty())
    for (const auto& c : sweep.corpora)
      if (c.name != nofly_source(p, sweep)) targets.push_back(c.name);
  return targets;
}

std::int64_t nofly_layer(const NoflyParams& p, const ModelSpec& m) { return p.layer < 0 ? m.layers / 2 : p.layer; }

void validate_nofly(const NoflyParams& p, const Sweep& sweep, std::vector<ParamProblem>& problems) {
  for (const auto& m : sweep.models)
    if (p.layer >= m.layers)
      problems.push_back({"layer", "layer " + std::to_string(p.layer) + " is outside model '" + m.name + "'"});
  const std::string source = nofly_source(p, sweep);
  const auto targets = nofly_targets(p, sweep);
  if (targets.empty()) problems.push_back({"targets", "needs a target corpus other than its source '" + source + "'"});
  for (const auto& t : targets)
    if (t == source) problems.push_back({"targets", "the source corpus cannot be its own target"});
}

void nofly_needs(const NoflyParams& p, const Sweep& sweep, PlanNeeds& n) {
  n.capture = true;
  for (const auto& m : sweep.models) n.measured_layers[m.name].insert(nofly_layer(p, m));
}

void expand_nofly(const NoflyParams& p, PlanBuilder& b) {
  const std::string source = nofly_source(p, b.sweep());
  for (const auto& m : b.sweep().models) {
    NoflyUnitParams u{nofly_layer(p, m), {source}, p.min_count, p.min_found, p.min_mean_delta, p.min_positive};
    std::vector<std::string> deps = {b.provide("capture", m, source)};
    for (const auto& t : nofly_targets(p, b.sweep()))
      u.corpora.push_back(t), deps.push_back(b.provide("capture", m, t));
    b.add(Unit{.kind = "nofly", .model = m.name, .corpus = source, .params = u, .deps = std::move(deps)});
  }
}

const ExperimentRegistrar kNofly{make_experiment<NoflyParams>(
    "nofly", "routing lists: tokens whose linearization hurts on one corpus, tested on others", 60, nofly_schema(),
    expand_nofly, validate_nofly, nofly_needs)};

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
  const auto p = in.params.get<NoflyUnitParams>();
  const std::int64_t layer = p.layer;
  const auto& corpora = p.corpora;
  if (corpora.size() < 2 || in.deps.size() != corpora.size())
    throw InputError(in.unit_id + ": nofly needs the capture units of its source and targets");
  const auto min_listed = p.min_count, min_found = p.min_found;
  const double min_mean = p.min_mean_delta, min_positive = p.min_positive;
  auto listed = [&](const TokenDelta& t, std::int64_t min_count) {
    return t.count >= min_count && t.mean() > min_mean &&
           static_cast<double>(t.positive) > min_positive * static_cast<double>(t.count);
  };
  const auto source = per_token(read_captured(in.store, in.deps[0], "gate", layer));
  std::vector<std::int32_t> list;
  for (const auto& [token, t] : source)
    if (listed(t, min_listed)) list.push_back(token);

  std::vector<NoflyRow> rows;
  for (std::size_t k = 1; k < corpora.size(); ++k) {
    const auto target = per_token(read_captured(in.store, in.deps[k], "gate", layer));
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
      if (t.count >= min_found && it != target.end() && it->second.count >= min_found)
        a.push_back(t.mean()), b.push_back(it->second.mean());
    }
    rows.push_back({.model = in.model_name,
                    .layer = layer,
                    .source = corpora[0],
                    .target = corpora[k],
                    .listed = static_cast<std::int64_t>(list.size()),
                    .found = found,
                    .still_listed = still,
                    .flipped = flipped,
                    .pearson_r = pearson_r(a, b)});
  }
  UnitResult out = unit_result(in);
  out.tables.push_back(nofly_table().table(rows));
  return out;
}

const UnitKindRegistrar kNoflyKind{"nofly", run_nofly, /*needs_model=*/false};

void nofly_tables(const TableSet& tables, std::vector<ReportTable>* out) {
  auto rows = nofly_table().rows(tables.at("nofly"));
  if (rows.empty()) return;
  std::stable_sort(rows.begin(), rows.end(), [](const NoflyRow& a, const NoflyRow& b) {
    return std::tie(a.model, a.layer, a.source, a.target) < std::tie(b.model, b.layer, b.source, b.target);
  });
  ReportTable rt{"routing_lists",
                 "Routing lists (No-Fly): built on the source corpus, tested on the target with a refitted surrogate",
                 {"model", "layer", "source → target", "listed", "found", "still listed", "flipped", "Pearson r"},
                 {},
                 "",
                 "Table 5"};
  for (const auto& r : rows)
    rt.rows.push_back({r.model, std::to_string(r.layer), r.source + " → " + r.target, std::to_string(r.listed),
                       std::to_string(r.found), std::to_string(r.still_listed), std::to_string(r.flipped),
                       num(r.pearson_r, 3)});
  out->push_back(std::move(rt));
}

const SectionRegistrar kNoflySection{{"nofly", 45, nofly_tables, {}}};

}  // namespace
}  // namespace linsweep
