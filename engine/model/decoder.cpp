// The pre-norm decoder of Llama, Mistral, Qwen2 and Gemma (decoder_config.hpp names the
// variants) with HF parameter names; registers the body "decoder". Per layer:
//   h = h + o(attention(rotary(q(n1(h))), rotary(k(n1(h))), v(n1(h))))
//   h = h + mlp(n2(h))          mlp(x) = down(act(gate(x)) ⊙ up(x))
#include <ATen/ATen.h>
#include <torch/nn/init.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>

#include <cmath>
#include <optional>
#include <string>

#include "common/errors.hpp"
#include "engine/model/architecture_registry.hpp"
#include "engine/model/attention.hpp"
#include "engine/model/dense.hpp"
#include "engine/model/language_model.hpp"
#include "engine/model/linear_kernel.hpp"
#include "engine/model/mlp.hpp"
#include "engine/model/norm.hpp"
#include "engine/model/rotary.hpp"

namespace linsweep {
namespace {

// Grouped-query attention: H query heads share kv_heads key/value heads (H / kv_heads each);
// multi-query when kv_heads is 1, multi-head when it is H.
class DecoderAttention : public torch::nn::Module {
 public:
  explicit DecoderAttention(const ModelConfig& c)
      : heads_(c.n_heads), kv_heads_(c.kv_heads()), hd_(c.head_dim()), window_(c.sliding_window), rotary_(c) {
    const int64_t q = heads_ * hd_, kv = kv_heads_ * hd_;
    q_proj_ = register_module("q_proj", make_dense(c.d_model, q, c.attention_bias));
    k_proj_ = register_module("k_proj", make_dense(c.d_model, kv, c.attention_bias));
    v_proj_ = register_module("v_proj", make_dense(c.d_model, kv, c.attention_bias));
    o_proj_ = register_module("o_proj", make_dense(q, c.d_model, c.attention_out_bias));
  }

  // x [B, T, d] -> [B, T, d]
  at::Tensor operator()(const at::Tensor& x) {
    const auto B = x.size(0), T = x.size(1);
    if (window_ && T > *window_)
      throw ModelError("config.json: sliding_window " + std::to_string(*window_) + " is shorter than the " +
                       std::to_string(T) + "-token window; sliding-window attention is not implemented (use a " +
                       "context of at most " + std::to_string(*window_) + ")");
    auto split = [&](const at::Tensor& t, int64_t heads) { return t.view({B, T, heads, hd_}).transpose(1, 2); };
    at::Tensor q = rotary_(split((*q_proj_)(x), heads_));     // [B, H, T, hd]
    at::Tensor k = rotary_(split((*k_proj_)(x), kv_heads_));  // [B, KV, T, hd]
    at::Tensor v = split((*v_proj_)(x), kv_heads_);
    if (kv_heads_ != heads_) {  // query head h reads key/value head h / (H / KV)
      k = k.repeat_interleave(heads_ / kv_heads_, 1);
      v = v.repeat_interleave(heads_ / kv_heads_, 1);
    }
    return (*o_proj_)(causal_attention(q, k, v, 1.0 / std::sqrt(static_cast<double>(hd_))));
  }

 private:
  int64_t heads_, kv_heads_, hd_;
  std::optional<int64_t> window_;
  Rotary rotary_;
  std::shared_ptr<Dense> q_proj_, k_proj_, v_proj_, o_proj_;
};

class DecoderLayer : public torch::nn::Module {
 public:
  explicit DecoderLayer(const ModelConfig& c) {
    input_layernorm_ = register_module("input_layernorm", std::make_shared<Norm>(c.norm, c.d_model, c.layer_norm_eps));
    self_attn_ = register_module("self_attn", std::make_shared<DecoderAttention>(c));
    post_attention_layernorm_ =
        register_module("post_attention_layernorm", std::make_shared<Norm>(c.norm, c.d_model, c.layer_norm_eps));
    mlp_ = register_module(
        "mlp", std::make_shared<Mlp<Dense>>(c, MlpNames{.up = "up_proj", .down = "down_proj", .gate = "gate_proj"},
                                            [&c](int64_t in, int64_t out) { return make_dense(in, out, c.mlp_bias); }));
  }

  // h [B, T, d] -> [B, T, d]
  at::Tensor operator()(const at::Tensor& h, MlpHook& hook) {
    const at::Tensor h2 = h + (*self_attn_)((*input_layernorm_)(h));
    return h2 + hook.apply((*post_attention_layernorm_)(h2), [this](const at::Tensor& x) { return (*mlp_)(x); });
  }

 private:
  std::shared_ptr<Norm> input_layernorm_, post_attention_layernorm_;
  std::shared_ptr<DecoderAttention> self_attn_;
  std::shared_ptr<Mlp<Dense>> mlp_;
};

// The "model." part of the parameter names.
class DecoderBody : public torch::nn::Module {
 public:
  explicit DecoderBody(const ModelConfig& c) {
    embed_tokens_ = register_module("embed_tokens", torch::nn::Embedding(c.vocab_size, c.d_model));
    torch::nn::init::normal_(embed_tokens_->weight, 0.0, 0.02);
    auto list = torch::nn::ModuleList();
    for (int64_t i = 0; i < c.n_layers; ++i) {
      layers_.push_back(std::make_shared<DecoderLayer>(c));
      list->push_back(layers_.back());
    }
    register_module("layers", list);
    norm_ = register_module("norm", std::make_shared<Norm>(c.norm, c.d_model, c.layer_norm_eps));
  }
  torch::nn::Embedding embed_tokens_{nullptr};
  std::vector<std::shared_ptr<DecoderLayer>> layers_;
  std::shared_ptr<Norm> norm_;
};

class DecoderModel : public LanguageModel {
 public:
  explicit DecoderModel(const ModelConfig& c) : LanguageModel(c) {
    body_ = register_module("model", std::make_shared<DecoderBody>(c));
    if (!c.tied_head) lm_head_ = register_module("lm_head", make_dense(c.d_model, c.vocab_size, false));
  }

  // Gemma scales the embedding by sqrt(d), rounded to the stream's dtype as HF rounds it.
  at::Tensor input_embedding(const at::Tensor& ids) override {
    at::Tensor e = body_->embed_tokens_(ids);  // [B, T, d]
    if (!config_.scale_embedding) return e;
    return e * at::scalar_tensor(std::sqrt(static_cast<double>(config_.d_model)), e.options());
  }
  at::Tensor embed(const at::Tensor& ids) override { return input_embedding(ids); }
  at::Tensor run_layer(int64_t l, const at::Tensor& h) override {
    return (*body_->layers_[static_cast<std::size_t>(l)])(h, hooks_[static_cast<std::size_t>(l)]);
  }
  at::Tensor final_norm(const at::Tensor& h) override { return (*body_->norm_)(h); }
  at::Tensor head(const at::Tensor& h) override {
    return lm_head_ ? (*lm_head_)(h) : tied_head_(h, body_->embed_tokens_->weight, {});
  }

 private:
  std::shared_ptr<DecoderBody> body_;
  std::shared_ptr<Dense> lm_head_;
  LinearKernel tied_head_;
};

const ModelBodyRegistrar<DecoderModel> kDecoderBody{"decoder"};

}  // namespace
}  // namespace linsweep
