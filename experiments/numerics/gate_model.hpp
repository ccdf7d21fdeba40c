// Gates that predict where the surrogate may replace the MLP: linear, pca:K and mlp:H (docs/methods.md, "Gates").
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <string>

#include "experiments/numerics/gate_variant.hpp"
#include "experiments/numerics/logistic_regression.hpp"
#include "experiments/numerics/pca.hpp"
#include "storage/unit_file.hpp"

namespace linsweep {

struct GateTraining {
  std::uint64_t seed = 0;         // mlp initialisation
  std::int64_t mlp_epochs = 300;  // full-batch Adam steps for mlp:H
  double mlp_lr = 1e-2;
  LogisticOptions logistic;  // linear and pca:K
};

// A trained gate: standardisation fitted on its training rows, then logistic regression on the
// standardised X (linear), on its first K principal components (pca:K), or σ(vᵀReLU(P·x) + c)
// (mlp:H). Immutable after training; logits() is thread-compatible.
class Gate {
 public:
  // Trains on x [n, d] (any float dtype) and labels [n] (0/1). Deterministic for a seed (one
  // standard library: the seeded draws use std::normal_distribution). Throws InputError when a
  // logistic fit ends with max |gradient| above 1e-6 (not solved), c10::Error on a label
  // count that does not match x.
  static Gate train(const GateVariant& variant, const at::Tensor& x, const at::Tensor& labels,
                    const GateTraining& options);
  // Reads a gate stored by save() under `prefix`; throws StorageError(kBadInput) naming it.
  static Gate load(const UnitResult& unit, const std::string& prefix);
  // Adds the gate's arrays under `prefix`: scaler/{mean,scale}, and logistic/{weight,bias,solver},
  // pca/{mean,components} or mlp/{P,v,c}, plus kind/size.
  void save(UnitResult& unit, const std::string& prefix) const;

  const GateVariant& variant() const noexcept { return variant_; }
  // Fitted parameters: d+1 (linear), K·d + K + 1 (pca:K: the projection and the logistic
  // weights), H·d + H + 1 (mlp:H). The standardisation (2·d) is not counted.
  std::int64_t parameter_count() const;
  // Logits [n] float64 for rows x [n, d] (any device; computed in float64). p = σ(logit);
  // routed linear iff p > 0.5, i.e. logit > 0.
  at::Tensor logits(const at::Tensor& x) const;
  // x [B, T, d] -> bool mask [B, T], true where the surrogate replaces the MLP: where the
  // logit exceeds `min_logit` (0: p > 0.5; −∞: every position; +∞: none).
  at::Tensor route(const at::Tensor& x, double min_logit = 0) const;

 private:
  GateVariant variant_;
  Standardizer scaler_;
  Pca pca_;                 // pca:K only
  LogisticModel logistic_;  // linear and pca:K
  at::Tensor p_, v_;        // mlp:H: P [H, d], v [H]
  double c_ = 0;
};

// The array prefix of one layer's gates in a gate unit: "gates/<model>/<corpus>/layer<l>";
// each variant under <prefix>/<variant name>, the selected one also under <prefix>/chosen.
std::string gate_key(const std::string& model, const std::string& corpus, std::int64_t layer);

}  // namespace linsweep
