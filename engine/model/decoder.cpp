// The pre-norm decoder of Llama and its relatives (decoder_config.hpp names the variants) with HF
// parameter names; registers the body "decoder". Per layer, with the norms n where the
// architecture has them (ModelConfig::block_norms):
//   h = h + n(o(attention(rotary(qk_norm(q(n(h)))), rotary(qk_norm(k(n(h)))), v(n(h)))))
//   h = h + n(mlp(n(h)))       mlp(x) = down(act(gate(x)) ⊙ up(x)), or a mixture of experts (moe.hpp)
#include <ATen/ATen.h>
#include <torch/nn/init.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>

#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>

#include "engine/model/architecture_registry.hpp"
#include "engine/model/attention.hpp"
#include "engine/model/built_layer.hpp"
#include "engine/model/dense.hpp"
#include "engine/model/language_model.hpp"
#include "engine/model/linear_kernel.hpp"
#include "engine/model/mlp.hpp"
#include "engine/model/moe.hpp"
#include "engine/model/norm.hpp"
#include "engine/model/rotary.hpp"

namespace linsweep {
namespace {

// Scale, window and soft-capping of layer `layer`'s attention scores.
AttentionOptions attention_options(const ModelConfig& c, int64_t layer) {
  const double denominator = c.query_pre_attn_scalar.value_or(static_cast<double>(c.head_dim()));
  return {.scale = 1.0 / std::sqrt(denominator),
          .window = c.sliding(layer) ? c.sliding_window : std::nullopt,
          .softcap = c.attn_softcap};
}

// Grouped-query attention: H query heads share kv_heads key/value heads (H / kv_heads each);
// multi-query when kv_heads is 1, multi-head when it is H. q, k and v come from three
// projections or one (Phi-3's qkv_proj, [q | k | v]); q and k may be normed, per head or over
// the whole projection, and clamped (OLMoE), before rotary.
class DecoderAttention : public torch::nn::Module {
 public:
  DecoderAttention(const ModelConfig& c, int64_t layer)
      : layer_(layer),
        heads_(c.n_heads),
        kv_heads_(c.kv_heads()),
        hd_(c.head_dim()),
        qk_norm_(c.qk_norm),
        clip_(c.clip_qkv),
        options_(attention_options(c, layer)),
        rotary_(c, c.sliding(layer)) {
    const int64_t q = heads_ * hd_, kv = kv_heads_ * hd_;
    if (c.fused_qkv) {
      qkv_proj_ = register_module("qkv_proj", make_dense(c.d_model, q + 2 * kv, c.attention_bias, c));
    } else {
      q_proj_ = register_module("q_proj", make_dense(c.d_model, q, c.attention_bias, c));
      k_proj_ = register_module("k_proj", make_dense(c.d_model, kv, c.attention_bias, c));
      v_proj_ = register_module("v_proj", make_dense(c.d_model, kv, c.attention_bias, c));
    }
    o_proj_ = register_module("o_proj", make_dense(q, c.d_model, c.attention_out_bias, c));
    if (qk_norm_ != QkNorm::kNone) {
      const bool per_head = qk_norm_ == QkNorm::kPerHead;
      q_norm_ = register_module("q_norm", std::make_shared<Norm>(c.norm, per_head ? hd_ : q, c.layer_norm_eps));
      k_norm_ = register_module("k_norm", std::make_shared<Norm>(c.norm, per_head ? hd_ : kv, c.layer_norm_eps));
    }
  }

  // x [B, T, d] -> [B, T, d]; with a cache, at its next positions and attending over them too.
  at::Tensor operator()(const at::Tensor& x, KvCache* cache) {
    const auto B = x.size(0), T = x.size(1);
    const int64_t start = cache != nullptr ? cache->length() : 0;
    // q [B, T, heads·hd], k and v [B, T, kv·hd]
    auto [q, k, v] = project(x);
    if (qk_norm_ == QkNorm::kWhole) {  // OLMo 2, OLMoE: over all heads at once
      q = (*q_norm_)(q);
      k = (*k_norm_)(k);
    }
    if (clip_) {  // OLMoE
      q = q.clamp(-*clip_, *clip_);
      k = k.clamp(-*clip_, *clip_);
      v = v.clamp(-*clip_, *clip_);
    }
    auto split = [&](const at::Tensor& t, int64_t heads) { return t.view({B, T, heads, hd_}).transpose(1, 2); };
    q = split(q, heads_);  // [B, H, T, hd]
    k = split(k, kv_heads_);
    v = split(v, kv_heads_);
    if (qk_norm_ == QkNorm::kPerHead) {  // Qwen3, Gemma 3: each head over head_dim
      q = (*q_norm_)(q);
      k = (*k_norm_)(k);
    }
    q = rotary_(q, start);
    k = rotary_(k, start);
    if (cache != nullptr) std::tie(k, v) = cache->append(layer_, k, v);
    if (kv_heads_ != heads_) {  // query head h reads key/value head h / (H / KV)
      k = k.repeat_interleave(heads_ / kv_heads_, 1);
      v = v.repeat_interleave(heads_ / kv_heads_, 1);
    }
    return (*o_proj_)(causal_attention(q, k, v, options_));
  }

 private:
  std::array<at::Tensor, 3> project(const at::Tensor& x) {
    if (!qkv_proj_) return {(*q_proj_)(x), (*k_proj_)(x), (*v_proj_)(x)};
    const auto parts = (*qkv_proj_)(x).split_with_sizes({heads_ * hd_, kv_heads_ * hd_, kv_heads_ * hd_}, -1);
    return {parts[0], parts[1], parts[2]};
  }

