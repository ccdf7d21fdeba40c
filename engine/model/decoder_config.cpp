// Pre-norm decoder config.json fields, read and written from one table (no torch).
#include "engine/model/decoder_config.hpp"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>

#include "common/errors.hpp"
#include "engine/model/hf_activation.hpp"
#include "engine/model/layer_types.hpp"
#include "engine/model/moe_config.hpp"
#include "engine/model/rope_config.hpp"

namespace linsweep {
namespace {

// One config.json key, read into and written from one ModelConfig member.
struct Field {
  const char* key;
  std::variant<std::int64_t ModelConfig::*, double ModelConfig::*, bool ModelConfig::*> member;
  bool required;
};

const Field kFields[] = {
    {"vocab_size", &ModelConfig::vocab_size, true},
    {"hidden_size", &ModelConfig::d_model, true},
    {"num_hidden_layers", &ModelConfig::n_layers, true},
    {"num_attention_heads", &ModelConfig::n_heads, true},
    {"num_key_value_heads", &ModelConfig::n_kv_heads, false},
    {"head_dim", &ModelConfig::head_size, false},
    {"intermediate_size", &ModelConfig::d_ff, true},
    {"max_position_embeddings", &ModelConfig::max_positions, false},
    {"rms_norm_eps", &ModelConfig::layer_norm_eps, false},
    {"tie_word_embeddings", &ModelConfig::tied_head, false},
    {"attention_bias", &ModelConfig::attention_bias, false},
    {"mlp_bias", &ModelConfig::mlp_bias, false},
};

bool is_fixed(const DecoderVariant& v, const char* key) {
  return std::find(v.fixed_keys.begin(), v.fixed_keys.end(), key) != v.fixed_keys.end();
}

// The variant's spelling of a shared key.
std::string key_of(const DecoderVariant& v, const char* key) {
  for (const auto& [shared, own] : v.renamed_keys)
    if (shared == key) return own;
  return key;
}

void read_field(const Field& f, const std::string& key, const nlohmann::json& j, const std::string& path,
                ModelConfig& c) {
  const char* k = key.c_str();
  if (f.required && (!j.contains(k) || j[k].is_null())) throw ModelError(path + ": field '" + key + "' is missing");
  std::visit(
      [&](auto member) {
        using T = std::remove_reference_t<decltype(c.*member)>;
        if constexpr (std::is_same_v<T, std::int64_t>) c.*member = config_int_or(j, path, k, c.*member);
        if constexpr (std::is_same_v<T, double>) c.*member = config_double_or(j, path, k, c.*member);
        if constexpr (std::is_same_v<T, bool>) c.*member = config_bool_or(j, path, k, c.*member);
      },
      f.member);
}

// Keys whose non-null values ask for computations the decoder does not do.
void refuse_unsupported(const DecoderVariant& v, const nlohmann::json& j, const std::string& path) {
  if (!v.softcapping)
    for (const char* key : {"attn_logit_softcapping", "final_logit_softcapping"})
      if (j.contains(key) && !j[key].is_null())
        throw ModelError(path + ": field '" + std::string(key) + "' (logit soft-capping) is not supported for " +
                         v.model_type);
  if (config_bool_or(j, path, "use_bidirectional_attention", false))
    throw ModelError(path + ": field 'use_bidirectional_attention' is true; only causal attention is supported");
  if (config_bool_or(j, path, "qk_layernorm", false))
    throw ModelError(path + ": field 'qk_layernorm' is true; StableLM's per-head q/k LayerNorms are not supported");
  if (config_bool_or(j, path, "use_parallel_residual", false))
    throw ModelError(path + ": field 'use_parallel_residual' is true; the pre-norm decoder is sequential");
}

// HF's rule: no window when use_sliding_window is false (Qwen's, whose default is false) or
// sliding_window is null or 0; the class's default when the key is absent.
std::optional<std::int64_t> read_sliding_window(const DecoderVariant& v, const nlohmann::json& j,
                                                const std::string& path) {
  if (!config_bool_or(j, path, "use_sliding_window", v.sliding_by_default)) return std::nullopt;
  if (!j.contains("sliding_window")) return v.defaults.sliding_window;
  const std::int64_t w = config_int_or(j, path, "sliding_window", 0);
  if (w < 0) throw ModelError(path + ": field 'sliding_window' is negative");
  if (w == 0) return std::nullopt;
  return w;
}

// A positive number, or none: the class's default when absent, none when null.
std::optional<double> optional_positive(const nlohmann::json& j, const std::string& path, const char* key,
                                        std::optional<double> fallback) {
  if (!j.contains(key)) return fallback;
  if (j[key].is_null()) return std::nullopt;
  const double x = config_double_or(j, path, key, 0.0);
  if (!(x > 0) || x > 1e30) throw ModelError(path + ": field '" + std::string(key) + "' must be a positive number");
  return x;
}

void read_options(const DecoderVariant& v, const nlohmann::json& j, const std::string& path, ModelConfig& c) {
  if (v.softcapping) {
    c.attn_softcap = optional_positive(j, path, "attn_logit_softcapping", v.defaults.attn_softcap);
    c.final_softcap = optional_positive(j, path, "final_logit_softcapping", v.defaults.final_softcap);
  }
  if (v.query_pre_attn_scalar)
    c.query_pre_attn_scalar = optional_positive(j, path, "query_pre_attn_scalar", v.defaults.query_pre_attn_scalar);
  if (v.clip_qkv) c.clip_qkv = optional_positive(j, path, "clip_qkv", v.defaults.clip_qkv);
}

ModelConfig parse_decoder(const DecoderVariant& v, const nlohmann::json& j, const std::string& path) {
  ModelConfig c = v.defaults;
  for (const Field& f : kFields)
    if (!is_fixed(v, f.key)) read_field(f, key_of(v, f.key), j, path, c);
  if (v.out_bias_follows_attention_bias) c.attention_out_bias = c.attention_bias;
  const char* act_key =
      j.contains("hidden_activation") && !j["hidden_activation"].is_null() ? "hidden_activation" : "hidden_act";
  c.activation =
      parse_hf_activation(config_string_or(j, path, act_key, hf_activation_name(c.activation)), path, act_key);
  read_rope(j, path, v.defaults, c);
  if (static_cast<std::int64_t>(static_cast<double>(c.head_dim()) * c.rotary_pct) % 2 != 0)
    throw ModelError(path + ": rotary dimensions (head_dim * partial_rotary_factor) must be even");
  if (!is_fixed(v, "sliding_window")) c.sliding_window = read_sliding_window(v, j, path);
  read_sliding_layers(j, path, v.sliding_layers, c);
  read_options(v, j, path, c);
  read_moe_config(j, path, v.moe, c.d_ff, c.n_layers, c.moe);
  refuse_unsupported(v, j, path);
  return c;
}

nlohmann::json write_decoder(const DecoderVariant& v, const ModelConfig& c) {
  nlohmann::json j = {{"architectures", {v.hf_class}},
                      {"model_type", v.model_type},
                      {"hidden_act", hf_activation_name(c.activation)},
                      {"rope_parameters", rope_parameters_json(c)},
                      {"partial_rotary_factor", c.rotary_pct},
                      {"dtype", "float32"},
                      {"attention_dropout", 0.0}};
  for (const Field& f : kFields) {
    if (is_fixed(v, f.key)) continue;
    std::visit(
        [&](auto member) {
          // Optional sizes left at 0 (kv heads, head size) mean "as HF derives them": not written.
          if constexpr (std::is_same_v<std::remove_reference_t<decltype(c.*member)>, std::int64_t>)
            if (!f.required && c.*member == 0) return;
          j[key_of(v, f.key)] = c.*member;
        },
        f.member);
  }
  auto optional = [](const std::optional<double>& x) { return x ? nlohmann::json(*x) : nlohmann::json(nullptr); };
  if (!is_fixed(v, "sliding_window")) {
    j["use_sliding_window"] = c.sliding_window.has_value();
    j["sliding_window"] = c.sliding_window ? nlohmann::json(*c.sliding_window) : nlohmann::json(nullptr);
    if (c.sliding_window) j["layer_types"] = layer_types_json(c);
  }
  if (v.softcapping) {
    j["attn_logit_softcapping"] = optional(c.attn_softcap);
    j["final_logit_softcapping"] = optional(c.final_softcap);
  }
  if (v.query_pre_attn_scalar) j["query_pre_attn_scalar"] = optional(c.query_pre_attn_scalar);
  if (v.clip_qkv) j["clip_qkv"] = optional(c.clip_qkv);
  write_moe_config(c.moe, v.moe, j);
  return j;
}

// The parameters of a norm of `width` features.
std::int64_t norm_size(const ModelConfig& c, std::int64_t width) {
  return c.norm == NormKind::kLayerNorm ? 2 * width : width;
}

// A gated MLP of width f without biases (every expert, the shared expert).
std::int64_t gated_mlp_size(std::int64_t d, std::int64_t f) { return 3 * d * f; }

std::int64_t count_mlp_parameters(const ModelConfig& c, std::int64_t layer) {
  const std::int64_t d = c.d_model, f = c.d_ff;
  if (!c.sparse(layer)) {
    const std::int64_t in_proj = c.gated_mlp ? 2 : 1;
    return (in_proj + 1) * d * f + (c.mlp_bias ? in_proj * f + d : 0);
  }
  const MoeConfig& m = c.moe;
  const std::int64_t shared = m.shared_d_ff > 0 ? gated_mlp_size(d, m.shared_d_ff) + d : 0;  // + its sigmoid gate
  return m.experts * d + m.experts * gated_mlp_size(d, m.expert_d_ff) + shared;              // router + experts
}

std::int64_t count_decoder_parameters(const ModelConfig& c) {
  const std::int64_t d = c.d_model, q = c.n_heads * c.head_dim(), kv = c.kv_heads() * c.head_dim();
  const std::int64_t attention =
      d * (q + 2 * kv) + (c.attention_bias ? q + 2 * kv : 0) + q * d + (c.attention_out_bias ? d : 0);
  const std::int64_t qk_norms = c.qk_norm == QkNorm::kPerHead ? 2 * norm_size(c, c.head_dim())
                                : c.qk_norm == QkNorm::kWhole ? norm_size(c, q) + norm_size(c, kv)
                                                              : 0;
  const std::int64_t block_norms = c.block_norms == BlockNorms::kSandwich ? 4 : 2;
  std::int64_t layers = 0;
  for (std::int64_t l = 0; l < c.n_layers; ++l)
    layers += block_norms * norm_size(c, d) + attention + qk_norms + count_mlp_parameters(c, l);
  return c.vocab_size * d * (c.tied_head ? 1 : 2) + layers + norm_size(c, d);
}

}  // namespace

DecoderVariant decoder_variant(const char* model_type, const char* hf_class) {
  DecoderVariant v;
  v.model_type = model_type;
  v.hf_class = hf_class;
  ModelConfig& d = v.defaults;
  d.norm = NormKind::kRmsNorm;
  d.activation = Activation::kSilu;
  d.gated_mlp = true;
  d.mlp_bias = d.attention_bias = d.attention_out_bias = false;
  d.max_positions = 2048;
  d.layer_norm_eps = 1e-6;
  d.rotary_base = 10000.0;
  return v;
}

Architecture decoder_architecture(const DecoderVariant& v) {
  Architecture a;
  a.name = v.model_type;
  a.body = "decoder";
  a.parse_config = [v](const nlohmann::json& j, const std::string& path) { return parse_decoder(v, j, path); };
  a.write_config = [v](const ModelConfig& c) { return write_decoder(v, c); };
  a.count_parameters = count_decoder_parameters;
  a.defaults = v.defaults;
  a.ignored_suffixes = {".rotary_emb.inv_freq", "lm_head.weight"};
  a.roles = {.attention = {".self_attn."},
             .mlp = {".mlp.", ".block_sparse_moe."},
             .norm = {"layernorm", "model.norm."},
             .head = {"lm_head.weight"},
             .position = {},
             .residual_out = {".self_attn.o_proj.weight", "down_proj.weight", ".w2.weight"}};
  a.mlp = {.layer_prefix = "model.layers.",
           .up = ".mlp.up_proj",
           .down = ".mlp.down_proj",
           .gate = ".mlp.gate_proj",
           .in_out = false};
  return a;
}

}  // namespace linsweep
