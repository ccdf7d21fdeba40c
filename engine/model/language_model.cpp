// Shared LanguageModel helpers.
#include "engine/model/language_model.hpp"

#include <ATen/ATen.h>

#include "common/errors.hpp"

namespace linsweep {

LanguageModel::LanguageModel(ModelConfig config) : config_(std::move(config)), hooks_(config_.n_layers) {
  for (int64_t l = 0; l < config_.n_layers; ++l)
    if (config_.sparse(l)) hooks_[static_cast<std::size_t>(l)].moe() = MoeHook(config_.moe.experts);
}

MlpHook& LanguageModel::hook(int64_t layer) {
  if (layer < 0 || layer >= config_.n_layers)
    throw ModelError("layer " + std::to_string(layer) + " is outside the model's 0.." +
                     std::to_string(config_.n_layers - 1));
  return hooks_[static_cast<std::size_t>(layer)];
}

at::Tensor LanguageModel::mlp_stream(int64_t layer, const at::Tensor& h) {
  if (config_.parallel_residual) {
    hook(layer);  // the range check
    return h;
  }
  MlpHook& slot = hook(layer);
  struct Restore {
    MlpHook& slot;
    MlpHook saved;
    ~Restore() { slot = std::move(saved); }
  } restore{slot, slot};
  slot.clear_capture();
  slot.use_override([](const at::Tensor& x, const MlpFn&) { return at::zeros_like(x); });
  return run_layer(layer, h);
}

at::Tensor LanguageModel::hidden_states(const at::Tensor& ids, KvCache& cache) {
  if (ids.dim() != 2) throw ModelError("generation: ids must be [B, T]");
  cache.check_room(ids.size(0), ids.size(1));
  at::Tensor h = embed_at(ids, cache.length());
  for (int64_t l = 0; l < config_.n_layers; ++l) h = layer_step(l, h, &cache);
  cache.advance(ids.size(1));
  return final_norm(h);
}

at::Tensor LanguageModel::prefill(const at::Tensor& ids, KvCache& cache) {
  const at::Tensor h = hidden_states(ids, cache);
  return head(h.select(1, h.size(1) - 1));
}

KvCache LanguageModel::make_cache(int64_t batch, int64_t capacity) {
  const at::Tensor first = parameters().front();
  return KvCache(config_, batch, capacity, first.options().requires_grad(false));
}

void LanguageModel::reset_hooks() {
  for (int64_t l = 0; l < config_.n_layers; ++l) {
    MlpHook& h = hook(l);
    h.use_mlp();
    h.clear_capture();
    h.moe().reset();
  }
}

int64_t LanguageModel::parameter_count() const {
  int64_t n = 0;
  for (const auto& p : parameters()) n += p.numel();
  return n;
}

at::Tensor causal_mask(int64_t t, const at::Device& device) {
  return at::ones({t, t}, at::TensorOptions().dtype(at::kBool).device(device)).triu(1);
}

}  // namespace linsweep
