// The sparse mixture-of-experts block of Mixtral, Qwen2-MoE and OLMoE, in place of a layer's MLP.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <memory>
#include <vector>

#include "engine/model/dense.hpp"
#include "engine/model/mlp.hpp"
#include "engine/model/model_config.hpp"
#include "engine/model/moe_hook.hpp"

namespace linsweep {

// x [.., d] -> Σ_{e chosen} w_e · expert_e(x) (+ sigmoid(shared_gate·x) · shared(x)) [.., d]:
// the router "gate" [E, d] gives logits, their softmax in float32 the probabilities, the
// c.moe.top_k largest are chosen (renormalised to sum 1 with c.moe.normalize_top_k) and cast to
// x's dtype; each expert is a gated MLP of width c.moe.expert_d_ff without biases; the shared
// expert (c.moe.shared_d_ff > 0) and its gate [1, d] are Qwen2-MoE's. Parameters carry the
// checkpoint's names under the block (MoeNaming): gate.weight, experts.N.{w1,w3,w2 |
// gate_proj,up_proj,down_proj}.weight, shared_expert.*, shared_expert_gate.weight.
// Positions are grouped by expert (one sort of the choices), so a run costs one GEMM chain per
// expert that was chosen, never a loop over positions. Not thread safe (a torch module).
class MoeBlock : public torch::nn::Module {
 public:
  explicit MoeBlock(const ModelConfig& c);

  // Runs the block, reporting to and replacing experts by `hook` (moe_hook.hpp).
  at::Tensor operator()(const at::Tensor& x, MoeHook& hook);

 private:
  // The experts' weighted sum over flat [N, d] with the choices [N, k] and weights [N, k].
  at::Tensor mix_experts(const at::Tensor& flat, const at::Tensor& chosen, const at::Tensor& weights, MoeHook& hook);

  std::int64_t top_k_;
  bool normalize_;
  std::shared_ptr<Dense> gate_, shared_gate_;
  std::vector<std::shared_ptr<Mlp<Dense>>> experts_;
  std::shared_ptr<Mlp<Dense>> shared_;
};

}  // namespace linsweep
