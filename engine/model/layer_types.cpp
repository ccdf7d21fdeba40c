// Sliding and full attention layers from config.json (no torch).
#include "engine/model/layer_types.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"

namespace linsweep {
namespace {

constexpr const char* kFull = "full_attention";
constexpr const char* kSliding = "sliding_attention";

std::vector<bool> from_layer_types(const nlohmann::json& types, const std::string& path, std::int64_t layers) {
  if (!types.is_array() || static_cast<std::int64_t>(types.size()) != layers)
    throw ModelError(path + ": field 'layer_types' must be an array of one entry per layer (" + std::to_string(layers) +
                     ")");
  std::vector<bool> out;
  for (const auto& t : types) {
    if (!t.is_string() || (t.get<std::string>() != kFull && t.get<std::string>() != kSliding))
      throw ModelError(path + ": field 'layer_types' names " + t.dump() + "; only " + kFull + " and " + kSliding +
                       " are supported");
    out.push_back(t.get<std::string>() == kSliding);
  }
  return out;
}

std::vector<bool> by_rule(const nlohmann::json& j, const std::string& path, SlidingLayers rule, std::int64_t layers) {
  std::vector<bool> out(static_cast<std::size_t>(layers), true);
  if (rule == SlidingLayers::kEven) {
    for (std::int64_t l = 0; l < layers; ++l) out[static_cast<std::size_t>(l)] = l % 2 == 0;
  } else if (rule == SlidingLayers::kPattern) {
    const std::int64_t pattern = config_int_or(j, path, "sliding_window_pattern", 6);
    if (pattern < 1) throw ModelError(path + ": field 'sliding_window_pattern' must be positive");
    for (std::int64_t l = 0; l < layers; ++l) out[static_cast<std::size_t>(l)] = (l + 1) % pattern != 0;
  } else if (rule == SlidingLayers::kFromMaxWindow) {
    const std::int64_t first = config_int_or(j, path, "max_window_layers", 28);
    if (first < 0) throw ModelError(path + ": field 'max_window_layers' is negative");
    for (std::int64_t l = 0; l < layers; ++l) out[static_cast<std::size_t>(l)] = l >= first;
  } else if (rule == SlidingLayers::kLayerTypesOnly) {
    throw ModelError(path + ": field 'sliding_window' is set without 'layer_types', which this architecture needs " +
                     "to know its sliding layers");
  }
  return out;
}

}  // namespace

void read_sliding_layers(const nlohmann::json& j, const std::string& path, SlidingLayers rule, ModelConfig& c) {
  // A layer count out of range is validate_common's to refuse, before anything is sized by it.
  if (c.n_layers < 1 || c.n_layers > kMaxLayers) return;
  const bool given = j.contains("layer_types") && !j["layer_types"].is_null();
  std::vector<bool> sliding;
  if (given) sliding = from_layer_types(j["layer_types"], path, c.n_layers);
  const bool any = std::find(sliding.begin(), sliding.end(), true) != sliding.end();
  if (given && any && !c.sliding_window)
    throw ModelError(path + ": field 'layer_types' names sliding_attention layers but sliding_window is not set");
  if (!given && c.sliding_window) sliding = by_rule(j, path, rule, c.n_layers);
  const bool none = std::find(sliding.begin(), sliding.end(), true) == sliding.end();
  const bool every = std::find(sliding.begin(), sliding.end(), false) == sliding.end();
  c.sliding_layers.clear();
  if (!c.sliding_window || none) {
    c.sliding_window.reset();
  } else if (!every) {
    c.sliding_layers = std::move(sliding);
  }
}

nlohmann::json layer_types_json(const ModelConfig& c) {
  nlohmann::json out = nlohmann::json::array();
  for (std::int64_t l = 0; l < c.n_layers; ++l) out.push_back(c.sliding(l) ? kSliding : kFull);
  return out;
}

}  // namespace linsweep