  int64_t layer_, heads_, kv_heads_, hd_;
  QkNorm qk_norm_;
  std::optional<double> clip_;
  AttentionOptions options_;
  Rotary rotary_;
  std::shared_ptr<Dense> q_proj_, k_proj_, v_proj_, qkv_proj_, o_proj_;
  std::shared_ptr<Norm> q_norm_, k_norm_;
};

// The checkpoint names of a layer's norms by place; nullptr where the architecture has none.
struct LayerNormNames {
  const char *attn_in, *attn_out, *mlp_in, *mlp_out;
};

LayerNormNames layer_norm_names(BlockNorms b) {
  switch (b) {
    case BlockNorms::kSandwich:
      return {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm"};
    case BlockNorms::kPost:
      return {nullptr, "post_attention_layernorm", nullptr, "post_feedforward_layernorm"};
    case BlockNorms::kPre:
      break;
  }
  return {"input_layernorm", nullptr, "post_attention_layernorm", nullptr};
}

class DecoderLayer : public torch::nn::Module {
 public:
  DecoderLayer(const ModelConfig& c, int64_t layer) {
    const LayerNormNames names = layer_norm_names(c.block_norms);
    auto norm = [&](const char* name) {
      return name ? register_module(name, std::make_shared<Norm>(c.norm, c.d_model, c.layer_norm_eps)) : nullptr;
    };
    attn_in_ = norm(names.attn_in);
    attn_out_ = norm(names.attn_out);
    mlp_in_ = norm(names.mlp_in);
    mlp_out_ = norm(names.mlp_out);
    self_attn_ = register_module("self_attn", std::make_shared<DecoderAttention>(c, layer));
    if (c.sparse(layer)) {
      moe_ = register_module(c.moe.naming == MoeNaming::kBlockSparseMoe ? "block_sparse_moe" : "mlp",
                             std::make_shared<MoeBlock>(c));
      return;
    }
    const MlpNames mlp_names{.up = "up_proj", .down = "down_proj", .gate = "gate_proj", .gate_up = "gate_up_proj"};
    mlp_ = register_module("mlp", std::make_shared<Mlp<Dense>>(c, mlp_names, [&c](int64_t in, int64_t out) {
                             return make_dense(in, out, c.mlp_bias, c);
                           }));
  }

  // h [B, T, d] -> [B, T, d]
  at::Tensor operator()(const at::Tensor& h, MlpHook& hook, KvCache* cache) {
    const at::Tensor s = h + norm(attn_out_, (*self_attn_)(norm(attn_in_, h), cache));
    auto mlp = [this, &hook](const at::Tensor& x) { return moe_ ? (*moe_)(x, hook.moe()) : (*mlp_)(x); };
    return s + norm(mlp_out_, hook.apply(norm(mlp_in_, s), mlp));
  }

 private:
  static at::Tensor norm(const std::shared_ptr<Norm>& n, const at::Tensor& x) { return n ? (*n)(x) : x; }

  std::shared_ptr<Norm> attn_in_, attn_out_, mlp_in_, mlp_out_;
  std::shared_ptr<DecoderAttention> self_attn_;
  std::shared_ptr<Mlp<Dense>> mlp_;
  std::shared_ptr<MoeBlock> moe_;
};

// The "model." part of the parameter names.
class DecoderBody : public torch::nn::Module {
 public:
  explicit DecoderBody(const ModelConfig& c) {
    if (c.builds_token_matrix()) {
      embed_tokens_ = register_module("embed_tokens", held_embedding(c.vocab_size, c.d_model, c));
      if (!c.built_to_load) torch::nn::init::normal_(embed_tokens_->weight, 0.0, 0.02);
    }
    auto list = torch::nn::ModuleList();
    for (int64_t i = 0; i < c.n_layers; ++i) {
      if (!c.builds_layer(i)) {
        layers_.push_back(nullptr);
        list->push_back(absent_layer());
        continue;
      }
      layers_.push_back(held_layer(std::make_shared<DecoderLayer>(c, i), c));
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
    if (!c.tied_head && c.builds_output())
      lm_head_ = register_module("lm_head", make_dense(c.d_model, c.vocab_size, false, c));
  }

  // Gemma scales the embedding by sqrt(d), rounded to the stream's dtype as HF rounds it.
  at::Tensor input_embedding(const at::Tensor& ids) override {
    at::Tensor e = body_->embed_tokens_(ids);  // [B, T, d]
    if (!config_.scale_embedding) return e;
    return e * at::scalar_tensor(std::sqrt(static_cast<double>(config_.d_model)), e.options());
  }
  at::Tensor final_norm(const at::Tensor& h) override { return (*body_->norm_)(h); }
  // Gemma 2 caps the logits: tanh(z / cap)·cap.
  at::Tensor head(const at::Tensor& h) override {
    const at::Tensor z = lm_head_ ? (*lm_head_)(h) : tied_head_(h, body_->embed_tokens_->weight, {});
    if (!config_.final_softcap) return z;
    return at::tanh(z / *config_.final_softcap) * *config_.final_softcap;
  }

 protected:
  at::Tensor embed_at(const at::Tensor& ids, int64_t) override { return input_embedding(ids); }
  at::Tensor layer_step(int64_t l, const at::Tensor& h, KvCache* cache) override {
    return (*body_->layers_[static_cast<std::size_t>(l)])(h, hooks_[static_cast<std::size_t>(l)], cache);
  }

 private:
  std::shared_ptr<DecoderBody> body_;
  std::shared_ptr<Dense> lm_head_;
  LinearKernel tied_head_;
};

const ModelBodyRegistrar<DecoderModel> kDecoderBody{"decoder"};

}  // namespace
}  // namespace linsweep
