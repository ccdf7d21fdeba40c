// Gemma (1): Llama's layer with GeGLU (tanh GELU), RMSNorm scaled by 1 + w, the embedding
// multiplied by sqrt(d_model), tied embeddings, and a head size of its own (256 for 2B and 7B).
#include "engine/model/decoder_config.hpp"

namespace linsweep {
namespace {

DecoderVariant gemma() {
  DecoderVariant v = decoder_variant("gemma", "GemmaForCausalLM");
  v.fixed_keys = {"mlp_bias"};
  v.defaults.norm = NormKind::kRmsNormPlusOne;
  v.defaults.activation = Activation::kGeluTanh;
  v.defaults.scale_embedding = true;
  v.defaults.tied_head = true;
  v.defaults.head_size = 256;
  v.defaults.max_positions = 8192;
  return v;
}

const ArchitectureRegistrar kGemma{decoder_architecture(gemma())};

}  // namespace
}  // namespace linsweep
