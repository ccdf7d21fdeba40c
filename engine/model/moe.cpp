// Router, experts grouped by the positions routed to them, shared expert.
#include "engine/model/moe.hpp"

#include <ATen/ATen.h>
#include <torch/nn/modules/container/modulelist.h>

#include <tuple>

#include "engine/model/built_layer.hpp"

namespace linsweep {
namespace {

MlpNames expert_names(MoeNaming naming) {
  if (naming == MoeNaming::kBlockSparseMoe) return {.up = "w3", .down = "w2", .gate = "w1"};
  return {.up = "up_proj", .down = "down_proj", .gate = "gate_proj"};
}

// Experts are gated MLPs with separate projections, whatever the dense MLP's form.
ModelConfig expert_config(const ModelConfig& c) {
  ModelConfig e = c;
  e.gated_mlp = true;
  e.fused_gate_up = false;
  return e;
}

at::Tensor with_last(const at::Tensor& t, at::IntArrayRef leading) {
  auto shape = leading.vec();
  shape.push_back(t.size(-1));
  return t.reshape(shape);
}

}  // namespace

MoeBlock::MoeBlock(const ModelConfig& c) : top_k_(c.moe.top_k), normalize_(c.moe.normalize_top_k) {
  const ModelConfig ec = expert_config(c);
  auto make = [&c](std::int64_t in, std::int64_t out) { return make_dense(in, out, false, c); };
  gate_ = register_module("gate", make(c.d_model, c.moe.experts));
  auto list = torch::nn::ModuleList();
  for (std::int64_t e = 0; e < c.moe.experts; ++e) {
    experts_.push_back(std::make_shared<Mlp<Dense>>(ec, expert_names(c.moe.naming), make, c.moe.expert_d_ff));
    list->push_back(experts_.back());
  }
  register_module("experts", list);
  if (c.moe.shared_d_ff > 0) {
    shared_ = register_module("shared_expert", std::make_shared<Mlp<Dense>>(ec, expert_names(MoeNaming::kMlpExperts),
                                                                            make, c.moe.shared_d_ff));
    shared_gate_ = register_module("shared_expert_gate", make(c.d_model, 1));
  }
}

at::Tensor MoeBlock::operator()(const at::Tensor& x, MoeHook& hook) {
  const at::Tensor flat = x.reshape({-1, x.size(-1)});                                 // [N, d]
  const at::Tensor logits = (*gate_)(flat);                                            // [N, E]
  const at::Tensor probs = at::softmax(logits.to(at::kFloat), -1);                     // in float32, as HF's routers
  auto [weights, chosen] = probs.topk(top_k_, -1, /*largest=*/true, /*sorted=*/true);  // [N, k] each
  if (normalize_) weights = weights / weights.sum(-1, /*keepdim=*/true);
  weights = weights.to(x.scalar_type());
  if (hook.router_observer()) {
    const auto leading = x.sizes().slice(0, x.dim() - 1);
    hook.router_observer()({with_last(logits, leading), with_last(chosen, leading), with_last(weights, leading)});
  }
  at::Tensor out = mix_experts(flat, chosen, weights, hook);
  if (shared_) out = out + at::sigmoid((*shared_gate_)(flat)) * (*shared_)(flat);
  return out.view(x.sizes());
}

at::Tensor MoeBlock::mix_experts(const at::Tensor& flat, const at::Tensor& chosen, const at::Tensor& weights,
                                 MoeHook& hook) {
  // The N·k choices sorted by expert, stably: each expert's positions form one run, ascending.
  const at::Tensor choices = chosen.reshape({-1});
  const at::Tensor order = std::get<1>(at::sort(choices, c10::optional<bool>(true)));
  const at::Tensor positions = at::div(order, top_k_, "floor");
  const at::Tensor mixing = weights.reshape({-1}).index_select(0, order);
  const auto experts = static_cast<std::int64_t>(experts_.size());
  const at::Tensor counts = at::bincount(choices, {}, experts).to(at::kCPU);
  const auto* count = counts.data_ptr<std::int64_t>();
  at::Tensor out = at::zeros_like(flat);
  std::int64_t first = 0;
  for (std::int64_t e = 0; e < experts; first += count[e], ++e) {
    if (count[e] == 0) continue;
    const at::Tensor rows = positions.narrow(0, first, count[e]);
    const at::Tensor w = mixing.narrow(0, first, count[e]);
    const at::Tensor xe = flat.index_select(0, rows);  // [n, d]
    AffineMap* map = hook.expert_map(e);
    const bool own = map == nullptr || hook.expert_capture();
    const at::Tensor y_own = own ? (*experts_[static_cast<std::size_t>(e)])(xe) : at::Tensor();
    if (hook.expert_capture()) hook.expert_capture()({e, rows, xe, y_own, w});
    const at::Tensor y = map != nullptr ? apply_affine(*map, xe) : y_own;
    out.index_add_(0, rows, y * w.unsqueeze(1));
  }
  return out;
}

}  // namespace linsweep
