// Gemma 3 (text): Gemma 2's layer without soft-capping by default, with an RMSNorm (1 + w) on q
// and on k per head before rotary, and local and global layers: every sliding_window_pattern-th
// layer (6) is global, the others slide (window 4096; layer_types when given); the global ones
// rotate with rope_theta (1e6) and rope_scaling, the local ones with rope_local_base_freq (1e4)
// unscaled (5.x: rope_parameters keyed by layer type).
#include "engine/model/decoder_config.hpp"

namespace linsweep {
namespace {

DecoderVariant gemma3_text() {
  DecoderVariant v = decoder_variant("gemma3_text", "Gemma3ForCausalLM");
  v.fixed_keys = {"mlp_bias"};
  v.sliding_layers = SlidingLayers::kPattern;
  v.softcapping = v.query_pre_attn_scalar = true;
  ModelConfig& d = v.defaults;
  d.norm = NormKind::kRmsNormPlusOne;
  d.block_norms = BlockNorms::kSandwich;
  d.qk_norm = QkNorm::kPerHead;
  d.activation = Activation::kGeluTanh;
  d.scale_embedding = true;
  d.tied_head = true;
  d.head_size = 256;
  d.max_positions = 131072;
  d.sliding_window = 4096;
  d.query_pre_attn_scalar = 256.0;
  d.rotary_base = 1e6;
  d.sliding_rotary_base = 1e4;
  return v;
}

const ArchitectureRegistrar kGemma3Text{decoder_architecture(gemma3_text())};

}  // namespace
}  // namespace linsweep
