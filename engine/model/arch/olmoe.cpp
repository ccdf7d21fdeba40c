// OLMoE: Llama's layer with an RMSNorm on q and on k over the whole projection before rotary,
// q, k and v clamped to ±clip_qkv when set, head_dim = hidden_size / heads, and a mixture of
// many small experts for its MLP: num_experts (64) SwiGLU experts of intermediate_size, the
// num_experts_per_tok (8) most probable chosen, renormalised only with norm_topk_prob.
#include "engine/model/decoder_config.hpp"

namespace linsweep {
namespace {

DecoderVariant olmoe() {
  DecoderVariant v = decoder_variant("olmoe", "OlmoeForCausalLM");
  v.fixed_keys = {"mlp_bias", "head_dim", "sliding_window"};
  v.clip_qkv = true;
  v.moe = {.experts = "num_experts", .norm_topk_prob = true};
  ModelConfig& d = v.defaults;
  d.qk_norm = QkNorm::kWhole;
  d.layer_norm_eps = 1e-5;
  d.max_positions = 4096;
  d.moe = {.experts = 64, .top_k = 8, .naming = MoeNaming::kMlpExperts};
  return v;
}

const ArchitectureRegistrar kOlmoe{decoder_architecture(olmoe())};

}  // namespace
}  // namespace linsweep
