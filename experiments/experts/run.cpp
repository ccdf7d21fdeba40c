// `experts`: per expert of one sparse layer, an affine surrogate fitted on the fit-split rows the
// router sends to it, substituted for that expert alone on the eval split, and the router's view
// of the untouched model (docs/methods.md, "Experts"). The fit pass runs the model only up to the
// layer; each eval batch runs once untouched, caching the stream entering the layer, and then
// once per expert from the layer on.
#include <ATen/ATen.h>

#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "common/errors.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/eval/scoring.hpp"
#include "engine/model/language_model.hpp"
#include "experiments/experts/experts_unit.hpp"
#include "experiments/framework/experiment.hpp"
#include "experiments/framework/unit_data.hpp"
#include "experiments/numerics/normal_equations.hpp"
#include "experiments/numerics/ridge.hpp"
#include "experiments/numerics/window_nll.hpp"

namespace linsweep {
namespace {

// The router's view over every position of the eval windows, as sums that add over ranks:
// [0, E) choices per expert, [E, 2E) their mixing weights, then Σ entropy of the softmax over
// all experts, Σ entropy of the renormalised top-k weights, and the positions.
struct RouterSums {
  std::int64_t experts = 0;
  std::vector<double> v;

  explicit RouterSums(std::int64_t e) : experts(e), v(static_cast<std::size_t>(2 * e + 3), 0.0) {}
  double& entropy() { return v[static_cast<std::size_t>(2 * experts)]; }
  double& topk_entropy() { return v[static_cast<std::size_t>(2 * experts + 1)]; }
  double& positions() { return v[static_cast<std::size_t>(2 * experts + 2)]; }

