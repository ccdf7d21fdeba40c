// GPT-2 config.json parsing and writing, and its parameter count (no torch).
#include "engine/model/gpt2_config.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "engine/model/hf_activation.hpp"

namespace linsweep {
namespace {

ModelConfig parse_gpt2_config(const nlohmann::json& j, const std::string& path) {
  ModelConfig c;
  c.vocab_size = config_int(j, path, "vocab_size");
  c.d_model = config_int(j, path, "n_embd");
  c.n_layers = config_int(j, path, "n_layer");
  c.n_heads = config_int(j, path, "n_head");
  c.d_ff = config_int_or(j, path, "n_inner", 4 * c.d_model);
  c.max_positions = config_int_or(j, path, "n_positions", 1024);
  c.layer_norm_eps = config_double_or(j, path, "layer_norm_epsilon", 1e-5);
  c.activation =
      parse_hf_activation(config_string_or(j, path, "activation_function", "gelu_new"), path, "activation_function");
  c.tied_head = config_bool_or(j, path, "tie_word_embeddings", true);
  c.scale_attn_weights = config_bool_or(j, path, "scale_attn_weights", true);
  c.scale_attn_by_inverse_layer_idx = config_bool_or(j, path, "scale_attn_by_inverse_layer_idx", false);
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
                      {"activation_function", hf_activation_name(c.activation)},
                      {"layer_norm_epsilon", c.layer_norm_eps},
                      {"scale_attn_weights", c.scale_attn_weights},
                      {"scale_attn_by_inverse_layer_idx", c.scale_attn_by_inverse_layer_idx},
                      {"reorder_and_upcast_attn", false},
                      {"tie_word_embeddings", c.tied_head},
                      {"resid_pdrop", 0.0},
                      {"embd_pdrop", 0.0},
                      {"attn_pdrop", 0.0}};
  return j;
}

int64_t count_gpt2_parameters(const ModelConfig& c) {
  const int64_t d = c.d_model, f = c.d_ff;
  const int64_t block = 2 * d + (3 * d * d + 3 * d) + (d * d + d) + 2 * d + (d * f + f) + (f * d + d);
  return c.vocab_size * d * (c.tied_head ? 1 : 2) + c.max_positions * d + c.n_layers * block + 2 * d;
}

}  // namespace

Architecture gpt2_architecture() {
  Architecture a;
  a.name = "gpt2";
  a.body = "gpt2";
  a.parse_config = parse_gpt2_config;
  a.checkpoint_prefixes = {"transformer."};
  a.ignored_suffixes = {".attn.bias", ".attn.masked_bias", "lm_head.weight"};
  a.count_parameters = count_gpt2_parameters;
  a.write_config = write_gpt2_config;
  a.roles = {.attention = {".attn."},
             .mlp = {".mlp."},
             .norm = {"ln_"},
             .head = {"wte.weight", "lm_head.weight"},
             .position = {"wpe.weight"},
             .residual_out = {".attn.c_proj.weight", ".mlp.c_proj.weight"}};
  a.mlp = {.layer_prefix = "h.", .up = ".mlp.c_fc", .down = ".mlp.c_proj", .gate = "", .in_out = true};
  return a;
}

namespace {
const ArchitectureRegistrar kGpt2Architecture{gpt2_architecture()};
}  // namespace

}  // namespace linsweep
