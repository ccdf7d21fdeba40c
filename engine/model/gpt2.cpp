// GPT-2 (Radford et al. 2019) as a torch module with HF parameter names; registers "gpt2".
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
#include "engine/model/gpt2_config.hpp"
#include "engine/model/language_model.hpp"
#include "engine/model/linear_kernel.hpp"
#include "engine/model/mlp.hpp"

namespace linsweep {
namespace {

// HF's Conv1D: weight [in, out], y = x·W + b, as `c` builds it (make_dense in dense.hpp).
class Conv1D : public torch::nn::Module {
 public:
  Conv1D(int64_t in, int64_t out, const ModelConfig& c) {
    const auto options = at::TensorOptions().dtype(built_scalar_type(c));
    weight_ = register_parameter("weight", torch::empty({in, out}, options));
    bias_ = register_parameter("bias", torch::zeros({out}, options));
    if (!c.built_to_load) torch::nn::init::normal_(weight_, 0.0, 0.02);
  }
  at::Tensor operator()(const at::Tensor& x) { return kernel_(x, weight_.t(), bias_); }

 private:
  at::Tensor weight_, bias_;
  LinearKernel kernel_;
};

class Gpt2Attention : public torch::nn::Module {
 public:
  Gpt2Attention(const ModelConfig& c, int64_t layer) : layer_(layer), heads_(c.n_heads), d_(c.d_model) {
    c_attn_ = register_module("c_attn", std::make_shared<Conv1D>(c.d_model, 3 * c.d_model, c));
    c_proj_ = register_module("c_proj", std::make_shared<Conv1D>(c.d_model, c.d_model, c));
    scale_ = c.scale_attn_weights ? 1.0 / std::sqrt(static_cast<double>(c.head_dim())) : 1.0;
    if (c.scale_attn_by_inverse_layer_idx) scale_ /= static_cast<double>(layer + 1);
  }
  // x [B, T, d] -> [B, T, d]; with a cache, attending over its positions too.
  at::Tensor operator()(const at::Tensor& x, KvCache* cache) {
    const auto B = x.size(0), T = x.size(1), hd = d_ / heads_;
    auto qkv = (*c_attn_)(x);                                               // [B, T, 3d], contiguous q | k | v
    auto split = qkv.view({B, T, 3, heads_, hd}).permute({2, 0, 3, 1, 4});  // [3, B, H, T, hd]
    at::Tensor k = split[1], v = split[2];
    if (cache != nullptr) std::tie(k, v) = cache->append(layer_, k, v);
    return (*c_proj_)(causal_attention(split[0], k, v, scale_));
  }

 private:
  int64_t layer_, heads_, d_;
  double scale_;
  std::shared_ptr<Conv1D> c_attn_, c_proj_;
};

// c_fc up to d_ff, the activation, c_proj back.
std::shared_ptr<Mlp<Conv1D>> make_gpt2_mlp(const ModelConfig& c) {
  return std::make_shared<Mlp<Conv1D>>(c, MlpNames{"c_fc", "c_proj"},
                                       [&c](int64_t in, int64_t out) { return std::make_shared<Conv1D>(in, out, c); });
}

class Gpt2Block : public torch::nn::Module {
 public:
  Gpt2Block(const ModelConfig& c, int64_t layer) {
    auto ln = torch::nn::LayerNormOptions({c.d_model}).eps(c.layer_norm_eps);
    ln_1_ = register_module("ln_1", torch::nn::LayerNorm(ln));
    attn_ = register_module("attn", std::make_shared<Gpt2Attention>(c, layer));
    ln_2_ = register_module("ln_2", torch::nn::LayerNorm(ln));
    mlp_ = register_module("mlp", make_gpt2_mlp(c));
  }
  // h [B, T, d] -> [B, T, d]
  at::Tensor operator()(at::Tensor h, MlpHook& hook, KvCache* cache) {
    h = h + (*attn_)(ln_1_(h), cache);
    at::Tensor x = ln_2_(h);  // the hook's X
    return h + hook.apply(x, [this](const at::Tensor& t) { return (*mlp_)(t); });
  }

 private:
  torch::nn::LayerNorm ln_1_{nullptr}, ln_2_{nullptr};
  std::shared_ptr<Gpt2Attention> attn_;
  std::shared_ptr<Mlp<Conv1D>> mlp_;
};

class Gpt2Model : public LanguageModel {
 public:
  explicit Gpt2Model(const ModelConfig& c) : LanguageModel(c) {
    if (c.builds_token_matrix()) {
      wte_ = register_module("wte", held_embedding(c.vocab_size, c.d_model, c));
      if (!c.built_to_load) torch::nn::init::normal_(wte_->weight, 0.0, 0.02);
    }
    if (c.builds_input()) {
      wpe_ = register_module("wpe", held_embedding(c.max_positions, c.d_model, c));
      if (!c.built_to_load) torch::nn::init::normal_(wpe_->weight, 0.0, 0.01);
    }
    auto list = torch::nn::ModuleList();
    for (int64_t i = 0; i < c.n_layers; ++i) {
      if (!c.builds_layer(i)) {
        blocks_.push_back(nullptr);
        list->push_back(absent_layer());
        continue;
      }
      blocks_.push_back(held_layer(std::make_shared<Gpt2Block>(c, i), c));
      list->push_back(blocks_.back());
    }
    register_module("h", list);
    ln_f_ =
        register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.d_model}).eps(c.layer_norm_eps)));
    // GPT2LMHeadModel with tie_word_embeddings false keeps its own output matrix, "lm_head.weight".
    if (!c.tied_head && c.builds_output()) {
      lm_head_ = register_module("lm_head", std::make_shared<torch::nn::Module>());
      lm_head_weight_ = lm_head_->register_parameter(
          "weight", torch::empty({c.vocab_size, c.d_model}, at::TensorOptions().dtype(built_scalar_type(c))));
      if (!c.built_to_load) torch::nn::init::normal_(lm_head_weight_, 0.0, 0.02);
    }
  }

  at::Tensor input_embedding(const at::Tensor& ids) override { return embed_at(ids, 0); }

  at::Tensor final_norm(const at::Tensor& h) override { return ln_f_(h); }

  // Tied head: logits = h · wteᵀ; untied: h · lm_headᵀ.
  at::Tensor head(const at::Tensor& h) override {
    return head_kernel_(h, lm_head_ ? lm_head_weight_ : wte_->weight, {});
  }

 protected:
  // The learned position embedding of positions start..start+T−1.
  at::Tensor embed_at(const at::Tensor& ids, int64_t start) override {
    auto pos = at::arange(start, start + ids.size(1), ids.options());
    return wte_(ids) + wpe_(pos);  // [B, T, d] + [T, d]
  }
  at::Tensor layer_step(int64_t l, const at::Tensor& h, KvCache* cache) override {
    return (*blocks_[static_cast<std::size_t>(l)])(h, hooks_[static_cast<std::size_t>(l)], cache);
  }

 private:
  torch::nn::Embedding wte_{nullptr}, wpe_{nullptr};
  std::vector<std::shared_ptr<Gpt2Block>> blocks_;
  torch::nn::LayerNorm ln_f_{nullptr};
  std::shared_ptr<torch::nn::Module> lm_head_;  // only when untied, on the stage that scores
  at::Tensor lm_head_weight_;
  LinearKernel head_kernel_;
};

const ModelBodyRegistrar<Gpt2Model> kGpt2Body{"gpt2"};

}  // namespace
}  // namespace linsweep
