// config.json reading and the checks every architecture shares.
#include "engine/model/model_config.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "engine/model/architecture_registry.hpp"

namespace linsweep {
namespace {

[[noreturn]] void bad_field(const std::string& path, const char* name, const char* what) {
  throw ModelError(path + ": field '" + name + "' " + what);
}

}  // namespace

std::int64_t config_int(const nlohmann::json& j, const std::string& path, const char* name) {
  if (!j.contains(name) || j[name].is_null()) bad_field(path, name, "is missing");
  if (!j[name].is_number_integer()) bad_field(path, name, "is not an integer");
  return j[name].get<std::int64_t>();
}

std::int64_t config_int_or(const nlohmann::json& j, const std::string& path, const char* name, std::int64_t fallback) {
  if (!j.contains(name) || j[name].is_null()) return fallback;
  return config_int(j, path, name);
}

double config_double_or(const nlohmann::json& j, const std::string& path, const char* name, double fallback) {
  if (!j.contains(name) || j[name].is_null()) return fallback;
  if (!j[name].is_number()) bad_field(path, name, "is not a number");
  return j[name].get<double>();
}

bool config_bool_or(const nlohmann::json& j, const std::string& path, const char* name, bool fallback) {
  if (!j.contains(name) || j[name].is_null()) return fallback;
  if (!j[name].is_boolean()) bad_field(path, name, "is not a boolean");
  return j[name].get<bool>();
}

std::string config_string_or(const nlohmann::json& j, const std::string& path, const char* name,
                             const std::string& fallback) {
  if (!j.contains(name) || j[name].is_null()) return fallback;
  if (!j[name].is_string()) bad_field(path, name, "is not a string");
  return j[name].get<std::string>();
}

std::string context_limit(const ModelConfig& c) {
  return "the model's " + std::to_string(c.max_context()) + " positions";
}

const char* norm_name(NormKind k) noexcept {
  switch (k) {
    case NormKind::kLayerNorm:
      return "layer_norm";
    case NormKind::kRmsNorm:
      return "rms_norm";
    case NormKind::kRmsNormPlusOne:
      return "rms_norm_plus_one";
    case NormKind::kRmsNormFloatWeight:
      return "rms_norm_float_weight";
  }
  return "?";
}

void validate_common(const ModelConfig& c, const std::string& path) {
  auto positive = [&](std::int64_t v, const char* name, std::int64_t max) {
    if (v <= 0 || v > max)
      throw ModelError(path + ": " + name + " = " + std::to_string(v) + " is outside 1.." + std::to_string(max));
  };
  positive(c.vocab_size, "vocab size", 1 << 24);
  positive(c.d_model, "hidden size", 1 << 16);
  positive(c.n_layers, "layer count", kMaxLayers);
  positive(c.n_heads, "head count", 1024);
  positive(c.d_ff, "MLP size", 1 << 18);
  positive(c.max_positions, "position count", 1 << 24);
  if (c.n_kv_heads != 0) positive(c.n_kv_heads, "key/value head count", c.n_heads);
  if (c.n_heads % c.kv_heads() != 0)
    throw ModelError(path + ": " + std::to_string(c.kv_heads()) + " key/value heads do not divide " +
                     std::to_string(c.n_heads) + " attention heads");
  if (c.head_size != 0) positive(c.head_size, "head size", 1 << 12);
  if (c.head_size == 0 && c.d_model % c.n_heads != 0)
    throw ModelError(path + ": hidden size " + std::to_string(c.d_model) + " is not divisible by " +
                     std::to_string(c.n_heads) + " heads");
  if (!(c.layer_norm_eps > 0)) throw ModelError(path + ": layer norm epsilon must be positive");
}

nlohmann::json read_model_json(const std::string& path, std::size_t max_bytes) {
  try {
    return read_json_file(path, max_bytes);
  } catch (const InputError& e) {
    throw ModelError(e.what());
  }
}

ModelConfig model_config(const std::string& architecture, const ModelShape& shape) {
  ModelConfig c = ArchitectureRegistry::instance().get(architecture, "model config").defaults;
  c.architecture = architecture;
  c.vocab_size = shape.vocab_size;
  c.d_model = shape.d_model;
  c.n_layers = shape.n_layers;
  c.n_heads = shape.n_heads;
  c.d_ff = shape.d_ff;
  c.max_positions = shape.max_positions;
  // Families whose experts have no width key of their own (Mixtral, OLMoE) size them by d_ff.
  if (c.moe.enabled() && c.moe.expert_d_ff == 0) c.moe.expert_d_ff = c.d_ff;
  return c;
}

ModelConfig read_model_config(const std::string& dir) {
  const std::string path = dir + "/config.json";
  if (!is_regular_file(path)) {
    std::error_code ec;
    if (!std::filesystem::exists(dir, ec)) throw ModelError(dir + ": does not exist");
    if (!is_directory(dir)) throw ModelError(dir + ": not a model directory");
    throw ModelError(path + ": missing (not an HF model directory)");
  }
  const nlohmann::json j = read_model_json(path, kMaxConfigBytes);
  if (!j.is_object()) throw ModelError(path + ": not a JSON object");
  const std::string type = config_string_or(j, path, "model_type", "");
  if (type.empty()) throw ModelError(path + ": field 'model_type' is missing");
  const Architecture& arch = ArchitectureRegistry::instance().get(type, path);
  ModelConfig c = arch.parse_config(j, path);
  c.architecture = arch.name;
  if (j.contains("eos_token_id") && j["eos_token_id"].is_number_integer())
    c.eos_token_id = j["eos_token_id"].get<std::int64_t>();
  validate_common(c, path);
  return c;
}

nlohmann::json model_config_json(const ModelConfig& c, const std::string& where) {
  const Architecture& arch = ArchitectureRegistry::instance().get(c.architecture, where);
  if (!arch.write_config) throw ModelError(where + ": architecture '" + c.architecture + "' cannot write its config");
  nlohmann::json j = arch.write_config(c);
  if (c.eos_token_id) j["bos_token_id"] = j["eos_token_id"] = *c.eos_token_id;
  return j;
}

void write_model_config(const ModelConfig& c, const std::string& dir) {
  const nlohmann::json j = model_config_json(c, dir + "/config.json");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw ModelError(dir + ": cannot create the directory: " + ec.message());
  atomic_write_text(dir + "/config.json", j.dump(2) + "\n");
}

std::string affine_export_problem(const ModelConfig& c) {
  if (c.moe.enabled())
    return "the model's MLPs are mixture-of-experts blocks, whose weights cannot hold one affine map";
  if (c.fused_gate_up)
    return "the model's MLP has a fused gate_up_proj without biases, which cannot hold an affine map";
  if (!c.mlp_bias)
    return "the model's MLP has no biases (config.json mlp_bias is false), so its weights cannot hold an affine map";
  // Ungated: act(z) − act(−z) = z needs one hidden unit for +x_i and one for −x_i. Gated: one
  // unit per output.
  const std::int64_t needed = c.gated_mlp ? c.d_model : 2 * c.d_model;
  if (c.d_ff < needed)
    return "cannot fold an affine map into an MLP with d_ff " + std::to_string(c.d_ff) + " < " +
           (c.gated_mlp ? "d_model " : "2·d_model ") + std::to_string(needed);
  return "";
}

}  // namespace linsweep
