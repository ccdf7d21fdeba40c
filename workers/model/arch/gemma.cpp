// Gemma (1): Llama's layer with GeGLU (tanh GELU), RMSNorm scaled by 1 + w, the embedding
// multiplied by sqrt(d_model), tied embeddings, and a head size of its own (256 for 2B and 7B).
#include "workers/model/decoder_config.hpp"

namespace linsweep {
namespace {

DecoderVariant gemma() {
  DecoderVariant v;
  v.model_type = "gemma";
  v.hf_class = "GemmaForCausalLM";
  v.fixed_keys = {"mlp_bias"};
  v.defaults.norm = NormKind::kRmsNormPlusOne;
  v.defaults.activation = Activation::kGeluTanh;
  v.defaults.gated_mlp = true;
  v.defaults.mlp_bias = v.defaults.attention_bias = false;
  v.defaults.scale_embedding = true;
  v.defaults.tied_head = true;
  v.defaults.head_size = 256;
  v.defaults.max_positions = 8192;
  v.defaults.layer_norm_eps = 1e-6;
  v.defaults.rotary_base = 10000.0;
  return v;
}

const ArchitectureRegistrar kGemma{decoder_architecture(gemma())};

}  // namespace
}  // namespace linsweep
