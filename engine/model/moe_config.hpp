// The mixture-of-experts facts of a model (Mixtral, Qwen2-MoE, OLMoE) and their config.json keys,
// without torch: what the MoE block computes, what the parameter count and FLOPs need.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace linsweep {

// How a sparse layer's tensors are named in checkpoints (the module under the layer, then the
// router "gate" and experts.N.*):
//   kBlockSparseMoe  block_sparse_moe.{gate, experts.N.{w1 (gate), w3 (up), w2 (down)}}     (Mixtral)
//   kMlpExperts      mlp.{gate, experts.N.{gate,up,down}_proj, shared_expert.*, shared_expert_gate}
enum class MoeNaming { kBlockSparseMoe, kMlpExperts };

// A sparse layer: the router's softmax over `experts` logits (in float32), the `top_k` largest
// probabilities (renormalised to sum 1 when normalize_top_k), each chosen expert a gated MLP of
// width expert_d_ff weighted by its probability, plus, when shared_d_ff > 0, a shared gated MLP
// of that width scaled by sigmoid(shared_expert_gate·x). experts == 0: a dense model.
struct MoeConfig {
  std::int64_t experts = 0;
  std::int64_t top_k = 0;
  std::int64_t expert_d_ff = 0;
  std::int64_t shared_d_ff = 0;
  bool normalize_top_k = false;
  // Layers that stay dense (Qwen2-MoE's mlp_only_layers, sorted), and the stride of the sparse
  // ones (decoder_sparse_step): layer l is sparse iff l is not dense and (l + 1) % sparse_step == 0.
  std::vector<std::int64_t> dense_layers{};
  std::int64_t sparse_step = 1;
  MoeNaming naming = MoeNaming::kMlpExperts;

  bool enabled() const noexcept { return experts > 0; }
  bool sparse(std::int64_t layer) const noexcept;
  bool operator==(const MoeConfig&) const = default;
};

// The config.json keys of one family's MoE config class. `experts` null: a dense family (the
// other fields are then unused).
struct MoeKeys {
  const char* experts = nullptr;      // "num_local_experts" (Mixtral) or "num_experts"
  const char* expert_d_ff = nullptr;  // "moe_intermediate_size"; null: experts are intermediate_size wide
  const char* shared_d_ff = nullptr;  // "shared_expert_intermediate_size"; null: no shared expert
  bool norm_topk_prob = false;        // reads norm_topk_prob; otherwise the default's normalize_top_k holds
  bool layer_selection = false;       // reads mlp_only_layers and decoder_sparse_step
};

// Reads `keys`' fields of `j` into `moe`, starting from its values (the family's defaults);
// `d_ff` is the model's intermediate_size, `layers` its layer count. Throws ModelError naming
// `path` and the key for a non-positive size, num_experts_per_tok outside 1..experts, a layer
// of mlp_only_layers outside the model, or a sparse step below 1.
void read_moe_config(const nlohmann::json& j, const std::string& path, const MoeKeys& keys, std::int64_t d_ff,
                     std::int64_t layers, MoeConfig& moe);

// Adds `moe`'s fields to `j` under `keys` (what read_moe_config reads back).
void write_moe_config(const MoeConfig& moe, const MoeKeys& keys, nlohmann::json& j);

// The facts `inspect` shows for a model of `layers` layers: {"experts", "experts_per_token",
// "expert_d_ff", "shared_expert_d_ff" (where there is a shared expert), "normalize_top_k",
// "sparse_layers": [...]}; empty for a dense model.
nlohmann::json moe_facts_json(const MoeConfig& moe, std::int64_t layers);

}  // namespace linsweep
