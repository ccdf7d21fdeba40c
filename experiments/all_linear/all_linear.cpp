// `all_linear`: the perplexity cost of replacing one layer's MLP by its surrogate at every
// position, with a bootstrap 95% interval over windows (docs/methods.md, "All-linear cost").
// One base pass per batch caches the residual stream entering every selected layer; layer ℓ's
// substitution then recomputes only layers ℓ..L−1 from that cache. The same costs on the select
// split, when the spec has one, are what progressive orders its layers by.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "common/errors.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/eval/scoring.hpp"
#include "engine/model/language_model.hpp"
#include "experiments/all_linear/all_linear_unit.hpp"
#include "experiments/fit/fit_units.hpp"
#include "experiments/framework/experiment.hpp"
#include "experiments/framework/unit_data.hpp"
#include "experiments/numerics/window_nll.hpp"
#include "storage/table_def.hpp"

namespace linsweep {
namespace {

struct AllLinearParams {
  std::int64_t bootstrap = 1000;
  std::int64_t seed = 0;
  bool prefix_cache = true;
};

const ParamSchema<AllLinearParams>& all_linear_schema() {
  static const ParamSchema<AllLinearParams> s =
      ParamSchema<AllLinearParams>()
          .add("bootstrap", &AllLinearParams::bootstrap, at_least(1),
               "bootstrap resamples of windows for the 95% interval")
          .add("seed", &AllLinearParams::seed, at_least(0), "seed of the bootstrap (plus the layer)")
          .add("prefix_cache", &AllLinearParams::prefix_cache, any_value(),
               "recompute only the layers after the substituted one (false: whole forward passes, for benchmarks)");
  return s;
}

struct AllLinearUnitParams {
  UnitBasics basics;                 // eval split, context, λ, format
  std::vector<std::int64_t> layers;  // ascending
  std::int64_t bootstrap = 0;
  std::int64_t seed = 0;
  bool prefix_cache = true;
  std::optional<Split> select;  // the spec's select split, when it has one: the cost that orders progressive
};
void to_json(nlohmann::json& j, const AllLinearUnitParams& p) {
  j = {{"layers", p.layers}, {"bootstrap", p.bootstrap}, {"seed", p.seed}, {"prefix_cache", p.prefix_cache}};
  put_basics(j, p.basics);
  if (p.select) j["select"] = *p.select;
}
void from_json(const nlohmann::json& j, AllLinearUnitParams& p) {
  p.basics = get_basics(j);
  j.at("layers").get_to(p.layers), j.at("bootstrap").get_to(p.bootstrap), j.at("seed").get_to(p.seed);
  j.at("prefix_cache").get_to(p.prefix_cache);
  if (j.contains("select")) p.select = j["select"].get<Split>();
}

const TableRegistrar kAllLinearTable{all_linear_table().schema()};

void expand_all_linear(const AllLinearParams& p, PlanBuilder& b) {
  const double lambda = first_lambda(b.sweep());
  for (const auto& m : b.sweep().models)
    for (const auto& c : b.sweep().corpora) {
      const std::string fit = b.provide("fit", m, c.name);
      AllLinearUnitParams u{
          b.basics(c.name, "eval", lambda), b.sweep_layers(m), p.bootstrap, p.seed, p.prefix_cache, std::nullopt};
      if (b.has_split("select")) u.select = b.split("select").get<Split>();
      b.add_with_inputs(Unit{.kind = "all_linear", .model = m.name, .corpus = c.name, .params = u, .deps = {fit}});
    }
}

const ExperimentRegistrar kAllLinear{make_experiment<AllLinearParams>(
    "all_linear", "Δ% perplexity of replacing each layer's MLP by its surrogate everywhere", 20, all_linear_schema(),
    expand_all_linear)};

// Per-window NLL sums of the windows `w`: nll[0·count + i] with every MLP, nll[(1 + k)·count + i]
// with the surrogate `maps[k]` at layers[k]; windows sharded over the group and summed.
std::vector<double> substituted_nll(const ExperimentInput& in, const Windows& w,
                                    const std::vector<std::int64_t>& layers, const std::vector<AffineMap>& maps,
                                    bool prefix_cache) {
  LanguageModel& model = *in.model;
  check_windows(model, w);
  const std::size_t L = layers.size();
  const auto count = static_cast<std::size_t>(w.count);
  std::vector<double> nll((L + 1) * count, 0.0);
  for_my_windows(in, w, [&](const at::Tensor& ids, std::size_t at_window) {  // ids [n, T]
    std::vector<at::Tensor> entering(L);                                     // [n, T, d] each
    at::Tensor h = model.embed(ids);
    for (std::int64_t l = 0, k = 0; l < model.num_layers(); ++l) {
      if (static_cast<std::size_t>(k) < L && layers[static_cast<std::size_t>(k)] == l)
        entering[static_cast<std::size_t>(k++)] = h;
      h = model.run_layer(l, h);
    }
    score_hidden(model, model.final_norm(h), ids, &nll[at_window], nullptr);
    for (std::size_t k = 0; k < L; ++k) {
      model.hook(layers[k]).use_affine(maps[k]);
      // prefix_cache: false recomputes the whole forward (the benchmark's baseline).
      const at::Tensor hidden = prefix_cache ? model.hidden_from(layers[k], entering[k]) : model.hidden_states(ids);
      score_hidden(model, hidden, ids, &nll[(1 + k) * count + at_window], nullptr);
      model.hook(layers[k]).use_mlp();
    }
  });
  if (in.group != nullptr) in.group->allreduce_sum(nll);  // each window is non-zero on one rank
  return nll;
}

UnitResult run_all_linear(const ExperimentInput& in) {
  if (in.deps.size() != 1) throw InputError(in.unit_id + ": all_linear needs exactly its fit unit");
  LanguageModel& model = *in.model;
  const auto p = in.params.get<AllLinearUnitParams>();
  const auto& layers = p.layers;
  const std::int64_t context = p.basics.context;
  const std::vector<TokenId> stream = unit_stream(in);
  const Windows w = unit_windows(in, stream, p.basics.split, context);

  std::vector<AffineMap> maps;
  for (std::int64_t layer : layers)
    maps.push_back(surrogate_map(in.deps[0], in.model_name, in.corpus_name, layer, p.basics.lambda, in.unit_id));

  const std::size_t L = layers.size();
  const auto count = static_cast<std::size_t>(w.count);
  const std::vector<double> nll = substituted_nll(in, w, layers, maps, p.prefix_cache);
  // The same costs on the select split: progressive orders its layers by them, never by eval's.
  std::vector<double> select_delta(L, std::nan(""));
  if (p.select) {
    const Windows s = unit_windows(in, stream, *p.select, context);
    const std::vector<double> snll = substituted_nll(in, s, layers, maps, p.prefix_cache);
    const auto n = static_cast<std::size_t>(s.count);
    const double stokens = static_cast<double>(s.count * (context - 1)), sbase = perplexity(block(snll, 0, n), stokens);
    for (std::size_t k = 0; k < L; ++k)
      select_delta[k] = 100.0 * (perplexity(block(snll, 1 + k, n), stokens) / sbase - 1.0);
  }

  const double tokens = static_cast<double>(w.count * (context - 1));
  const std::vector<double> base = block(nll, 0, count);
  const double ppl_base = perplexity(base, tokens);
  const std::int64_t params = model.parameter_count();
  std::vector<AllLinearRow> rows;
  for (std::size_t k = 0; k < L; ++k) {
    const std::vector<double> lin = block(nll, 1 + k, count);
    const double ppl_lin = perplexity(lin, tokens);
    const auto [lo, hi] =
        bootstrap_delta_interval(base, lin, context - 1, p.bootstrap,
                                 static_cast<std::uint64_t>(p.seed) + static_cast<std::uint64_t>(layers[k]));
    rows.push_back({.model = in.model_name,
                    .layer = layers[k],
                    .corpus = in.corpus_name,
                    .ppl_base = ppl_base,
                    .ppl_linear = ppl_lin,
                    .delta_pct = 100.0 * (ppl_lin / ppl_base - 1.0),
                    .ci_low = lo,
                    .ci_high = hi,
                    .tokens = static_cast<std::int64_t>(tokens),
                    .family = model.config().architecture,
                    .params = params,
                    .select_delta_pct = select_delta[k]});
  }
  UnitResult out = unit_result(in);
  out.tables.push_back(all_linear_table().table(rows));
  std::vector<std::pair<std::string, std::vector<double>>> series{{"base", base}};
  for (std::size_t k = 0; k < L; ++k)
    series.emplace_back("layer" + std::to_string(layers[k]), block(nll, 1 + k, count));
  add_window_nll(out, window_nll_key(in.model_name, in.corpus_name, "all_linear"), p.basics.split, context, series);
  return out;
}

// The forward pass and, per batch, the stream entering every selected layer (the prefix cache).
MemoryNeed all_linear_memory(const MemoryQuery& q) {
  MemoryNeed n = forward_need(q);
  const auto layers = static_cast<double>(q.params.at("layers").size());
  n.activations += layers * static_cast<double>(q.batch * q.context * q.model.d_model) * 4;
  return n;
}

const UnitKindRegistrar kAllLinearKind{"all_linear", run_all_linear, /*needs_model=*/true, all_linear_memory,
                                       /*runs_split=*/true};

}  // namespace
}  // namespace linsweep
