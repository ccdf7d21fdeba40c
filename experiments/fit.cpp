// `fit`: the λ grid of affine surrogates from stored statistics, with one eigendecomposition
// of XcᵀXc per layer (DESIGN §4); no model needed.
#include <ATen/ATen.h>

#include <algorithm>

#include "common/errors.hpp"
#include "experiments/experiment.hpp"
#include "experiments/unit_data.hpp"
#include "storage/surrogate_store.hpp"

namespace linsweep {
namespace {

at::Tensor tensor(const std::vector<double>& v, std::int64_t rows, std::int64_t cols) {
  return at::from_blob(const_cast<double*>(v.data()), {rows, cols}, at::kDouble).clone();
}

std::vector<double> values(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

UnitResult run_fit(const ExperimentInput& in) {
  if (in.deps.size() != 1) throw InputError(in.unit_id + ": a fit needs exactly its stats unit");
  const auto layers = in.params["layers"].get<std::vector<std::int64_t>>();
  auto lambdas = in.params["lambda"].get<std::vector<double>>();
  UnitResult out = unit_result(in);
  Table fits = empty_table("fits");
  for (std::int64_t layer : layers) {
    const std::string key = surrogate_key(in.model_name, in.corpus_name, layer);
    StoredSurrogate s = get_surrogate(in.deps[0], key);
    const std::int64_t d = s.stats.d;
    const double n = static_cast<double>(s.stats.n);
    const at::Tensor a = tensor(s.stats.xcxc, d, d), b = tensor(s.stats.xcyc, d, d);
    const at::Tensor mx = tensor(s.stats.mean_x, 1, d), my = tensor(s.stats.mean_y, 1, d);
    auto [evals, evecs] = at::linalg_eigh(a);                // ascending eigenvalues, XcᵀXc = V·diag(s)·Vᵀ
    const at::Tensor vtb = evecs.t().mm(b);                  // Vᵀ·XcᵀYc
    const double smax = evals.max().item<double>(), smin = std::max(0.0, evals.min().item<double>());
    const double total = s.stats.ycyc_trace + n * my.square().sum().item<double>();  // Σ‖y‖²
    for (double lambda : lambdas) {
      const at::Tensor w = evecs.mm(vtb / (evals + lambda).unsqueeze(1));  // (XcᵀXc + λI)⁻¹ XcᵀYc
      const at::Tensor bias = my - mx.mm(w);                                // ȳ − x̄·W
      // Residual sum of squares from the statistics: tr(YcᵀYc) − 2 tr(WᵀXcᵀYc) + tr(Wᵀ XcᵀXc W).
      const double ss_res = s.stats.ycyc_trace - 2 * (w * b).sum().item<double>() + (w * a.mm(w)).sum().item<double>();
      const double r2 = s.stats.ycyc_trace > 0 ? 1 - ss_res / s.stats.ycyc_trace : NAN;
      const double rel_mse = total > 0 ? ss_res / total : NAN;
      const double cond = (smax + lambda) / (smin + lambda);
      fits.rows.push_back({in.model_name, layer, in.corpus_name, lambda, s.stats.n, r2, rel_mse, cond});
      s.fits.push_back({lambda, values(w), values(bias.reshape({d}))});
    }
    put_surrogate(out, key, s);
  }
  // A fit that only serves training units (layers outside the sweep's) keeps its surrogates
  // but reports no rows: the sweep's own fit already reports the layers both cover.
  if (in.params.value("report", true)) out.tables.push_back(std::move(fits));
  return out;
}

const ExperimentRegistrar kFit{"fit", run_fit, /*needs_model=*/false};

}  // namespace
}  // namespace linsweep
