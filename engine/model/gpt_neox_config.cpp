// GPT-NeoX config.json parsing and writing, and its parameter count (no torch).
#include "engine/model/gpt_neox_config.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "engine/model/hf_activation.hpp"

namespace linsweep {
namespace {

ModelConfig parse_neox_config(const nlohmann::json& j, const std::string& path) {
  ModelConfig c;
  c.vocab_size = config_int(j, path, "vocab_size");
  c.d_model = config_int(j, path, "hidden_size");
  c.n_layers = config_int(j, path, "num_hidden_layers");
  c.n_heads = config_int(j, path, "num_attention_heads");
  c.d_ff = config_int_or(j, path, "intermediate_size", 4 * c.d_model);
  c.max_positions = config_int_or(j, path, "max_position_embeddings", 2048);
  c.layer_norm_eps = config_double_or(j, path, "layer_norm_eps", 1e-5);
  c.activation = parse_hf_activation(config_string_or(j, path, "hidden_act", "gelu"), path, "hidden_act");
  c.rotary_pct = config_double_or(j, path, "rotary_pct", 1.0);
  if (c.rotary_pct < 0 || c.rotary_pct > 1) throw ModelError(path + ": rotary_pct must lie in [0, 1]");
  c.rotary_base = config_double_or(j, path, "rotary_emb_base", config_double_or(j, path, "rope_theta", 10000.0));
  if (!(c.rotary_base > 0)) throw ModelError(path + ": rotary_emb_base must be positive");
  c.parallel_residual = config_bool_or(j, path, "use_parallel_residual", true);
  c.tied_head = config_bool_or(j, path, "tie_word_embeddings", false);
  c.attention_bias = config_bool_or(j, path, "attention_bias", true);
  if (c.n_heads > 0 && c.d_model % c.n_heads == 0 &&
      static_cast<int64_t>(static_cast<double>(c.d_model / c.n_heads) * c.rotary_pct) % 2 != 0)
    throw ModelError(path + ": rotary dimensions (head_dim * rotary_pct) must be even");
  return c;
}

nlohmann::json write_neox_config(const ModelConfig& c) {
  nlohmann::json j = {{"architectures", {"GPTNeoXForCausalLM"}},
                      {"model_type", "gpt_neox"},
                      {"vocab_size", c.vocab_size},
                      {"hidden_size", c.d_model},
                      {"num_hidden_layers", c.n_layers},
                      {"num_attention_heads", c.n_heads},
                      {"intermediate_size", c.d_ff},
                      {"hidden_act", hf_activation_name(c.activation)},
                      {"rotary_pct", c.rotary_pct},
                      {"rotary_emb_base", c.rotary_base},
                      {"max_position_embeddings", c.max_positions},
                      {"layer_norm_eps", c.layer_norm_eps},
                      {"use_parallel_residual", c.parallel_residual},
                      {"tie_word_embeddings", c.tied_head},
                      {"attention_bias", c.attention_bias},
                      {"hidden_dropout", 0.0},
                      {"attention_dropout", 0.0}};
  return j;
}

int64_t count_neox_parameters(const ModelConfig& c) {
  const int64_t d = c.d_model, f = c.d_ff, bias = c.attention_bias ? 1 : 0;
  const int64_t layer = 4 * d + (3 * d * d + bias * 3 * d) + (d * d + bias * d) + (d * f + f) + (f * d + d);
  return c.vocab_size * d * (c.tied_head ? 1 : 2) + c.n_layers * layer + 2 * d;
}

}  // namespace

Architecture gpt_neox_architecture() {
  Architecture a;
  a.name = "gpt_neox";
  a.body = "gpt_neox";
  a.parse_config = parse_neox_config;
  a.ignored_suffixes = {".attention.rotary_emb.inv_freq", ".attention.bias", ".attention.masked_bias"};
  a.count_parameters = count_neox_parameters;
  a.write_config = write_neox_config;
  a.roles = {.attention = {".attention."},
             .mlp = {".mlp."},
             .norm = {"layernorm", "layer_norm"},
             .head = {"embed_out.weight"},
             .position = {},
             .residual_out = {".attention.dense.weight", ".mlp.dense_4h_to_h.weight"}};
  a.defaults.parallel_residual = true;
  a.mlp = {.layer_prefix = "gpt_neox.layers.",
           .up = ".mlp.dense_h_to_4h",
           .down = ".mlp.dense_4h_to_h",
           .gate = "",
           .in_out = false};
  return a;
}

namespace {
const ArchitectureRegistrar kNeoxArchitecture{gpt_neox_architecture()};
}  // namespace

}  // namespace linsweep
