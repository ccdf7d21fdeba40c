// GPT-2 (Radford et al. 2019) as a torch module with HF parameter names; registers "gpt2".
#include <ATen/ATen.h>
#include <torch/nn/init.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/module.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "workers/model/architecture_registry.hpp"
#include "workers/model/attention.hpp"
#include "workers/model/language_model.hpp"
#include "workers/model/linear_kernel.hpp"

namespace linsweep {
namespace {

// HF's Conv1D: weight [in, out], y = x·W + b.
class Conv1D : public torch::nn::Module {
 public:
  Conv1D(int64_t in, int64_t out) {
    weight_ = register_parameter("weight", torch::empty({in, out}));
    bias_ = register_parameter("bias", torch::zeros({out}));
    torch::nn::init::normal_(weight_, 0.0, 0.02);
  }
  at::Tensor operator()(const at::Tensor& x) { return kernel_(x, weight_.t(), bias_); }

 private:
  at::Tensor weight_, bias_;
  LinearKernel kernel_;
};

class Gpt2Attention : public torch::nn::Module {
 public:
  Gpt2Attention(const ModelConfig& c, int64_t layer) : heads_(c.n_heads), d_(c.d_model) {
    c_attn_ = register_module("c_attn", std::make_shared<Conv1D>(c.d_model, 3 * c.d_model));
    c_proj_ = register_module("c_proj", std::make_shared<Conv1D>(c.d_model, c.d_model));
    scale_ = c.scale_attn_weights ? 1.0 / std::sqrt(static_cast<double>(c.head_dim())) : 1.0;
    if (c.scale_attn_by_inverse_layer_idx) scale_ /= static_cast<double>(layer + 1);
  }
  // x [B, T, d] -> [B, T, d]
  at::Tensor operator()(const at::Tensor& x) {
    const auto B = x.size(0), T = x.size(1), hd = d_ / heads_;
    auto qkv = (*c_attn_)(x);  // [B, T, 3d], contiguous q | k | v
    auto split = qkv.view({B, T, 3, heads_, hd}).permute({2, 0, 3, 1, 4});  // [3, B, H, T, hd]
    return (*c_proj_)(causal_attention(split[0], split[1], split[2], scale_));
  }

 private:
  int64_t heads_, d_;
  double scale_;
  std::shared_ptr<Conv1D> c_attn_, c_proj_;
};

class Gpt2Mlp : public torch::nn::Module {
 public:
  Gpt2Mlp(const ModelConfig& c) : act_(c.activation) {
    c_fc_ = register_module("c_fc", std::make_shared<Conv1D>(c.d_model, c.d_ff));
    c_proj_ = register_module("c_proj", std::make_shared<Conv1D>(c.d_ff, c.d_model));
  }
  // x [B, T, d] -> [B, T, d]
  at::Tensor operator()(const at::Tensor& x) {
    auto h = (*c_fc_)(x);  // [B, T, 4d]
    h = at::gelu(h, act_ == Activation::kGeluTanh ? "tanh" : "none");
    return (*c_proj_)(h);
  }

 private:
  Activation act_;
  std::shared_ptr<Conv1D> c_fc_, c_proj_;
};

class Gpt2Block : public torch::nn::Module {
 public:
  Gpt2Block(const ModelConfig& c, int64_t layer) {
    auto ln = torch::nn::LayerNormOptions({c.d_model}).eps(c.layer_norm_eps);
    ln_1_ = register_module("ln_1", torch::nn::LayerNorm(ln));
    attn_ = register_module("attn", std::make_shared<Gpt2Attention>(c, layer));
    ln_2_ = register_module("ln_2", torch::nn::LayerNorm(ln));
    mlp_ = register_module("mlp", std::make_shared<Gpt2Mlp>(c));
  }
  // h [B, T, d] -> [B, T, d]
  at::Tensor operator()(at::Tensor h, MlpHook& hook) {
    h = h + (*attn_)(ln_1_(h));
    at::Tensor x = ln_2_(h);  // the hook's X
    return h + hook.apply(x, [this](const at::Tensor& t) { return (*mlp_)(t); });
  }