  void add(const RouterDecision& r) {
    const std::int64_t k = r.experts.size(-1);
    const at::Tensor chosen = r.experts.reshape({-1}).to(at::kCPU);
    const at::Tensor weights = r.weights.reshape({-1, k}).to(at::kCPU, at::kDouble);
    const at::Tensor counts = at::bincount(chosen, {}, experts).to(at::kDouble);
    const at::Tensor mixed = at::zeros({experts}, weights.options()).index_add_(0, chosen, weights.reshape({-1}));
    const at::Tensor p = at::softmax(r.logits.reshape({-1, experts}).to(at::kCPU, at::kDouble), -1);
    const at::Tensor q = weights / weights.sum(-1, /*keepdim=*/true);
    for (std::int64_t e = 0; e < experts; ++e) {
      v[static_cast<std::size_t>(e)] += counts[e].item<double>();
      v[static_cast<std::size_t>(experts + e)] += mixed[e].item<double>();
    }
    entropy() -= at::xlogy(p, p).sum().item<double>();  // 0·log 0 = 0
    topk_entropy() -= at::xlogy(q, q).sum().item<double>();
    positions() += static_cast<double>(p.size(0));
  }
};

// Every expert's normal equations over the fit windows' rows routed to it, summed over the group.
std::vector<NormalEquationSums> expert_sums(const ExperimentInput& in, const Windows& w, std::int64_t layer,
                                            std::int64_t experts) {
  LanguageModel& model = *in.model;
  const auto f64 = at::TensorOptions().dtype(at::kDouble).device(model.parameters().front().device());
  std::vector<NormalEquationSums> sums;
  sums.reserve(static_cast<std::size_t>(experts));  // the capture holds a reference
  for (std::int64_t e = 0; e < experts; ++e) sums.emplace_back(model.config().d_model, f64);
  model.hook(layer).moe().set_expert_capture(
      [&sums](const ExpertBatch& b) { sums[static_cast<std::size_t>(b.expert)].add(b.x, b.y); });
  for_my_windows(in, w, [&](const at::Tensor& ids, std::size_t) {  // resets the hooks when done
    at::Tensor h = model.embed(ids);
    for (std::int64_t l = 0; l <= layer; ++l) h = model.run_layer(l, h);  // later layers see nothing new
  });
  if (in.group != nullptr)
    for (NormalEquationSums& s : sums) s.allreduce(*in.group);
  return sums;
}

// Per-window NLL sums of the eval windows: block 0 untouched, block 1 + e with expert e alone
// replaced by maps[e] (left 0 where it has none); the router's view of the untouched passes.
std::vector<double> expert_nll(const ExperimentInput& in, const Windows& w, std::int64_t layer,
                               const std::vector<std::optional<AffineMap>>& maps, RouterSums& router) {
  LanguageModel& model = *in.model;
  const auto count = static_cast<std::size_t>(w.count);
  std::vector<double> nll((1 + maps.size()) * count, 0.0);
  for_my_windows(in, w, [&](const at::Tensor& ids, std::size_t at_window) {
    MoeHook& moe = model.hook(layer).moe();
    at::Tensor entering = model.embed(ids);
    for (std::int64_t l = 0; l < layer; ++l) entering = model.run_layer(l, entering);
    moe.set_router_observer([&router](const RouterDecision& r) { router.add(r); });
    const at::Tensor base = model.hidden_from(layer, entering);
    moe.set_router_observer(nullptr);
    score_hidden(model, base, ids, &nll[at_window], nullptr);
    for (std::size_t e = 0; e < maps.size(); ++e) {
      if (!maps[e]) continue;
      moe.use_expert_affine(static_cast<std::int64_t>(e), *maps[e]);
      score_hidden(model, model.hidden_from(layer, entering), ids, &nll[(1 + e) * count + at_window], nullptr);
      moe.use_expert(static_cast<std::int64_t>(e));
    }
  });
  if (in.group != nullptr) {  // each window is non-zero on one rank
    in.group->allreduce_sum(nll);
    in.group->allreduce_sum(router.v);
  }
  return nll;
}

// The surrogate of every expert with fit rows (λ of the unit), and its fit.
struct ExpertFits {
  std::vector<std::optional<AffineMap>> maps;
  std::vector<std::optional<RidgeFit>> fits;
  std::vector<std::int64_t> rows;
};

ExpertFits solve_experts(const std::vector<NormalEquationSums>& sums, double lambda) {
  ExpertFits out;
  for (const NormalEquationSums& s : sums) {
    out.rows.push_back(s.rows());
    if (s.rows() == 0) {
      out.maps.emplace_back(), out.fits.emplace_back();
      continue;
    }
    const SurrogateStats stats = s.centred();
    RidgeFit f = std::move(solve_ridge(stats, {lambda}).front());
    const std::int64_t d = stats.d;
    out.maps.push_back(AffineMap{at::from_blob(f.fit.weight.data(), {d, d}, at::kDouble).to(at::kFloat),
                                 at::from_blob(f.fit.bias.data(), {d}, at::kDouble).to(at::kFloat)});
    out.fits.push_back(std::move(f));
  }
  return out;
}

std::string flag_of(std::int64_t rows, std::int64_t d) {
  if (rows == 0) return "no fit rows: the router chose the expert at no fit-split position";
  if (rows < d) return "fewer fit rows (" + std::to_string(rows) + ") than the width d (" + std::to_string(d) + ")";
  return "";
}

UnitResult run_experts(const ExperimentInput& in) {
  LanguageModel& model = *in.model;
  const auto p = in.params.get<ExpertsUnitParams>();
  const std::int64_t E = model.hook(p.layer).moe().experts(), context = p.basics.context;
  if (E == 0 || E != p.experts)
    throw InputError(in.unit_id + ": layer " + std::to_string(p.layer) + " of '" + in.model_name + "' has " +
                     std::to_string(E) + " experts, its plan " + std::to_string(p.experts) +
                     " (was the model changed after planning?)");
  const std::vector<TokenId> stream = unit_stream(in);
  const Windows fit = unit_windows(in, stream, p.fit, context),
                eval = unit_windows(in, stream, p.basics.split, context);
  check_windows(model, fit);
  check_windows(model, eval);

  ExpertFits fits = solve_experts(expert_sums(in, fit, p.layer, E), p.basics.lambda);
  RouterSums router(E);
  const std::vector<double> nll = expert_nll(in, eval, p.layer, fits.maps, router);

  const auto count = static_cast<std::size_t>(eval.count);
  const double tokens = static_cast<double>(eval.count * (context - 1));
  const std::vector<double> base = block(nll, 0, count);
  const double ppl_base = perplexity(base, tokens), positions = router.positions();
  const std::int64_t k = model.config().moe.top_k, d = model.config().d_model;
  std::vector<ExpertRow> rows;
  std::vector<std::pair<std::string, std::vector<double>>> series{{"base", base}};
  for (std::int64_t e = 0; e < E; ++e) {
    const auto i = static_cast<std::size_t>(e);
    const double chosen = router.v[i];
    ExpertRow r{.model = in.model_name,
                .layer = p.layer,
                .corpus = in.corpus_name,
                .expert = e,
                .share = positions > 0 ? chosen / (positions * static_cast<double>(k)) : NAN,
                .mean_weight = chosen > 0 ? router.v[static_cast<std::size_t>(E) + i] / chosen : NAN,
                .fit_rows = fits.rows[i],
                .r2 = NAN,
                .rel_mse = NAN,
                .ppl_base = ppl_base,
                .ppl_expert = NAN,
                .delta_pct = NAN,
                .ci_low = NAN,
                .ci_high = NAN,
                .tokens = static_cast<std::int64_t>(tokens),
                .router_entropy = positions > 0 ? router.entropy() / positions : NAN,
                .topk_entropy = positions > 0 ? router.topk_entropy() / positions : NAN,
                .experts = E,
                .top_k = k,
                .family = model.config().architecture,
                .flag = flag_of(fits.rows[i], d)};
    if (fits.fits[i]) {
      const std::vector<double> replaced = block(nll, 1 + i, count);
      const auto seed = static_cast<std::uint64_t>(p.seed + p.layer * E + e);
      std::tie(r.ci_low, r.ci_high) = bootstrap_delta_interval(base, replaced, context - 1, p.bootstrap, seed);
      r.r2 = fits.fits[i]->r2;
      r.rel_mse = fits.fits[i]->rel_mse;
      r.ppl_expert = perplexity(replaced, tokens);
      r.delta_pct = 100.0 * (r.ppl_expert / ppl_base - 1.0);
      series.emplace_back("expert" + std::to_string(e), replaced);
    }
    rows.push_back(std::move(r));
  }
  UnitResult out = unit_result(in);
  out.tables.push_back(experts_table().table(rows));
  add_window_nll(out, window_nll_key(in.model_name, in.corpus_name, "experts", p.layer), p.basics.split, context,
                 series);
  return out;
}

const UnitKindRegistrar kExpertsKind{"experts", run_experts, /*needs_model=*/true, {}, /*runs_split=*/true};

}  // namespace
}  // namespace linsweep
