// Abstract decoder-only language model with named HF parameters and one MLP hook per layer.
#pragma once

#include <torch/nn/module.h>

#include <vector>

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
  virtual at::Tensor embed(const at::Tensor& ids) = 0;
  // The residual stream entering `layer` [B, T, d] -> the stream entering layer + 1. Every
  // architecture adds its hook's output (or a norm of it, which maps 0 to 0) to a stream s, and
  // the MLP reads s or norm(s): mlp_stream relies on that.
  virtual at::Tensor run_layer(int64_t layer, const at::Tensor& h) = 0;
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
  // The model's parameters, counted once: the whole model's, also for a model split over ranks.
  virtual int64_t parameter_count() const;

 protected:
  ModelConfig config_;
  std::vector<MlpHook> hooks_;
};

// Causal mask [T, T] with true above the diagonal (positions that may not be attended).
at::Tensor causal_mask(int64_t t, const at::Device& device);

}  // namespace linsweep
