// The keys and values of the positions a model has already read, so that generation computes
// each new token's attention against them instead of running the whole sequence again.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "engine/model/model_config.hpp"

namespace linsweep {

// Per layer, keys and values [B, kv_heads, capacity, head_dim] (after rotary and any q/k norm:
// what attention reads), allocated whole at construction; `length()` positions of each are
// filled. A forward over a window and a decode step run the same attention code: both append
// their positions' keys and values (append) and attend over every filled position, the window
// being positions length()..length()+T−1 of the sequence. Sliding-window layers keep every
// position too (the mask bounds what a query reads). Not thread safe: one model, one thread.
class KvCache {
 public:
  // Room for `capacity` positions of `batch` sequences in each of c.n_layers layers, in
  // `options`' dtype and device. Throws ModelError when batch or capacity is below 1 or the
  // capacity exceeds the model's positions (context_limit).
  KvCache(const ModelConfig& c, std::int64_t batch, std::int64_t capacity, const at::TensorOptions& options);

  std::int64_t length() const noexcept { return length_; }
  std::int64_t capacity() const noexcept { return capacity_; }
  std::int64_t batch() const noexcept { return batch_; }

  // Throws ModelError unless ids [B, T] fit: B equal to batch() and length() + T ≤ capacity().
  void check_room(std::int64_t batch, std::int64_t tokens) const;

  // Writes layer `layer`'s keys and values of T new positions, k and v [B, kv_heads, T, hd], at
  // positions length()..length()+T−1, and returns the layer's keys and values of positions
  // 0..length()+T−1 (views into the cache). Throws ModelError on a shape the cache was not made
  // for or no room (check_room).
  std::pair<at::Tensor, at::Tensor> append(std::int64_t layer, const at::Tensor& k, const at::Tensor& v);

  // Counts the T positions every layer has appended (LanguageModel calls it after its last
  // layer). Throws ModelError past the capacity.
  void advance(std::int64_t tokens);
  // Forgets every position (the memory is kept), for another sequence of the same batch size.
  void clear() noexcept { length_ = 0; }

 private:
  std::int64_t batch_, capacity_, kv_heads_, head_dim_;
  std::int64_t length_ = 0;
  std::vector<at::Tensor> keys_, values_;
};

}  // namespace linsweep
