// Phi-3: Llama's layer with q, k and v in one projection (qkv_proj, [q | k | v]) and the MLP's
// gate and up in one (gate_up_proj, [gate | up]), rotary on partial_rotary_factor of each head,
// a sliding window on every layer when sliding_window is set. Its long-context rotary scalings
// (longrope, su, yarn) are refused by name (rope_config.hpp).
#include "engine/model/decoder_config.hpp"

namespace linsweep {
namespace {

DecoderVariant phi3() {
  DecoderVariant v = decoder_variant("phi3", "Phi3ForCausalLM");
  v.fixed_keys = {"attention_bias", "mlp_bias"};
  ModelConfig& d = v.defaults;
  d.fused_qkv = true;
  d.fused_gate_up = true;
  d.layer_norm_eps = 1e-5;
  d.max_positions = 4096;
  return v;
}

const ArchitectureRegistrar kPhi3{decoder_architecture(phi3())};

}  // namespace
}  // namespace linsweep
