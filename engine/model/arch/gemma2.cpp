// Gemma 2: Gemma's layer (RMSNorm scaled by 1 + w, GeGLU, embedding times sqrt(d_model), tied
// head) with norms before and after both attention and the MLP, attention scores scaled by
// 1/sqrt(query_pre_attn_scalar) and soft-capped (attn_logit_softcapping 50), final logits
// soft-capped (final_logit_softcapping 30), and a sliding window (4096) on the even layers.
#include "engine/model/decoder_config.hpp"

namespace linsweep {
namespace {

DecoderVariant gemma2() {
  DecoderVariant v = decoder_variant("gemma2", "Gemma2ForCausalLM");
  v.fixed_keys = {"mlp_bias"};
  v.sliding_layers = SlidingLayers::kEven;
  v.softcapping = v.query_pre_attn_scalar = true;
  ModelConfig& d = v.defaults;
  d.norm = NormKind::kRmsNormPlusOne;
  d.block_norms = BlockNorms::kSandwich;
  d.activation = Activation::kGeluTanh;
  d.scale_embedding = true;
  d.tied_head = true;
  d.head_size = 256;
  d.max_positions = 8192;
  d.sliding_window = 4096;
  d.attn_softcap = 50.0;
  d.final_softcap = 30.0;
  d.query_pre_attn_scalar = 256.0;
  return v;
}

const ArchitectureRegistrar kGemma2{decoder_architecture(gemma2())};

}  // namespace
}  // namespace linsweep
