// `all_linear`: the perplexity cost of replacing one layer's MLP by its surrogate everywhere,
// with a bootstrap 95% interval over windows (DESIGN §4).
#include <ATen/ATen.h>

#include <cmath>

#include "common/errors.hpp"
#include "experiments/experiment.hpp"
#include "experiments/unit_data.hpp"
#include "storage/surrogate_store.hpp"
#include "workers/eval/evaluator.hpp"
#include "workers/model/language_model.hpp"

namespace linsweep {
namespace {

UnitResult run_all_linear(const ExperimentInput& in) {
  if (in.deps.size() != 1) throw InputError(in.unit_id + ": all_linear needs exactly its fit unit");
  LanguageModel& model = *in.model;
  const auto layers = in.params["layers"].get<std::vector<std::int64_t>>();
  const double lambda = in.params["lambda"].get<double>();
  const std::int64_t context = in.params["context"].get<std::int64_t>();
  const Windows w = unit_windows(in, in.params["split"], context);
  EvalOptions opt;
  opt.batch = in.batch;
  HookReset reset(model);
  const EvalResult base = evaluate_sharded(in, w, opt);

  Table rows = empty_table("all_linear");
  for (std::int64_t layer : layers) {
    const StoredSurrogate s = get_surrogate(in.deps[0], surrogate_key(in.model_name, in.corpus_name, layer));
    const SurrogateFit* fit = nullptr;
    for (const auto& f : s.fits)
      if (f.lambda == lambda) fit = &f;
    if (fit == nullptr) throw InputError(in.unit_id + ": no surrogate with lambda " + std::to_string(lambda));
    const std::int64_t d = s.stats.d;
    AffineMap map{at::from_blob(const_cast<double*>(fit->weight.data()), {d, d}, at::kDouble).to(at::kFloat),
                  at::from_blob(const_cast<double*>(fit->bias.data()), {d}, at::kDouble).to(at::kFloat)};
    model.hook(layer).use_affine(std::move(map));
    const EvalResult lin = evaluate_sharded(in, w, opt);
    model.hook(layer).use_mlp();
    const double delta = 100.0 * (lin.ppl() / base.ppl() - 1.0);
    const auto [lo, hi] = bootstrap_delta_interval(base.window_nll, lin.window_nll, context - 1,
                                                   in.params["bootstrap"].get<std::int64_t>(),
                                                   in.params["seed"].get<std::uint64_t>() + static_cast<std::uint64_t>(layer));
    rows.rows.push_back({in.model_name, layer, in.corpus_name, base.ppl(), lin.ppl(), delta, lo, hi, base.tokens_scored});
  }
  UnitResult out;
  out.unit_id = in.unit_id;
  out.kind = in.kind;
  out.params = in.provenance;
  out.tables.push_back(std::move(rows));
  return out;
}

const ExperimentRegistrar kAllLinear{"all_linear", run_all_linear, /*needs_model=*/true};

}  // namespace
}  // namespace linsweep
