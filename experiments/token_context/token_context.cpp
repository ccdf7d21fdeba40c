// `token_context`: how much of a gate's signal is the token itself. The residual stream r whose
// norm is the MLP's input (for a sequential block: the stream entering block ℓ plus the block's
// attention; for a parallel-residual one: the stream entering it) is the token component e
// (token + position embedding) plus the context component c = r − e that attention and the
// earlier blocks added. Linear gates on X (the MLP's input), on r, e and c, on the paper's
// X − e, on the stream entering the block and its context (r_block, c_block), per-token lookup
// baselines (by the input token, which a router knows at t, and by the token δ scores, as the
// paper keys tokens, which no router knows: a diagnostic of which tokens are hurt) and a random
// baseline, with AUCs on a seeded hold-out of the gate split; and the sizes of r, e and c
// and cos(e, c) in the residual space (docs/methods.md, "Token vs context").
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "common/errors.hpp"
#include "engine/model/language_model.hpp"
#include "experiments/framework/capture_data.hpp"
#include "experiments/framework/experiment.hpp"
#include "experiments/framework/layer_params.hpp"
#include "experiments/framework/stage_data.hpp"
#include "experiments/framework/unit_data.hpp"
#include "experiments/numerics/classification.hpp"
#include "experiments/numerics/gate_model.hpp"
#include "presentation/cells.hpp"
#include "presentation/figures.hpp"
#include "presentation/section.hpp"
#include "storage/table_def.hpp"

