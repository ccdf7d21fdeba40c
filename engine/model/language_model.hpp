// Abstract decoder-only language model with named HF parameters and one MLP hook per layer.
#pragma once

#include <torch/nn/module.h>

#include <vector>

#include "engine/model/kv_cache.hpp"
#include "engine/model/mlp_hook.hpp"
#include "engine/model/model_config.hpp"

namespace linsweep {

// A trainable torch module (parameters carry HF checkpoint names, e.g. "h.0.mlp.c_fc.weight")
// whose every layer routes its MLP through hook(layer). Not thread safe: one thread drives it.
class LanguageModel : public torch::nn::Module {
 public:
  // One hook per layer; a sparse layer's (config.sparse) knows its experts (hook(l).moe()).
  explicit LanguageModel(ModelConfig config);

  // ids [B, T] int64 -> the residual stream entering layer 0 [B, T, d].
  at::Tensor embed(const at::Tensor& ids) { return embed_at(ids, 0); }
  // The residual stream entering `layer` [B, T, d] -> the stream entering layer + 1. Every
  // architecture adds its hook's output (or a norm of it, which maps 0 to 0) to a stream s, and
  // the MLP reads s or norm(s): mlp_stream relies on that.
  at::Tensor run_layer(int64_t layer, const at::Tensor& h) { return layer_step(layer, h, nullptr); }
  // The last norm: the stream after the last layer -> final hidden states.
  virtual at::Tensor final_norm(const at::Tensor& h) = 0;
  // h [.., d] -> logits [.., vocab] (vocab may be padded past the tokenizer).
  virtual at::Tensor head(const at::Tensor& h) = 0;
  // The token component e_t of the MLP input's residual stream: token embedding (+ position
  // embedding for GPT-2; times sqrt(d) for Gemma) for ids [B, T] -> [B, T, d].
  virtual at::Tensor input_embedding(const at::Tensor& ids) = 0;

  // ids [B, T] int64 -> final hidden states after the last norm [B, T, d].
  at::Tensor hidden_states(const at::Tensor& ids) { return hidden_from(0, embed(ids)); }
  // Runs layers layer..L-1 from the stream entering `layer`, then the last norm. With the
  // streams of an earlier pass cached, only the layers after a change are recomputed.
  at::Tensor hidden_from(int64_t layer, at::Tensor h) {
    for (int64_t l = layer; l < config_.n_layers; ++l) h = run_layer(l, h);
    return final_norm(h);
  }
  at::Tensor forward(const at::Tensor& ids) { return head(hidden_states(ids)); }

  // Generation (docs/methods.md, "Generation"): ids [B, T] that continue the sequences `cache`
  // holds, at positions cache.length()..cache.length()+T−1, -> final hidden states [B, T, d];
  // every layer's attention appends the window's keys and values to the cache and attends over
  // the cached positions too, and the cache then holds T more positions. The MLP hooks apply as
  // in a forward over a window. A prefill is this call on an empty cache with the prompt; a
  // decode step, with one new token per sequence. Throws ModelError when the cache was made for
  // another batch size or has no room for T more positions (the cache is then unchanged).
  at::Tensor hidden_states(const at::Tensor& ids, KvCache& cache);
  // The logits [B, vocab] of the last position after reading ids [B, T] into `cache`.
  at::Tensor prefill(const at::Tensor& ids, KvCache& cache);
  // One token per sequence, ids [B] int64 -> its logits [B, vocab]: prefill of a window of one.
  at::Tensor decode_step(const at::Tensor& ids, KvCache& cache) { return prefill(ids.unsqueeze(1), cache); }
  // An empty cache for `batch` sequences of up to `capacity` positions, on the device and in the
  // dtype of the model's parameters. Throws ModelError as KvCache's constructor does.
  KvCache make_cache(int64_t batch, int64_t capacity);
  // The residual stream whose norm is the MLP's input at `layer` [B, T, d], from the stream h
  // entering the block: h plus the block's attention for a sequential block (the block run with
  // its MLP's output held at zero), h itself for a parallel-residual one (attention and MLP both
  // read h). The layer's hook is restored afterwards, also when this throws; throws ModelError
  // when layer is out of range.
  at::Tensor mlp_stream(int64_t layer, const at::Tensor& h);

  const ModelConfig& config() const noexcept { return config_; }
  int64_t num_layers() const noexcept { return config_.n_layers; }
  // Throws ModelError when layer is out of range. Virtual: a model that wraps another hands out
  // the hooks of the one that runs the layers (staged_model.hpp).
  virtual MlpHook& hook(int64_t layer);
  // Resets every hook to the plain MLP with no capture, and its experts (MoeHook::reset).
  void reset_hooks();
  // Whether this process computes the model's outputs: false on every stage of a model split
  // over ranks but the last, whose token_nll is then zeros (the stages' sums add up to the
  // model's).
  virtual bool scores() const { return true; }
  // Whether this process computes `layer` (and runs its hook): false for the layers of the other
  // stages of a model split over ranks, whose stream passes through here unchanged.
  virtual bool holds(int64_t /*layer*/) const { return true; }
  // The model's parameters, counted once: the whole model's, also for a model split over ranks.
  virtual int64_t parameter_count() const;

 protected:
  // ids [B, T] -> the stream entering layer 0 for positions start..start+T−1 (the position
  // matters to learned position embeddings; rotary ones are applied in attention).
  virtual at::Tensor embed_at(const at::Tensor& ids, int64_t start) = 0;
  // run_layer; with `cache`, attention reads and extends it (hidden_states(ids, cache)) and the
  // window is at positions cache->length()... The cache is not advanced here.
  virtual at::Tensor layer_step(int64_t layer, const at::Tensor& h, KvCache* cache) = 0;

  ModelConfig config_;
  std::vector<MlpHook> hooks_;
};

// Causal mask [T, T] with true above the diagonal (positions that may not be attended).
at::Tensor causal_mask(int64_t t, const at::Device& device);

}  // namespace linsweep
