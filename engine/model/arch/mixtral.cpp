// Mixtral: Mistral's layer with a sparse mixture of experts for its MLP (block_sparse_moe): a
// router over num_local_experts (8) SwiGLU experts (w1 gate, w3 up, w2 down), the
// num_experts_per_tok (2) most probable chosen and their weights always renormalised.
#include "engine/model/decoder_config.hpp"

namespace linsweep {
namespace {

DecoderVariant mixtral() {
  DecoderVariant v = decoder_variant("mixtral", "MixtralForCausalLM");
  v.fixed_keys = {"attention_bias", "mlp_bias"};
  v.moe = {.experts = "num_local_experts"};
  ModelConfig& d = v.defaults;
  d.layer_norm_eps = 1e-5;
  d.rotary_base = 1e6;
  d.max_positions = 4096 * 32;
  d.moe = {.experts = 8, .top_k = 2, .normalize_top_k = true, .naming = MoeNaming::kBlockSparseMoe};
  return v;
}

const ArchitectureRegistrar kMixtral{decoder_architecture(mixtral())};

}  // namespace
}  // namespace linsweep
