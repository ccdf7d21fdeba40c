// `nofly`: routing lists. Tokens, keyed by the input token (the one a router sees at t: a
// deployable list) or by the token each δ scores (the predicted one, which no router knows: a
// diagnostic of which tokens are hurt), whose linearisation at layer ℓ hurts consistently on a
// source corpus (≥10 observations, mean δ above an absolute threshold or in the top share, > 60%
// of δ positive), tested on target corpora with the surrogate refitted there: how many listed
// tokens are found (≥3 observations), stay listed, or flip (mean δ < 0), and the Pearson r of
// per-token mean δ over the listed tokens found and over every token seen ≥3 times on both, each
// with its n and a bootstrap interval over tokens (docs/methods.md, "Routing lists").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <tuple>

#include "common/errors.hpp"
#include "experiments/framework/capture_data.hpp"
#include "experiments/framework/experiment.hpp"
#include "experiments/framework/unit_data.hpp"
#include "experiments/numerics/correlation.hpp"
#include "experiments/numerics/degenerate.hpp"
#include "presentation/cells.hpp"
#include "presentation/section.hpp"
#include "storage/table_def.hpp"

namespace linsweep {
namespace {

struct NoflyParams {
  std::int64_t layer = -1;
  std::string source;
  std::vector<std::string> targets;
  std::string key = "input";
  std::int64_t min_count = 10;
  std::int64_t min_found = 3;
  double min_mean_delta = 0.05;
  double top = 0;
  double min_positive = 0.6;
  std::int64_t bootstrap = 1000;
  std::int64_t seed = 0;
};

const ParamSchema<NoflyParams>& nofly_schema() {
  static const ParamSchema<NoflyParams> s =
      ParamSchema<NoflyParams>()
          .add("layer", &NoflyParams::layer, at_least(-1), "the layer (−1: each model's middle layer)")
          .corpus("source", &NoflyParams::source, "corpus the list is built on (empty: the first)")
          .corpora("targets", &NoflyParams::targets, "corpora it is tested on (empty: every other)")
          .add("key", &NoflyParams::key, one_of({"input", "predicted"}),
               "a δ counts for the token at its position (input, t: a deployable routing list) or the token it "
               "scores (predicted, t+1: which tokens are hurt, not deployable)")
          .add("min_count", &NoflyParams::min_count, at_least(1), "observations of a token to list it")
          .add("min_found", &NoflyParams::min_found, at_least(1), "observations to count a token on a target and in r")
          .add("min_mean_delta", &NoflyParams::min_mean_delta, any_value(),
               "mean δ above which a token is listed (when top is 0)")
          .add("top", &NoflyParams::top, unit_interval(),
               "list the share of tokens with the largest positive mean δ instead (0: use min_mean_delta)")
          .add("min_positive", &NoflyParams::min_positive, unit_interval(), "share of a token's δ that must be > 0")
          .add("bootstrap", &NoflyParams::bootstrap, at_least(1),
               "bootstrap resamples of tokens for each Pearson r's 95% interval")
          .add("seed", &NoflyParams::seed, at_least(0), "seed of the bootstrap");
  return s;
}

struct NoflyUnitParams {
  std::int64_t layer = 0;
  std::vector<std::string> corpora;  // source, then targets: the deps' order
  std::string key;
  std::int64_t min_count = 0, min_found = 0;
  double min_mean_delta = 0, top = 0, min_positive = 0;
  std::int64_t bootstrap = 0, seed = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(NoflyUnitParams, layer, corpora, key, min_count, min_found, min_mean_delta, top,
                                   min_positive, bootstrap, seed)

struct NoflyRow {
  std::string model;
  std::int64_t layer = 0;
  std::string source, target;
  std::int64_t listed = 0, found = 0, still_listed = 0, flipped = 0;
  double pearson_r = 0;
  std::string key;
  double threshold = 0, target_threshold = 0;
  std::int64_t shared = 0;
  double pearson_r_listed = 0;
  std::string flag;
  double pearson_r_ci_low = 0, pearson_r_ci_high = 0, pearson_r_listed_ci_low = 0, pearson_r_listed_ci_high = 0;
};

const TableDef<NoflyRow>& nofly_table() {
  static const TableDef<NoflyRow> t =
      TableDef<NoflyRow>("nofly", "one row per model and target corpus")
          .key("model", &NoflyRow::model)
          .key("layer", &NoflyRow::layer)
          .key("source", &NoflyRow::source)
          .key("target", &NoflyRow::target)
          .column("listed", &NoflyRow::listed, "tokens listed on the source")
          .column("found", &NoflyRow::found, "listed tokens seen min_found times on the target")
          .column("still_listed", &NoflyRow::still_listed, "found tokens that the target lists too")
          .column("flipped", &NoflyRow::flipped, "found tokens whose mean δ is negative on the target")
          .column("pearson_r", &NoflyRow::pearson_r, "r of per-token mean δ over the `shared` tokens")
          .added("key", &NoflyRow::key, "what a δ is counted for: predicted (the token at t+1) or input (at t)")
          .added("threshold", &NoflyRow::threshold, "mean δ a token needs on the source to be listed")
          .added("target_threshold", &NoflyRow::target_threshold, "likewise on the target, for still_listed")
          .added("shared", &NoflyRow::shared, "tokens seen min_found times on both corpora")
          .added("pearson_r_listed", &NoflyRow::pearson_r_listed, "r of per-token mean δ over the `found` tokens")
          .added("flag", &NoflyRow::flag,
                 "why the row is not a measurement: an empty list, an r undefined or over fewer than 10 tokens "
                 "(\"\": it is)")
          .added("pearson_r_ci_low", &NoflyRow::pearson_r_ci_low,
                 "95% bootstrap interval of pearson_r, tokens resampled (n = shared)")
          .added("pearson_r_ci_high", &NoflyRow::pearson_r_ci_high, "its upper end")
          .added("pearson_r_listed_ci_low", &NoflyRow::pearson_r_listed_ci_low,
                 "95% bootstrap interval of pearson_r_listed, tokens resampled (n = found)")
          .added("pearson_r_listed_ci_high", &NoflyRow::pearson_r_listed_ci_high, "its upper end");
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
    NoflyUnitParams u{.layer = nofly_layer(p, m),
                      .corpora = {source},
                      .key = p.key,
                      .min_count = p.min_count,
                      .min_found = p.min_found,
                      .min_mean_delta = p.min_mean_delta,
                      .top = p.top,
                      .min_positive = p.min_positive,
                      .bootstrap = p.bootstrap,
                      .seed = p.seed};
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
using TokenDeltas = std::map<std::int32_t, TokenDelta>;

TokenDeltas per_token(const CapturedRows& rows, const std::string& key, const std::string& unit_id) {
  if (key == "predicted" && rows.next_token_ids.size() != rows.delta.size())
    throw StorageError(unit_id +
                           ": key 'predicted' needs the capture's next_token_ids, which its shards lack; "
                           "set nofly.key: input, or run the sweep into a new store",
                       ExitCode::kBadInput);
  const auto& tokens = key == "predicted" ? rows.next_token_ids : rows.token_ids;
  TokenDeltas out;
  for (std::size_t i = 0; i < rows.delta.size(); ++i) {
    TokenDelta& t = out[tokens[i]];
    t.sum += rows.delta[i], ++t.count, t.positive += rows.delta[i] > 0;
  }
  return out;
}

// The mean δ a token needs to be listed: min_mean_delta, or with `top` the ⌈top·n⌉-th largest
// mean δ of the n tokens seen `min_count` times (every token tied with it is listed too).
double list_threshold(const TokenDeltas& tokens, std::int64_t min_count, const NoflyUnitParams& p) {
  if (p.top <= 0) return p.min_mean_delta;
  std::vector<double> means;
  for (const auto& [token, t] : tokens)
    if (t.count >= min_count) means.push_back(t.mean());
  if (means.empty()) return INFINITY;
  const auto k = static_cast<std::size_t>(std::ceil(p.top * static_cast<double>(means.size())));
  if (k == 0) return INFINITY;
  std::nth_element(means.begin(), means.begin() + static_cast<std::ptrdiff_t>(k - 1), means.end(), std::greater<>());
  return means[k - 1];
}

// Listed: seen `min_count` times, more than min_positive of its δ positive, and mean δ above
// the absolute threshold or, with `top`, at least the relative one and positive.
bool is_listed(const TokenDelta& t, std::int64_t min_count, double threshold, const NoflyUnitParams& p) {
  const bool above = p.top > 0 ? t.mean() >= threshold && t.mean() > 0 : t.mean() > threshold;
  return t.count >= min_count && above &&
         static_cast<double>(t.positive) > p.min_positive * static_cast<double>(t.count);
}

// The row of one target, with both correlations (each with its n and interval) in `found_r`
// and `shared_r`.
NoflyRow test_list(const std::vector<std::int32_t>& list, const TokenDeltas& source, const TokenDeltas& target,
                   const NoflyUnitParams& p, Correlation* found_r, Correlation* shared_r) {
  NoflyRow row;
  row.listed = static_cast<std::int64_t>(list.size()), row.key = p.key;
  row.target_threshold = list_threshold(target, p.min_found, p);
  std::vector<double> listed_src, listed_tgt;
  for (std::int32_t token : list) {
    auto it = target.find(token);
    if (it == target.end() || it->second.count < p.min_found) continue;
    ++row.found;
    // Still listed on the target by the source's criteria, at the lower observation count.
    row.still_listed += is_listed(it->second, p.min_found, row.target_threshold, p);
    row.flipped += it->second.mean() < 0;
    listed_src.push_back(source.at(token).mean()), listed_tgt.push_back(it->second.mean());
  }
  std::vector<double> a, b;
  for (const auto& [token, t] : source) {
    auto it = target.find(token);
    if (t.count >= p.min_found && it != target.end() && it->second.count >= p.min_found)
      a.push_back(t.mean()), b.push_back(it->second.mean());
  }
  const auto seed = static_cast<std::uint64_t>(p.seed);
  *shared_r = correlate(a, b, {}, p.bootstrap, seed);
  *found_r = correlate(listed_src, listed_tgt, {}, p.bootstrap, seed);
  row.shared = shared_r->n;
  row.pearson_r = shared_r->r, row.pearson_r_ci_low = shared_r->ci_low, row.pearson_r_ci_high = shared_r->ci_high;
  row.pearson_r_listed = found_r->r, row.pearson_r_listed_ci_low = found_r->ci_low;
  row.pearson_r_listed_ci_high = found_r->ci_high;
  return row;
}

UnitResult run_nofly(const ExperimentInput& in) {
  const auto p = in.params.get<NoflyUnitParams>();
  const auto& corpora = p.corpora;
  if (corpora.size() < 2 || in.deps.size() != corpora.size())
    throw InputError(in.unit_id + ": nofly needs the capture units of its source and targets");
  const auto source = per_token(read_captured(in.store, in.deps[0], "gate", p.layer), p.key, in.unit_id);
  const double threshold = list_threshold(source, p.min_count, p);
  std::vector<std::int32_t> list;
  std::int64_t eligible = 0;
  for (const auto& [token, t] : source) {
    eligible += t.count >= p.min_count;
    if (is_listed(t, p.min_count, threshold, p)) list.push_back(token);
  }

  std::vector<NoflyRow> rows;
  for (std::size_t k = 1; k < corpora.size(); ++k) {
    const auto target = per_token(read_captured(in.store, in.deps[k], "gate", p.layer), p.key, in.unit_id);
    Correlation found_r, shared_r;
    NoflyRow row = test_list(list, source, target, p, &found_r, &shared_r);
    row.model = in.model_name, row.layer = p.layer, row.source = corpora[0], row.target = corpora[k];
    row.threshold = threshold;
    row.flag = nofly_flag({.min_count = p.min_count,
                           .eligible = eligible,
                           .listed = row.listed,
                           .listed_r = found_r,
                           .shared_r = shared_r});
    rows.push_back(std::move(row));
  }
  UnitResult out = unit_result(in);
  out.tables.push_back(nofly_table().table(rows));
  return out;
}

const UnitKindRegistrar kNoflyKind{"nofly", run_nofly, /*needs_model=*/false, {}, /*runs_split=*/true};

bool correlation_flagged(double r, std::int64_t n) { return !std::isfinite(r) || n < kMinCorrelationN; }

// The routing lists of one key: deployable (input) or which tokens are hurt (predicted).
ReportTable nofly_report_table(const std::vector<const NoflyRow*>& rows, bool deployable) {
  ReportTable rt{deployable ? "routing_lists" : "nofly_predicted",
                 deployable ? "Routing lists (No-Fly), deployable: keyed by the input token, built on the source "
                              "corpus, tested on the target with a refitted surrogate"
                            : "Which tokens are hurt (not deployable): No-Fly lists keyed by the predicted token",
                 {"model", "layer", "source → target", "mean δ to list", "listed", "found", "still listed", "flipped",
                  "r over found [95% CI], n", "r over shared [95% CI], n", "flag"},
                 {},
                 std::string(deployable ? "Keyed by the input token at t, the one a router sees: a list a router can "
                                          "apply. "
                                        : "Keyed by the token δ scores (t + 1), as the paper's code keys them: no "
                                          "router knows it at t, so these lists say which tokens are hurt and route "
                                          "nothing. ") +
                     "r over found is the paper's: per-token mean δ on source and target over the listed tokens found "
                     "on the target; r over shared takes every token seen min_found times on both; intervals resample "
                     "tokens. " +
                     kFewPairsNote + ".",
                 deployable ? "Table 5" : ""};
  for (const NoflyRow* r : rows)
    rt.rows.push_back({r->model, std::to_string(r->layer), r->source + " → " + r->target, num(r->threshold, 3),
                       std::to_string(r->listed), std::to_string(r->found), std::to_string(r->still_listed),
                       std::to_string(r->flipped),
                       correlation_cell(r->pearson_r_listed, r->pearson_r_listed_ci_low, r->pearson_r_listed_ci_high,
                                        r->found, correlation_flagged(r->pearson_r_listed, r->found)),
                       correlation_cell(r->pearson_r, r->pearson_r_ci_low, r->pearson_r_ci_high, r->shared,
                                        correlation_flagged(r->pearson_r, r->shared)),
                       r->flag});
  return rt;
}

// The deployable lists first; a row without a key (a file written before the column) counted
// each δ for the input token.
void nofly_tables(const TableSet& tables, std::vector<ReportTable>* out) {
  const auto rows = nofly_table().sorted_rows(
      tables, [](const NoflyRow& r) { return std::tie(r.model, r.layer, r.source, r.target); });
  std::vector<const NoflyRow*> input, predicted;
  for (const auto& r : rows) (r.key == "predicted" ? predicted : input).push_back(&r);
  if (!input.empty()) out->push_back(nofly_report_table(input, true));
  if (!predicted.empty()) out->push_back(nofly_report_table(predicted, false));
}

// "r = +0.42 (95% CI +0.10 to +0.70, n = 12)", or with fewer than kMinCorrelationN tokens
// "r = -1.000 over 2 tokens, under the minimum n = 10: not a measurement".
std::string correlation_sentence(double r, double lo, double hi, std::int64_t n) {
  if (!std::isfinite(r)) return "r undefined over " + std::to_string(n) + " tokens";
  if (n < kMinCorrelationN)
    return fmt::format("r = {:+.3f} over {} tokens, under the minimum n = {}: not a measurement", r, n,
                       kMinCorrelationN);
  if (!std::isfinite(lo) || !std::isfinite(hi)) return fmt::format("r = {:+.3f} (n = {})", r, n);
  return fmt::format("r = {:+.3f} (95% CI {:+.3f} to {:+.3f}, n = {})", r, lo, hi, n);
}

// The deployable routing list (keyed by the input token) of the first model, layer, source and
// target in name order, a rule that reads no result.
void nofly_headlines(const TableSet& tables, std::vector<std::string>* out) {
  const auto rows = nofly_table().sorted_rows(
      tables, [](const NoflyRow& r) { return std::tie(r.model, r.layer, r.source, r.target); });
  const auto it = std::find_if(rows.begin(), rows.end(), [](const NoflyRow& r) { return r.key != "predicted"; });
  if (it == rows.end() || it->listed == 0) return;
  const NoflyRow& r = *it;
  out->push_back(fmt::format(
      "A routing list keyed by the input token, which a router can apply, lists {} tokens of {} at layer {} on {}; "
      "{} of them are seen on {} ({} still listed there, {} with a negative mean δ), and their mean δ on the two "
      "corpora correlates with {} (over every token both corpora see, {}).",
      r.listed, r.model, r.layer, r.source, r.found, r.target, r.still_listed, r.flipped,
      correlation_sentence(r.pearson_r_listed, r.pearson_r_listed_ci_low, r.pearson_r_listed_ci_high, r.found),
      correlation_sentence(r.pearson_r, r.pearson_r_ci_low, r.pearson_r_ci_high, r.shared)));
}

const SectionRegistrar kNoflySection{{"nofly", 45, nofly_tables, {}, {}, nofly_headlines}};

}  // namespace
}  // namespace linsweep