namespace linsweep {
namespace {

struct TokenContextParams {
  nlohmann::json layers = "all";
  std::int64_t seed = 0;
  double holdout = 0.3;
  std::string holdout_by = "window";
  std::int64_t bootstrap = 1000;
};

const ParamSchema<TokenContextParams>& token_context_schema() {
  static const ParamSchema<TokenContextParams> s =
      ParamSchema<TokenContextParams>()
          .layers("layers", &TokenContextParams::layers, "layers to test (`all`: the sweep's)")
          .add("seed", &TokenContextParams::seed, at_least(0), "seed of the hold-out and the gates (plus the layer)")
          .add("holdout", &TokenContextParams::holdout, fraction(), "share of the gate split held out for the AUC")
          .add("holdout_by", &TokenContextParams::holdout_by, one_of({"window", "row"}),
               "hold-out drawn by window (all of a window's rows on one side) or by row (the paper's)")
          .add("bootstrap", &TokenContextParams::bootstrap, at_least(1),
               "bootstrap resamples of hold-out windows for each AUC's 95% interval");
  return s;
}

struct TokenContextUnitParams {
  std::int64_t seed = 0;
  double holdout = 0;
  std::string holdout_by;
  std::int64_t layer = 0;
  std::int64_t bootstrap = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TokenContextUnitParams, seed, holdout, holdout_by, layer, bootstrap)

struct TokenContextRow {
  std::string model;
  std::int64_t layer = 0;
  std::string variant;
  double auc = 0;
  std::string corpus;
  double e_norm = 0, c_norm = 0, cosine = 0;
  std::int64_t samples = 0;
  double auc_ci_low = 0, auc_ci_high = 0;
  double r_norm = 0;
  double r_block_norm = 0, c_block_norm = 0, cosine_block = 0;
};

const TableDef<TokenContextRow>& token_context_table() {
  static const TableDef<TokenContextRow> t =
      TableDef<TokenContextRow>("token_context", "one row per model, corpus, layer and feature set")
          .key("model", &TokenContextRow::model)
          .key("layer", &TokenContextRow::layer)
          .key("variant", &TokenContextRow::variant,
               "X, r, e, c, paper, r_block, c_block (the stream entering the block, its context), "
               "token_lookup_input (by the input token: deployable), token_lookup (by the predicted token: which "
               "tokens are hurt, not deployable) or random")
          .column("auc", &TokenContextRow::auc, "hold-out AUC")
          .added_key("corpus", &TokenContextRow::corpus)
          .added("e_norm", &TokenContextRow::e_norm, "mean ‖e‖")
          .added("c_norm", &TokenContextRow::c_norm, "mean ‖c‖, c = r − e")
          .added("cosine", &TokenContextRow::cosine, "mean cos(e, c)")
          .added("samples", &TokenContextRow::samples, "captured rows of the gate split")
          .added("auc_ci_low", &TokenContextRow::auc_ci_low,
                 "95% bootstrap interval of `auc`, hold-out windows resampled")
          .added("auc_ci_high", &TokenContextRow::auc_ci_high, "its upper end")
          .added("r_norm", &TokenContextRow::r_norm, "mean ‖r‖, the residual stream the MLP's norm reads")
          .added("r_block_norm", &TokenContextRow::r_block_norm, "mean ‖r_block‖, the stream entering the block")
          .added("c_block_norm", &TokenContextRow::c_block_norm, "mean ‖c_block‖, c_block = r_block − e")
          .added("cosine_block", &TokenContextRow::cosine_block, "mean cos(e, c_block)");
  return t;
}
const TableRegistrar kTokenContextTable{token_context_table().schema()};

void expand_token_context(const TokenContextParams& p, PlanBuilder& b) {
  add_per_captured_layer(b, p.layers, "token_context", [&](std::int64_t layer) -> nlohmann::json {
    return TokenContextUnitParams{p.seed, p.holdout, p.holdout_by, layer, p.bootstrap};
  });
}

const ExperimentRegistrar kTokenContext{make_experiment<TokenContextParams>(
    "token_context", "how much of a gate's signal is the token, and how much its context", 40, token_context_schema(),
    expand_token_context, validate_layer_param<TokenContextParams, &TokenContextParams::layers>("layers"),
    captured_layer_needs<TokenContextParams, &TokenContextParams::layers>())};

// Windows of token ids [windows, T−1] from captured rows (window-major, positions 0..T−2).
at::Tensor captured_window_ids(const CapturedRows& rows) {
  const std::int64_t n = rows.size();
  std::int64_t per_window = 0;
  while (per_window < n && rows.position[static_cast<std::size_t>(per_window)] == per_window) ++per_window;
  if (per_window == 0 || n % per_window != 0) throw InputError("captured rows are not whole windows");
  for (std::int64_t r = 0; r < n; ++r)
    if (rows.position[static_cast<std::size_t>(r)] != r % per_window)
      throw InputError("captured rows are not whole windows");
  return at::tensor(std::vector<std::int64_t>(rows.token_ids.begin(), rows.token_ids.end()), at::kLong)
      .view({n / per_window, per_window});
}

// Per position of `ids` [windows, T−1], [windows·(T−1), d] float64 each: the token embedding e
// as the model takes it, the stream entering block `layer` and the stream its MLP's norm reads,
// from the model's own forward over the window. Positions 0..T−2 attend only to themselves and
// earlier ones, so the windows' first T−1 tokens give the same streams there as the full
// windows did. Of a model split over ranks, the streams are the stage's that holds `layer`.
struct ResidualComponents {
  at::Tensor e, r_block, r_mlp;
};
ResidualComponents residual_components(const ExperimentInput& in, const at::Tensor& windows, std::int64_t layer,
                                       std::int64_t batch) {
  LanguageModel& model = *in.model;
  const at::Tensor ids = windows.to(model.parameters().front().device());
  c10::InferenceMode guard;
  std::vector<at::Tensor> e, r_block, r_mlp;
  for (std::int64_t b = 0; b < ids.size(0); b += batch) {
    const at::Tensor part = ids.slice(0, b, std::min(b + batch, ids.size(0)));
    at::Tensor h = model.embed(part);
    for (std::int64_t l = 0; l < layer; ++l) h = model.run_layer(l, h);
    // The embedding is the first stage's (the one that holds layer 0) on a split model.
    e.push_back(from_holder(in, 0, model.holds(0) ? model.input_embedding(part) : at::zeros_like(h)));
    r_block.push_back(from_holder(in, layer, h));
    r_mlp.push_back(from_holder(in, layer, model.mlp_stream(layer, h)));
  }
  const std::int64_t d = model.config().d_model;
  auto rows = [d](const std::vector<at::Tensor>& parts) { return at::cat(parts, 0).reshape({-1, d}); };
  return {rows(e), rows(r_block), rows(r_mlp)};
}

// The hold-out rows' scores of a per-token lookup: the share of positive labels among the
// training rows with the same token in `key_tokens`, or among all training rows for a token
// they never show.
std::vector<double> token_lookup(const std::vector<std::int32_t>& key_tokens, const std::vector<std::uint8_t>& labels,
                                 const HoldoutSplit& hs) {
  std::map<std::int32_t, std::pair<double, double>> rate;  // token -> (positives, count)
  double positives = 0;
  for (auto i : hs.train) {
    auto& r = rate[key_tokens[static_cast<std::size_t>(i)]];
    r.first += labels[static_cast<std::size_t>(i)], r.second += 1;
    positives += labels[static_cast<std::size_t>(i)];
  }
  const double overall = hs.train.empty() ? 0.5 : positives / static_cast<double>(hs.train.size());
  std::vector<double> out;
  for (auto i : hs.holdout) {
    auto it = rate.find(key_tokens[static_cast<std::size_t>(i)]);
    out.push_back(it == rate.end() ? overall : it->second.first / it->second.second);
  }
  return out;
}

UnitResult run_token_context(const ExperimentInput& in) {
  const auto p = in.params.get<TokenContextUnitParams>();
  const std::int64_t layer = p.layer;
  const std::uint64_t seed = layer_seed(p.seed, layer);
  const LabelledRows labelled = read_labelled(in, layer, {p.holdout, seed, p.holdout_by});
  const auto& [rows, threshold, labels, hs] = labelled;
  const std::vector<std::uint8_t> y_hold = rows_of(labels, hs.holdout);
  const at::Tensor y_train = at::tensor(std::vector<double>(labels.begin(), labels.end()), at::kDouble)
                                 .index_select(0, at::tensor(hs.train, at::kLong));

  if (rows.x.size(1) != in.model->config().d_model)
    throw StorageError(in.unit_id + ": captured X has width " + std::to_string(rows.x.size(1)) + ", the model " +
                           std::to_string(in.model->config().d_model),
                       ExitCode::kBadInput);
  if (rows.next_token_ids.size() != rows.token_ids.size())
    throw StorageError(in.unit_id +
                           ": the lookup by the predicted token needs the capture's next_token_ids, which its shards "
                           "lack; run the sweep into a new store",
                       ExitCode::kBadInput);
  for (const auto* ids : {&rows.token_ids, &rows.next_token_ids})
    for (auto id : *ids)
      if (id < 0 || id >= in.model->config().vocab_size)
        throw StorageError(in.unit_id + ": captured token id " + std::to_string(id) + " is outside the vocabulary",
                           ExitCode::kBadInput);
  const at::Tensor x = rows.x.to(at::kDouble);
  const at::Tensor windows = captured_window_ids(rows);
  const auto [e, r_block, r] = residual_components(in, windows, layer, std::max<std::int64_t>(in.batch, 1));
  const at::Tensor c = r - e, c_block = r_block - e;
  std::vector<TokenContextRow> out_rows;
  const at::Tensor r_norms = r.norm(2, 1), e_norms = e.norm(2, 1), c_norms = c.norm(2, 1);
  const double r_norm = r_norms.mean().item<double>(), e_norm = e_norms.mean().item<double>(),
               c_norm = c_norms.mean().item<double>();
  const double cosine = at::cosine_similarity(e, c, 1).mean().item<double>();
  const double r_block_norm = r_block.norm(2, 1).mean().item<double>(),
               c_block_norm = c_block.norm(2, 1).mean().item<double>(),
               cosine_block = at::cosine_similarity(e, c_block, 1).mean().item<double>();
  const std::vector<std::int64_t> hold_windows = rows_of(rows.window, hs.holdout);
  auto add = [&](const std::string& variant, const std::vector<double>& hold_scores) {
    const auto [lo, hi] = bootstrap_auc_interval(hold_scores, y_hold, hold_windows, p.bootstrap, seed);
    out_rows.push_back({.model = in.model_name,
                        .layer = layer,
                        .variant = variant,
                        .auc = roc_auc(hold_scores, y_hold),
                        .corpus = in.corpus_name,
                        .e_norm = e_norm,
                        .c_norm = c_norm,
                        .cosine = cosine,
                        .samples = rows.size(),
                        .auc_ci_low = lo,
                        .auc_ci_high = hi,
                        .r_norm = r_norm,
                        .r_block_norm = r_block_norm,
                        .c_block_norm = c_block_norm,
                        .cosine_block = cosine_block});
  };
  GateTraining training;
  training.seed = seed;
  for (const auto& [name, features] : {std::pair<const char*, at::Tensor>{"X", x},
                                       {"r", r},
                                       {"e", e},
                                       {"c", c},
                                       {"paper", x - e},
                                       {"r_block", r_block},
                                       {"c_block", c_block}}) {
    const Gate g = Gate::train(GateVariant{}, rows_of(features, hs.train), y_train, training);
    add(name, to_vector(g.logits(rows_of(features, hs.holdout))));
  }
  // Lookups: each token's label rate on the training rows, the token being the one δ scores
  // (at t + 1, the paper's key) or the input token (at t); unseen tokens get the overall rate.
  add("token_lookup", token_lookup(rows.next_token_ids, labels, hs));
  add("token_lookup_input", token_lookup(rows.token_ids, labels, hs));
  std::vector<double> random;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (std::size_t i = 0; i < hs.holdout.size(); ++i) random.push_back(uniform(rng));
  add("random", random);

  UnitResult out = unit_result(in);
  out.tables.push_back(token_context_table().table(out_rows));
  // Per row: ‖r‖, ‖e‖, ‖c‖ (r: the stream the MLP's norm reads); r and r_block of the first
  // window, so that another implementation of the architecture can check the streams themselves;
  // and the hold-out rows, so that it can check the AUCs.
  const std::string key = "token_context/" + in.model_name + "/" + in.corpus_name + "/layer" + std::to_string(layer);
  const std::int64_t n = rows.size(), per_window = windows.size(1);
  out.arrays[key + "/r_norm"] = {{n}, to_vector(r_norms)};
  out.arrays[key + "/e_norm"] = {{n}, to_vector(e_norms)};
  out.arrays[key + "/c_norm"] = {{n}, to_vector(c_norms)};
  out.arrays[key + "/r_first_window"] = {{per_window, r.size(1)}, to_vector(r.slice(0, 0, per_window))};
  out.arrays[key + "/r_block_first_window"] = {{per_window, r.size(1)}, to_vector(r_block.slice(0, 0, per_window))};
  out.arrays[key + "/holdout"] = {{static_cast<std::int64_t>(hs.holdout.size())},
                                  std::vector<double>(hs.holdout.begin(), hs.holdout.end())};
  return out;
}

// The forward pass and four feature sets (X, r, e, c) of the gate split's captured rows.
MemoryNeed token_context_memory(const MemoryQuery& q) {
  MemoryNeed n = forward_need(q);
  n.activations += 4 * captured_rows(q, "gate") * static_cast<double>(q.model.d_model) * 4;
  return n;
}

const UnitKindRegistrar kTokenContextKind{"token_context", run_token_context, /*needs_model=*/true,
                                          token_context_memory, /*runs_split=*/true};

bool has_interval(const TokenContextRow& r) { return std::isfinite(r.auc_ci_low) && std::isfinite(r.auc_ci_high); }

// A variant as the report names it: the two lookups say which one a router could deploy.
std::string variant_label(const std::string& variant) {
  if (variant == "token_lookup_input") return "token_lookup_input (deployable)";
  if (variant == "token_lookup") return "token_lookup (predicted: which tokens are hurt, not deployable)";
  return variant;
}

std::string auc_cell(const TokenContextRow& r) {
  return has_interval(r) ? fmt::format("{} [{}, {}]", num(r.auc, 3), num(r.auc_ci_low, 3), num(r.auc_ci_high, 3))
                         : num(r.auc, 3);
}

// A pivot: one row per (model, corpus, layer), one AUC column per variant, then ‖r‖, ‖e‖, ‖c‖
// and cos(e, c).
void token_context_tables(const TableSet& tables, std::vector<ReportTable>* out) {
  const auto rows = token_context_table().sorted_rows(
      tables, [](const TokenContextRow& r) { return std::tie(r.model, r.corpus, r.layer); });
  if (rows.empty()) return;
  std::vector<std::string> variants;
  struct Cell {
    std::map<std::string, std::string> auc;  // "0.567 [0.542, 0.590]"; the AUC alone before intervals were kept
    double r = 0, e = 0, c = 0, cos = 0;
  };
  std::map<std::tuple<std::string, std::string, std::int64_t>, Cell> cells;
  for (const auto& r : rows) {
    if (std::find(variants.begin(), variants.end(), r.variant) == variants.end()) variants.push_back(r.variant);
    Cell& c = cells[{r.model, r.corpus, r.layer}];
    c.auc[r.variant] = auc_cell(r);
    c.r = r.r_norm, c.e = r.e_norm, c.c = r.c_norm, c.cos = r.cosine;
  }
  ReportTable rt{"token_context",
                 "Token vs context: gate AUC on the MLP input X, on the residual stream r the MLP's norm reads, "
                 "on its token component e and its context c = r − e, on the paper's X − e, and on the stream "
                 "entering the block (r_block, c_block = r_block − e)",
                 {"model", "corpus", "layer"},
                 {},
                 "AUCs with their 95% bootstrap interval over hold-out rows. Norms and the cosine are of the residual "
                 "stream the MLP's norm reads: r = e + c (the stream entering the block plus its attention; for a "
                 "parallel-residual block, the stream entering it). token_lookup_input: each input token's (t) label "
                 "rate on the training rows, a rule a router can deploy; token_lookup: the same keyed by the token δ "
                 "scores (t + 1), which no router knows at t: it says which tokens are hurt, and is no rival to a "
                 "gate.",
                 "Table 4"};
  for (const auto& v : variants) rt.headers.push_back("AUC " + variant_label(v));
  for (const char* h : {"‖r‖", "‖e‖", "‖c‖", "cos(e, c)"}) rt.headers.push_back(h);
  for (const auto& [key, c] : cells) {
    std::vector<std::string> row = {std::get<0>(key), std::get<1>(key), std::to_string(std::get<2>(key))};
    for (const auto& v : variants) row.push_back(c.auc.count(v) ? c.auc.at(v) : "");
    for (double v : {c.r, c.e, c.c, c.cos}) row.push_back(num(v, 3));
    rt.rows.push_back(std::move(row));
  }
  out->push_back(std::move(rt));
}

// AUC per layer: per model, a panel per corpus with one series per variant.
void token_context_figures(const FigureInput& in, std::vector<Figure>* out) {
  std::vector<SeriesPoint> points;
  for (const auto& r : token_context_table().rows(in.tables))
    points.push_back({r.model + "\n" + r.corpus, variant_label(r.variant), static_cast<double>(r.layer), r.auc,
                      r.auc_ci_low, r.auc_ci_high, has_interval(r)});
  std::map<std::string, SvgFigure> figures;
  for (auto& [chart, series] : group_series(points)) {
    const std::string model = chart.substr(0, chart.find('\n')), corpus = chart.substr(chart.find('\n') + 1);
    SvgChart panel(corpus, "layer", "hold-out AUC (0.5: chance)");
    for (auto& [label, s] : series) panel.add_series(std::move(s));
    figures.try_emplace(model, "Gate AUC on X, on the residual r, its token part e and its context c: " + model, 2)
        .first->second.add(panel);
  }
  for (const auto& [model, fig] : figures)
    out->push_back({"token_context_" + safe_name(model), fig.render(), "Token against context: gate AUC per layer",
                    "One panel per corpus: AUC on the gate split's hold-out of linear gates on X, on the residual r "
                    "the MLP's norm reads, on e and c = r − e, on the paper's X − e, on the stream entering the "
                    "block and its context (r_block, c_block), of per-token lookups (by the input token, which a "
                    "router can deploy, and by the predicted token, which no router knows: which tokens are hurt) "
                    "and of a random score; bars: 95% bootstrap intervals over the hold-out rows.",
                    model, ""});
}

// Per (model, corpus, layer), the lookup by the input token and the gate on the context c =
// r − e, where both have intervals. Both are rules a router can apply at t; the lookup by the
// predicted token is not (it keys by the token being predicted), so it never stands against a
// gate in the findings.
using LayerKey = std::tuple<std::string, std::string, std::int64_t>;
struct TokenAgainstContext {
  const TokenContextRow* token = nullptr;
  const TokenContextRow* context = nullptr;
  int apart() const {  // +1: the lookup ahead by the intervals, −1: the context, 0: they overlap
    if (token->auc_ci_low > context->auc_ci_high) return 1;
    return context->auc_ci_low > token->auc_ci_high ? -1 : 0;
  }
};
std::map<LayerKey, TokenAgainstContext> token_against_context(const std::vector<TokenContextRow>& rows) {
  std::map<LayerKey, std::map<std::string, const TokenContextRow*>> layers;
  for (const auto& r : rows) layers[{r.model, r.corpus, r.layer}][r.variant] = &r;
  std::map<LayerKey, TokenAgainstContext> out;
  for (const auto& [key, variants] : layers) {
    const auto t = variants.find("token_lookup_input"), c = variants.find("c");
    if (t != variants.end() && c != variants.end() && has_interval(*t->second) && has_interval(*c->second))
      out[key] = {t->second, c->second};
  }
  return out;
}

// Token against context per (model, corpus): at how many layers the input-token lookup and the
// context gate are apart by their intervals, either way.
void token_context_findings(const TableSet& tables, std::vector<Finding>* out) {
  const auto rows = token_context_table().rows(tables);
  struct Tally {
    int token = 0, context = 0, layers = 0;
  };
  std::map<std::pair<std::string, std::string>, Tally> tallies;
  for (const auto& [key, pair] : token_against_context(rows)) {
    Tally& tally = tallies[{std::get<0>(key), std::get<1>(key)}];
    tally.token += pair.apart() > 0, tally.context += pair.apart() < 0, ++tally.layers;
  }
  for (const auto& [key, t] : tallies)
    out->push_back({key.first, key.second, "input token vs context, AUC (deployable)",
                    fmt::format("input-token lookup ahead at {}/{} layers, context c at {} (apart by their intervals)",
                                t.token, t.layers, t.context)});
}

// Across the store, the same count, with the AUCs of one layer as an example: the middle layer
// of the first model and corpus in name order (a rule that reads no result).
void token_context_headlines(const TableSet& tables, std::vector<std::string>* out) {
  const auto rows = token_context_table().rows(tables);
  const auto pairs = token_against_context(rows);
  if (pairs.empty()) return;
  int token = 0, context = 0;
  std::vector<const TokenAgainstContext*> first;
  for (const auto& [key, pair] : pairs) {
    token += pair.apart() > 0, context += pair.apart() < 0;
    if (std::get<0>(key) == std::get<0>(pairs.begin()->first) && std::get<1>(key) == std::get<1>(pairs.begin()->first))
      first.push_back(&pair);
  }
  const TokenAgainstContext& example = *first[(first.size() - 1) / 2];
  const TokenContextRow& t = *example.token;
  const TokenContextRow& c = *example.context;
  out->push_back(fmt::format(
      "Against a lookup table of the input token, the rule a router could deploy in its place, a linear gate on the "
      "context c = r − e has the higher hold-out AUC at {} of {} layers and the lower at {} (95% intervals apart); "
      "at layer {} of {} on {}, c scores {} and the lookup {}.",
      context, pairs.size(), token, t.layer, t.model, t.corpus, auc_sentence(c.auc, c.auc_ci_low, c.auc_ci_high),
      auc_sentence(t.auc, t.auc_ci_low, t.auc_ci_high)));
}

const SectionRegistrar kTokenContextSection{{"token_context", 40, token_context_tables, token_context_figures,
                                             token_context_findings, token_context_headlines}};

}  // namespace
}  // namespace linsweep
