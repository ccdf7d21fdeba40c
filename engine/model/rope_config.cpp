// Rotary settings read from and written to config.json (no torch).
#include "engine/model/rope_config.hpp"

#include <nlohmann/json.hpp>

#include "common/enum_names.hpp"
#include "common/errors.hpp"

namespace linsweep {
namespace {

constexpr EnumName<RopeType> kRopeTypes[] = {{RopeType::kDefault, "default"},
                                             {RopeType::kLinear, "linear"},
                                             {RopeType::kDynamic, "dynamic"},
                                             {RopeType::kLlama3, "llama3"}};

// The scaling object `s` (named `where` in messages) into c.rope.
void read_scaling(const nlohmann::json& s, const std::string& path, const std::string& where, ModelConfig& c) {
  const std::string type_key = s.contains("rope_type") ? "rope_type" : "type";
  const std::string type = config_string_or(s, path, type_key.c_str(), "default");
  const auto parsed = parse_enum(kRopeTypes, type);
  if (!parsed)
    throw ModelError(path + ": field '" + where + "." + type_key + "' '" + type + "' is not supported (" +
                     enum_names_list(kRopeTypes) + ")");
  c.rope.type = *parsed;
  if (c.rope.type == RopeType::kDefault) return;
  if (!s.contains("factor")) throw ModelError(path + ": field '" + where + ".factor' is missing");
  c.rope.factor = config_double_or(s, path, "factor", 1.0);
  if (!(c.rope.factor >= 1.0) || c.rope.factor > 1e6)
    throw ModelError(path + ": field '" + where + ".factor' must lie in [1, 1e6]");
  c.rope.original_max_positions = config_int_or(s, path, "original_max_position_embeddings", 0);
  if (c.rope.original_max_positions < 0)
    throw ModelError(path + ": field '" + where + ".original_max_position_embeddings' is negative");
  if (c.rope.type != RopeType::kLlama3) return;
  for (const char* key : {"low_freq_factor", "high_freq_factor", "original_max_position_embeddings"})
    if (!s.contains(key)) throw ModelError(path + ": field '" + where + "." + key + "' is missing (llama3 scaling)");
  c.rope.low_freq_factor = config_double_or(s, path, "low_freq_factor", 1.0);
  c.rope.high_freq_factor = config_double_or(s, path, "high_freq_factor", 4.0);
  if (!(c.rope.low_freq_factor > 0) || !(c.rope.high_freq_factor > c.rope.low_freq_factor) ||
      c.rope.original_max_positions <= 0)
    throw ModelError(path + ": field '" + where +
                     "' needs 0 < low_freq_factor < high_freq_factor and original_max_position_embeddings > 0");
}

// Gemma 3's sliding layers: 5.x's rope_parameters.sliding_attention (`by_type`), or 4.x's
// rope_local_base_freq unscaled where the family has it (defaults.sliding_rotary_base). Kept only
// where it differs from the global rotary.
void read_sliding_rope(const nlohmann::json& j, const std::string& path, const nlohmann::json* by_type,
                       const ModelConfig& defaults, ModelConfig& c) {
  c.sliding_rotary_base.reset();
  c.sliding_rope = {};
  if (by_type && by_type->contains("sliding_attention")) {
    const nlohmann::json& s = (*by_type)["sliding_attention"];
    if (!s.is_object()) throw ModelError(path + ": field 'rope_parameters.sliding_attention' is not an object");
    ModelConfig local;
    read_scaling(s, path, "rope_parameters.sliding_attention", local);
    c.sliding_rope = local.rope;
    c.sliding_rotary_base =
        config_double_or(s, path, "rope_theta", defaults.sliding_rotary_base.value_or(c.rotary_base));
  } else if (!by_type && defaults.sliding_rotary_base) {
    c.sliding_rotary_base = config_double_or(j, path, "rope_local_base_freq", *defaults.sliding_rotary_base);
  }
  if (c.sliding_rotary_base && !(*c.sliding_rotary_base > 0))
    throw ModelError(path + ": the sliding layers' rope_theta (rope_local_base_freq) must be positive");
  if (c.sliding_rotary_base == c.rotary_base && c.sliding_rope == c.rope) {
    c.sliding_rotary_base.reset();
    c.sliding_rope = {};
  }
}

}  // namespace

void read_rope(const nlohmann::json& j, const std::string& path, const ModelConfig& defaults, ModelConfig& c) {
  const bool v5 = j.contains("rope_parameters") && !j["rope_parameters"].is_null();
  const nlohmann::json none = nlohmann::json::object();
  const nlohmann::json& given = v5 ? j["rope_parameters"] : none;
  if (v5 && !given.is_object()) throw ModelError(path + ": field 'rope_parameters' is not an object");
  // 5.x keys the parameters by layer type where sliding layers rotate otherwise (Gemma 3).
  const bool by_type = v5 && (given.contains("full_attention") || given.contains("sliding_attention"));
  if (by_type && !(given.contains("full_attention") && given["full_attention"].is_object()))
    throw ModelError(path + ": field 'rope_parameters.full_attention' is missing or not an object");
  const nlohmann::json& params = by_type ? given["full_attention"] : given;
  const std::string where = by_type ? "rope_parameters.full_attention" : "rope_parameters";
  c.rotary_base = config_double_or(v5 ? params : j, path, "rope_theta", defaults.rotary_base);
  if (!(c.rotary_base > 0)) throw ModelError(path + ": field 'rope_theta' must be positive");
  c.rotary_pct = config_double_or(j, path, "partial_rotary_factor",
                                  config_double_or(params, path, "partial_rotary_factor", c.rotary_pct));
  if (!(c.rotary_pct > 0) || c.rotary_pct > 1)
    throw ModelError(path + ": field 'partial_rotary_factor' must lie in (0, 1]");
  c.rope = {};
  if (v5) {
    read_scaling(params, path, where, c);
  } else if (j.contains("rope_scaling") && !j["rope_scaling"].is_null()) {
    if (!j["rope_scaling"].is_object()) throw ModelError(path + ": field 'rope_scaling' is not an object");
    read_scaling(j["rope_scaling"], path, "rope_scaling", c);
  }
  read_sliding_rope(j, path, by_type ? &given : nullptr, defaults, c);
}

nlohmann::json rope_parameters_json(const ModelConfig& c) {
  auto one = [](double base, const RopeScaling& r) {
    nlohmann::json p = {{"rope_theta", base}, {"rope_type", rope_type_name(r.type)}};
    if (r.type == RopeType::kDefault) return p;
    p["factor"] = r.factor;
    if (r.original_max_positions > 0) p["original_max_position_embeddings"] = r.original_max_positions;
    if (r.type == RopeType::kLlama3) {
      p["low_freq_factor"] = r.low_freq_factor;
      p["high_freq_factor"] = r.high_freq_factor;
    }
    return p;
  };
  if (!c.sliding_rotary_base) return one(c.rotary_base, c.rope);
  return {{"full_attention", one(c.rotary_base, c.rope)},
          {"sliding_attention", one(*c.sliding_rotary_base, c.sliding_rope)}};
}

const char* rope_type_name(RopeType t) noexcept { return enum_name(kRopeTypes, t); }

}  // namespace linsweep
