// Preallocated per-layer keys and values, filled position by position.
#include "engine/model/kv_cache.hpp"

#include <ATen/ATen.h>

#include <string>

#include "common/errors.hpp"

namespace linsweep {

KvCache::KvCache(const ModelConfig& c, std::int64_t batch, std::int64_t capacity, const at::TensorOptions& options)
    : batch_(batch), capacity_(capacity), kv_heads_(c.kv_heads()), head_dim_(c.head_dim()) {
  if (batch < 1 || capacity < 1)
    throw ModelError("KV cache: batch " + std::to_string(batch) + " and capacity " + std::to_string(capacity) +
                     " must be at least 1");
  if (capacity > c.max_context())
    throw ModelError("KV cache: " + std::to_string(capacity) + " positions exceed " + context_limit(c));
  for (std::int64_t l = 0; l < c.n_layers; ++l) {
    keys_.push_back(at::empty({batch, kv_heads_, capacity, head_dim_}, options));
    values_.push_back(at::empty({batch, kv_heads_, capacity, head_dim_}, options));
  }
}

void KvCache::check_room(std::int64_t batch, std::int64_t tokens) const {
  if (batch != batch_)
    throw ModelError("KV cache: made for " + std::to_string(batch_) + " sequences, given " + std::to_string(batch));
  if (tokens < 1 || length_ + tokens > capacity_)
    throw ModelError("KV cache: " + std::to_string(tokens) + " more positions after " + std::to_string(length_) +
                     " exceed its capacity of " + std::to_string(capacity_));
}

std::pair<at::Tensor, at::Tensor> KvCache::append(std::int64_t layer, const at::Tensor& k, const at::Tensor& v) {
  if (layer < 0 || layer >= static_cast<std::int64_t>(keys_.size()))
    throw ModelError("KV cache: no layer " + std::to_string(layer));
  if (k.dim() != 4 || k.sizes() != v.sizes() || k.size(1) != kv_heads_ || k.size(3) != head_dim_)
    throw ModelError("KV cache: keys and values must be [B, " + std::to_string(kv_heads_) + ", T, " +
                     std::to_string(head_dim_) + "]");
  check_room(k.size(0), k.size(2));
  const auto l = static_cast<std::size_t>(layer);
  const std::int64_t t = k.size(2), filled = length_ + t;
  keys_[l].narrow(2, length_, t).copy_(k);
  values_[l].narrow(2, length_, t).copy_(v);
  return {keys_[l].narrow(2, 0, filled), values_[l].narrow(2, 0, filled)};
}

void KvCache::advance(std::int64_t tokens) {
  check_room(batch_, tokens);
  length_ += tokens;
}

}  // namespace linsweep
