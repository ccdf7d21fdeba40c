// Mixture-of-experts config.json keys, read and written (no torch).
#include "engine/model/moe_config.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "engine/model/model_config.hpp"

namespace linsweep {
namespace {

// Bounds that keep every product of the parameter count inside int64 (model_config.cpp bounds
// d_model and the layers).
constexpr std::int64_t kMaxExperts = 1 << 12;
constexpr std::int64_t kMaxWidth = 1 << 18;

std::int64_t bounded(const nlohmann::json& j, const std::string& path, const char* key, std::int64_t fallback,
                     std::int64_t low, std::int64_t high) {
  const std::int64_t v = config_int_or(j, path, key, fallback);
  if (v < low || v > high)
    throw ModelError(path + ": field '" + key + "' = " + std::to_string(v) + " is outside " + std::to_string(low) +
                     ".." + std::to_string(high));
  return v;
}

std::vector<std::int64_t> read_dense_layers(const nlohmann::json& j, const std::string& path, std::int64_t layers) {
  std::vector<std::int64_t> out;
  if (!j.contains("mlp_only_layers") || j["mlp_only_layers"].is_null()) return out;
  if (!j["mlp_only_layers"].is_array()) throw ModelError(path + ": field 'mlp_only_layers' is not an array");
  for (const auto& v : j["mlp_only_layers"]) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() >= layers)
      throw ModelError(path + ": field 'mlp_only_layers' names " + v.dump() + ", not one of the model's layers 0.." +
                       std::to_string(layers - 1));
    out.push_back(v.get<std::int64_t>());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

bool MoeConfig::sparse(std::int64_t layer) const noexcept {
  if (experts <= 0 || sparse_step <= 0 || (layer + 1) % sparse_step != 0) return false;
  return !std::binary_search(dense_layers.begin(), dense_layers.end(), layer);
}

void read_moe_config(const nlohmann::json& j, const std::string& path, const MoeKeys& keys, std::int64_t d_ff,
                     std::int64_t layers, MoeConfig& moe) {
  if (keys.experts == nullptr) return;
  moe.experts = bounded(j, path, keys.experts, moe.experts, 0, kMaxExperts);
  moe.expert_d_ff = keys.expert_d_ff ? bounded(j, path, keys.expert_d_ff, moe.expert_d_ff, 1, kMaxWidth) : d_ff;
  if (keys.shared_d_ff) moe.shared_d_ff = bounded(j, path, keys.shared_d_ff, moe.shared_d_ff, 1, kMaxWidth);
  if (keys.norm_topk_prob) moe.normalize_top_k = config_bool_or(j, path, "norm_topk_prob", moe.normalize_top_k);
  if (keys.layer_selection) {
    moe.dense_layers = read_dense_layers(j, path, layers);
    moe.sparse_step = bounded(j, path, "decoder_sparse_step", moe.sparse_step, 1, 1 << 20);
  }
  moe.top_k = config_int_or(j, path, "num_experts_per_tok", moe.top_k);
  if (moe.experts > 0 && (moe.top_k < 1 || moe.top_k > moe.experts))
    throw ModelError(path + ": field 'num_experts_per_tok' = " + std::to_string(moe.top_k) + " is outside 1.." +
                     std::to_string(moe.experts) + " (" + keys.experts + ")");
}

void write_moe_config(const MoeConfig& moe, const MoeKeys& keys, nlohmann::json& j) {
  if (keys.experts == nullptr) return;
  j[keys.experts] = moe.experts;
  j["num_experts_per_tok"] = moe.top_k;
  if (keys.expert_d_ff) j[keys.expert_d_ff] = moe.expert_d_ff;
  if (keys.shared_d_ff) j[keys.shared_d_ff] = moe.shared_d_ff;
  if (keys.norm_topk_prob) j["norm_topk_prob"] = moe.normalize_top_k;
  if (keys.layer_selection) {
    j["mlp_only_layers"] = moe.dense_layers;
    j["decoder_sparse_step"] = moe.sparse_step;
  }
}

nlohmann::json moe_facts_json(const MoeConfig& moe, std::int64_t layers) {
  nlohmann::json j = nlohmann::json::object();
  if (!moe.enabled()) return j;
  j["experts"] = moe.experts;
  j["experts_per_token"] = moe.top_k;
  j["expert_d_ff"] = moe.expert_d_ff;
  if (moe.shared_d_ff > 0) j["shared_expert_d_ff"] = moe.shared_d_ff;
  j["normalize_top_k"] = moe.normalize_top_k;
  j["sparse_layers"] = nlohmann::json::array();
  for (std::int64_t l = 0; l < layers; ++l)
    if (moe.sparse(l)) j["sparse_layers"].push_back(l);
  return j;
}

}  // namespace linsweep