 private:
  torch::nn::LayerNorm ln_1_{nullptr}, ln_2_{nullptr};
  std::shared_ptr<Gpt2Attention> attn_;
  std::shared_ptr<Gpt2Mlp> mlp_;
};

class Gpt2Model : public LanguageModel {
 public:
  explicit Gpt2Model(const ModelConfig& c) : LanguageModel(c) {
    wte_ = register_module("wte", torch::nn::Embedding(c.vocab_size, c.d_model));
    wpe_ = register_module("wpe", torch::nn::Embedding(c.max_positions, c.d_model));
    torch::nn::init::normal_(wte_->weight, 0.0, 0.02);
    torch::nn::init::normal_(wpe_->weight, 0.0, 0.01);
    auto list = torch::nn::ModuleList();
    for (int64_t i = 0; i < c.n_layers; ++i) {
      blocks_.push_back(std::make_shared<Gpt2Block>(c, i));
      list->push_back(blocks_.back());
    }
    register_module("h", list);
    ln_f_ = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.d_model}).eps(c.layer_norm_eps)));
    // GPT2LMHeadModel with tie_word_embeddings false keeps its own output matrix, "lm_head.weight".
    if (!c.tied_head) {
      lm_head_ = register_module("lm_head", std::make_shared<torch::nn::Module>());
      lm_head_weight_ = lm_head_->register_parameter("weight", torch::empty({c.vocab_size, c.d_model}));
      torch::nn::init::normal_(lm_head_weight_, 0.0, 0.02);
    }
  }

  at::Tensor input_embedding(const at::Tensor& ids) override {
    auto pos = at::arange(ids.size(1), ids.options());
    return wte_(ids) + wpe_(pos);  // [B, T, d] + [T, d]
  }

  at::Tensor embed(const at::Tensor& ids) override { return input_embedding(ids); }  // [B, T, d]
  at::Tensor run_layer(int64_t l, const at::Tensor& h) override {
    return (*blocks_[static_cast<std::size_t>(l)])(h, hooks_[static_cast<std::size_t>(l)]);
  }
  at::Tensor final_norm(const at::Tensor& h) override { return ln_f_(h); }

  // Tied head: logits = h · wteᵀ; untied: h · lm_headᵀ.
  at::Tensor head(const at::Tensor& h) override {
    return head_kernel_(h, lm_head_ ? lm_head_weight_ : wte_->weight, {});
  }

 private:
  torch::nn::Embedding wte_{nullptr}, wpe_{nullptr};
  std::vector<std::shared_ptr<Gpt2Block>> blocks_;
  torch::nn::LayerNorm ln_f_{nullptr};
  std::shared_ptr<torch::nn::Module> lm_head_;  // only when untied
  at::Tensor lm_head_weight_;
  LinearKernel head_kernel_;
};

ModelConfig parse_gpt2_config(const nlohmann::json& j, const std::string& path) {
  ModelConfig c;
  c.vocab_size = config_int(j, path, "vocab_size");
  c.d_model = config_int(j, path, "n_embd");
  c.n_layers = config_int(j, path, "n_layer");
  c.n_heads = config_int(j, path, "n_head");
  c.d_ff = config_int_or(j, path, "n_inner", 4 * c.d_model);
  c.max_positions = config_int_or(j, path, "n_positions", 1024);
  c.layer_norm_eps = config_double_or(j, path, "layer_norm_epsilon", 1e-5);
  const std::string act = config_string_or(j, path, "activation_function", "gelu_new");
  if (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast") {
    c.activation = Activation::kGeluTanh;
  } else if (act == "gelu") {
    c.activation = Activation::kGeluExact;
  } else {
    throw ModelError(path + ": activation_function '" + act + "' is not supported (gelu_new, gelu)");
  }
  c.tied_head = config_bool_or(j, path, "tie_word_embeddings", true);
  c.scale_attn_weights = config_bool_or(j, path, "scale_attn_weights", true);
  c.scale_attn_by_inverse_layer_idx = config_bool_or(j, path, "scale_attn_by_inverse_layer_idx", false);
  if (j.contains("eos_token_id") && j["eos_token_id"].is_number_integer())
    c.eos_token_id = j["eos_token_id"].get<int64_t>();
  return c;
}

nlohmann::json write_gpt2_config(const ModelConfig& c) {
  nlohmann::json j = {{"architectures", {"GPT2LMHeadModel"}},
                      {"model_type", "gpt2"},
                      {"vocab_size", c.vocab_size},
                      {"n_positions", c.max_positions},
                      {"n_ctx", c.max_positions},
                      {"n_embd", c.d_model},
                      {"n_layer", c.n_layers},
                      {"n_head", c.n_heads},
                      {"n_inner", c.d_ff},
                      {"activation_function", c.activation == Activation::kGeluTanh ? "gelu_new" : "gelu"},
                      {"layer_norm_epsilon", c.layer_norm_eps},
                      {"scale_attn_weights", c.scale_attn_weights},
                      {"scale_attn_by_inverse_layer_idx", c.scale_attn_by_inverse_layer_idx},
                      {"reorder_and_upcast_attn", false},
                      {"tie_word_embeddings", c.tied_head},
                      {"resid_pdrop", 0.0},
                      {"embd_pdrop", 0.0},
                      {"attn_pdrop", 0.0}};
  if (c.eos_token_id) j["bos_token_id"] = j["eos_token_id"] = *c.eos_token_id;
  return j;
}

int64_t count_gpt2_parameters(const ModelConfig& c) {
  const int64_t d = c.d_model, f = c.d_ff;
  const int64_t block = 2 * d + (3 * d * d + 3 * d) + (d * d + d) + 2 * d + (d * f + f) + (f * d + d);
  return c.vocab_size * d * (c.tied_head ? 1 : 2) + c.max_positions * d + c.n_layers * block + 2 * d;
}

const ArchitectureRegistrar kGpt2{Architecture{
    "gpt2",
    parse_gpt2_config,
    [](const ModelConfig& c) -> std::shared_ptr<LanguageModel> { return std::make_shared<Gpt2Model>(c); },
    {"transformer."},
    {".attn.bias", ".attn.masked_bias", "lm_head.weight"},
    count_gpt2_parameters,
    write_gpt2_config,
}};

}  // namespace
}  // namespace linsweep
