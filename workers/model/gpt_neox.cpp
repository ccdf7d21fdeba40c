// GPT-NeoX / Pythia (Black et al. 2022) with HF parameter names; registers "gpt_neox".
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <torch/nn/init.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/normalization.h>

#include <cmath>

#include "workers/model/activation.hpp"
#include "workers/model/architecture_registry.hpp"
#include "workers/model/attention.hpp"
#include "workers/model/gpt_neox_config.hpp"
#include "workers/model/language_model.hpp"
#include "workers/model/linear_kernel.hpp"
#include "workers/model/mlp.hpp"

namespace linsweep {
namespace {

// nn.Linear's parameters (weight [out, in], optional bias [out]) on the LinearKernel.
class Dense : public torch::nn::Module {
 public:
  Dense(int64_t in, int64_t out, bool bias) {
    weight_ = register_parameter("weight", torch::empty({out, in}));
    torch::nn::init::normal_(weight_, 0.0, 0.02);
    if (bias) bias_ = register_parameter("bias", torch::zeros({out}));
  }
  at::Tensor operator()(const at::Tensor& x) { return kernel_(x, weight_, bias_); }
  const at::Tensor& weight() const { return weight_; }

 private:
  at::Tensor weight_, bias_;
  LinearKernel kernel_;
};

std::shared_ptr<Dense> make_linear(int64_t in, int64_t out, bool bias) {
  return std::make_shared<Dense>(in, out, bias);
}

// Split-halves rotation: [x1, x2] -> [-x2, x1] on the last dimension.
at::Tensor rotate_half(const at::Tensor& x) {
  auto half = x.size(-1) / 2;
  return at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

class NeoxAttention : public torch::nn::Module {
 public:
  explicit NeoxAttention(const ModelConfig& c) : heads_(c.n_heads), hd_(c.head_dim()) {
    rot_ = static_cast<int64_t>(static_cast<double>(hd_) * c.rotary_pct);
    base_ = c.rotary_base;
    query_key_value_ = register_module("query_key_value", make_linear(c.d_model, 3 * c.d_model, c.attention_bias));
    dense_ = register_module("dense", make_linear(c.d_model, c.d_model, c.attention_bias));
  }

  // x [B, T, d] -> [B, T, d]
  at::Tensor operator()(const at::Tensor& x) {
    const auto B = x.size(0), T = x.size(1);
    auto qkv =
        (*query_key_value_)(x).view({B, T, heads_, 3 * hd_}).permute({0, 2, 1, 3});  // [B, H, T, 3hd], per head q|k|v
    auto q = qkv.narrow(-1, 0, hd_);
    auto k = qkv.narrow(-1, hd_, hd_);
    auto v = qkv.narrow(-1, 2 * hd_, hd_);
    if (rot_ > 0) {
      auto [cos, sin] = rotary_tables(T, x);  // [T, rot]
      q = apply_rotary(q, cos, sin);
      k = apply_rotary(k, cos, sin);
    }
    return (*dense_)(causal_attention(q, k, v, 1.0 / std::sqrt(static_cast<double>(hd_))));
  }

 private:
  // cos/sin [T, rot] of t·inv_freq, inv_freq = 1 / base^(2i/rot), computed in float32.
  std::pair<at::Tensor, at::Tensor> rotary_tables(int64_t T, const at::Tensor& like) {
    // Tables built under inference mode cannot be saved for backward: rebuilt for training.
    const bool unusable = cos_.defined() && cos_.is_inference() && !c10::InferenceMode::is_enabled();
    if (!cos_.defined() || unusable || cos_.size(0) < T || cos_.device() != like.device() ||
        cos_.scalar_type() != like.scalar_type()) {
      auto f32 = at::TensorOptions().dtype(at::kFloat).device(like.device());
      auto inv_freq = 1.0 / at::pow(base_, at::arange(0, rot_, 2, f32) / static_cast<double>(rot_));  // [rot/2]
      auto t = at::arange(T, f32);
      auto freqs = at::outer(t, inv_freq);     // [T, rot/2]
      auto emb = at::cat({freqs, freqs}, -1);  // [T, rot]
      cos_ = emb.cos().to(like.scalar_type());
      sin_ = emb.sin().to(like.scalar_type());
    }
    return {cos_.narrow(0, 0, T), sin_.narrow(0, 0, T)};
  }

  // x [B, H, T, hd]: rotate the first rot_ dims, pass the rest through.
  at::Tensor apply_rotary(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) const {
    auto xr = x.narrow(-1, 0, rot_);
    auto rotated = xr * cos + rotate_half(xr) * sin;
    if (rot_ == hd_) return rotated;
    return at::cat({rotated, x.narrow(-1, rot_, hd_ - rot_)}, -1);
  }

  int64_t heads_, hd_, rot_;
  double base_;
  std::shared_ptr<Dense> query_key_value_, dense_;
  at::Tensor cos_, sin_;  // cache, not parameters
};

// dense_h_to_4h up to d_ff, the activation, dense_4h_to_h back (both with biases).
std::shared_ptr<Mlp<Dense>> make_neox_mlp(const ModelConfig& c) {
  return std::make_shared<Mlp<Dense>>(c, MlpNames{"dense_h_to_4h", "dense_4h_to_h"},
                                      [](int64_t in, int64_t out) { return make_linear(in, out, true); });
}

class NeoxLayer : public torch::nn::Module {
 public:
  explicit NeoxLayer(const ModelConfig& c) : parallel_(c.parallel_residual) {
    auto ln = torch::nn::LayerNormOptions({c.d_model}).eps(c.layer_norm_eps);
    input_layernorm_ = register_module("input_layernorm", torch::nn::LayerNorm(ln));
    post_attention_layernorm_ = register_module("post_attention_layernorm", torch::nn::LayerNorm(ln));
    attention_ = register_module("attention", std::make_shared<NeoxAttention>(c));
    mlp_ = register_module("mlp", make_neox_mlp(c));
  }
  // h [B, T, d] -> [B, T, d]
  at::Tensor operator()(const at::Tensor& h, MlpHook& hook) {
    auto mlp = [this](const at::Tensor& t) { return (*mlp_)(t); };
    auto a = (*attention_)(input_layernorm_(h));
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
    embed_in_ = register_module("embed_in", torch::nn::Embedding(c.vocab_size, c.d_model));
    torch::nn::init::normal_(embed_in_->weight, 0.0, 0.02);
    auto list = torch::nn::ModuleList();
    for (int64_t i = 0; i < c.n_layers; ++i) {
      layers_.push_back(std::make_shared<NeoxLayer>(c));
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
    if (!c.tied_head) embed_out_ = register_module("embed_out", make_linear(c.d_model, c.vocab_size, false));
  }

  at::Tensor input_embedding(const at::Tensor& ids) override { return body_->embed_in_(ids); }

  at::Tensor embed(const at::Tensor& ids) override { return body_->embed_in_(ids); }  // [B, T, d]
  at::Tensor run_layer(int64_t l, const at::Tensor& h) override {
    return (*body_->layers_[static_cast<std::size_t>(l)])(h, hooks_[static_cast<std::size_t>(l)]);
  }
  at::Tensor final_norm(const at::Tensor& h) override { return body_->final_layer_norm_(h); }

  at::Tensor head(const at::Tensor& h) override {
    return embed_out_ ? (*embed_out_)(h) : tied_head_(h, body_->embed_in_->weight, {});
  }

 private:
  std::shared_ptr<NeoxBody> body_;
  std::shared_ptr<Dense> embed_out_;
  LinearKernel tied_head_;
};

const ArchitectureRegistrar kNeox{built_as<NeoxModel>(gpt_neox_architecture())};

}  // namespace
}  // namespace linsweep
