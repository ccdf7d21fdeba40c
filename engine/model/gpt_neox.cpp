// GPT-NeoX / Pythia (Black et al. 2022) with HF parameter names; registers "gpt_neox".
#include <ATen/ATen.h>
#include <torch/nn/init.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/normalization.h>

#include <cmath>
#include <tuple>

#include "engine/model/activation.hpp"
#include "engine/model/architecture_registry.hpp"
#include "engine/model/attention.hpp"
#include "engine/model/built_layer.hpp"
#include "engine/model/dense.hpp"
#include "engine/model/gpt_neox_config.hpp"
#include "engine/model/language_model.hpp"
#include "engine/model/linear_kernel.hpp"
#include "engine/model/mlp.hpp"
#include "engine/model/rotary.hpp"

namespace linsweep {
namespace {

class NeoxAttention : public torch::nn::Module {
 public:
  NeoxAttention(const ModelConfig& c, int64_t layer) : layer_(layer), heads_(c.n_heads), hd_(c.head_dim()), rotary_(c) {
    query_key_value_ = register_module("query_key_value", make_dense(c.d_model, 3 * c.d_model, c.attention_bias, c));
    dense_ = register_module("dense", make_dense(c.d_model, c.d_model, c.attention_bias, c));
  }

  // x [B, T, d] -> [B, T, d]; with a cache, at its next positions and attending over them too.
  at::Tensor operator()(const at::Tensor& x, KvCache* cache) {
    const auto B = x.size(0), T = x.size(1);
    const int64_t start = cache != nullptr ? cache->length() : 0;
    auto qkv =
        (*query_key_value_)(x).view({B, T, heads_, 3 * hd_}).permute({0, 2, 1, 3});  // [B, H, T, 3hd], per head q|k|v
    auto q = qkv.narrow(-1, 0, hd_);
    auto k = qkv.narrow(-1, hd_, hd_);
    auto v = qkv.narrow(-1, 2 * hd_, hd_);
    q = rotary_(q, start);
    k = rotary_(k, start);
    if (cache != nullptr) std::tie(k, v) = cache->append(layer_, k, v);
    return (*dense_)(causal_attention(q, k, v, 1.0 / std::sqrt(static_cast<double>(hd_))));
  }

 private:
  int64_t layer_, heads_, hd_;
  Rotary rotary_;
  std::shared_ptr<Dense> query_key_value_, dense_;
};

// dense_h_to_4h up to d_ff, the activation, dense_4h_to_h back (both with biases).
std::shared_ptr<Mlp<Dense>> make_neox_mlp(const ModelConfig& c) {
  return std::make_shared<Mlp<Dense>>(c, MlpNames{"dense_h_to_4h", "dense_4h_to_h"},
                                      [&c](int64_t in, int64_t out) { return make_dense(in, out, true, c); });
}

class NeoxLayer : public torch::nn::Module {
 public:
  NeoxLayer(const ModelConfig& c, int64_t layer) : parallel_(c.parallel_residual) {
    auto ln = torch::nn::LayerNormOptions({c.d_model}).eps(c.layer_norm_eps);
    input_layernorm_ = register_module("input_layernorm", torch::nn::LayerNorm(ln));
    post_attention_layernorm_ = register_module("post_attention_layernorm", torch::nn::LayerNorm(ln));
    attention_ = register_module("attention", std::make_shared<NeoxAttention>(c, layer));
    mlp_ = register_module("mlp", make_neox_mlp(c));
  }
  // h [B, T, d] -> [B, T, d]
  at::Tensor operator()(const at::Tensor& h, MlpHook& hook, KvCache* cache) {
    auto mlp = [this](const at::Tensor& t) { return (*mlp_)(t); };
    auto a = (*attention_)(input_layernorm_(h), cache);
    if (parallel_) {  // h + attn(ln1(h)) + mlp(ln2(h))
      at::Tensor x = post_attention_layernorm_(h);
      return h + a + hook.apply(x, mlp);
    }
    at::Tensor h2 = h + a;  // sequential: h + attn, then the MLP on its LayerNorm
    at::Tensor x = post_attention_layernorm_(h2);
    return h2 + hook.apply(x, mlp);
  }

 private:
  bool parallel_;
  torch::nn::LayerNorm input_layernorm_{nullptr}, post_attention_layernorm_{nullptr};
  std::shared_ptr<NeoxAttention> attention_;
  std::shared_ptr<Mlp<Dense>> mlp_;
};

// The "gpt_neox." part of the parameter names.
class NeoxBody : public torch::nn::Module {
 public:
  explicit NeoxBody(const ModelConfig& c) {
    if (c.builds_token_matrix()) {
      embed_in_ = register_module("embed_in", held_embedding(c.vocab_size, c.d_model, c));
      if (!c.built_to_load) torch::nn::init::normal_(embed_in_->weight, 0.0, 0.02);
    }
    auto list = torch::nn::ModuleList();
    for (int64_t i = 0; i < c.n_layers; ++i) {
      if (!c.builds_layer(i)) {
        layers_.push_back(nullptr);
        list->push_back(absent_layer());
        continue;
      }
      layers_.push_back(held_layer(std::make_shared<NeoxLayer>(c, i), c));
      list->push_back(layers_.back());
    }
    register_module("layers", list);
    final_layer_norm_ = register_module(
        "final_layer_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.d_model}).eps(c.layer_norm_eps)));
  }
  torch::nn::Embedding embed_in_{nullptr};
  std::vector<std::shared_ptr<NeoxLayer>> layers_;
  torch::nn::LayerNorm final_layer_norm_{nullptr};
};

class NeoxModel : public LanguageModel {
 public:
  explicit NeoxModel(const ModelConfig& c) : LanguageModel(c) {
    body_ = register_module("gpt_neox", std::make_shared<NeoxBody>(c));
    if (!c.tied_head && c.builds_output())
      embed_out_ = register_module("embed_out", make_dense(c.d_model, c.vocab_size, false, c));
  }

  at::Tensor input_embedding(const at::Tensor& ids) override { return body_->embed_in_(ids); }
  at::Tensor final_norm(const at::Tensor& h) override { return body_->final_layer_norm_(h); }

  at::Tensor head(const at::Tensor& h) override {
    return embed_out_ ? (*embed_out_)(h) : tied_head_(h, body_->embed_in_->weight, {});
  }

 protected:
  at::Tensor embed_at(const at::Tensor& ids, int64_t) override { return body_->embed_in_(ids); }  // [B, T, d]
  at::Tensor layer_step(int64_t l, const at::Tensor& h, KvCache* cache) override {
    return (*body_->layers_[static_cast<std::size_t>(l)])(h, hooks_[static_cast<std::size_t>(l)], cache);
  }

 private:
  std::shared_ptr<NeoxBody> body_;
  std::shared_ptr<Dense> embed_out_;
  LinearKernel tied_head_;
};

const ModelBodyRegistrar<NeoxModel> kNeoxBody{"gpt_neox"};

}  // namespace
}  // namespace linsweep
