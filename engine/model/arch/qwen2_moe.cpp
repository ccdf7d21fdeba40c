// Qwen2-MoE (Qwen1.5-MoE, Qwen2-57B-A14B): Qwen2's layer (q/k/v biases, qkv_bias) with a
// mixture of experts for its MLP on the sparse layers (not in mlp_only_layers, every
// decoder_sparse_step-th): num_experts (60) SwiGLU experts of moe_intermediate_size, the
// num_experts_per_tok (4) most probable chosen (renormalised only with norm_topk_prob), plus a
// shared expert of shared_expert_intermediate_size scaled by sigmoid(shared_expert_gate·x). Dense
// layers have Qwen2's MLP of intermediate_size. A sliding window needs layer_types.
#include "engine/model/decoder_config.hpp"

namespace linsweep {
namespace {

DecoderVariant qwen2_moe() {
  DecoderVariant v = decoder_variant("qwen2_moe", "Qwen2MoeForCausalLM");
  v.fixed_keys = {"mlp_bias"};
  v.renamed_keys = {{"attention_bias", "qkv_bias"}};
  v.out_bias_follows_attention_bias = false;
  v.sliding_layers = SlidingLayers::kLayerTypesOnly;
  v.sliding_by_default = false;
  v.moe = {.experts = "num_experts",
           .expert_d_ff = "moe_intermediate_size",
           .shared_d_ff = "shared_expert_intermediate_size",
           .norm_topk_prob = true,
           .layer_selection = true};
  ModelConfig& d = v.defaults;
  d.attention_bias = true;
  d.max_positions = 32768;
  d.sliding_window = 4096;
  d.moe = {.experts = 60, .top_k = 4, .expert_d_ff = 1408, .shared_d_ff = 5632, .naming = MoeNaming::kMlpExperts};
  return v;
}

const ArchitectureRegistrar kQwen2Moe{decoder_architecture(qwen2_moe())};

}  // namespace
}  // namespace linsweep
