// Llama 2, 3, 3.1 and 3.2 (and TinyLlama, SmolLM, Yi: model_type "llama"): RMSNorm, SwiGLU,
// rotary embeddings with optional linear, dynamic or llama3 scaling, grouped-query attention.
#include "workers/model/decoder_config.hpp"

namespace linsweep {
namespace {

DecoderVariant llama() {
  DecoderVariant v;
  v.model_type = "llama";
  v.hf_class = "LlamaForCausalLM";
  v.defaults.norm = NormKind::kRmsNorm;
  v.defaults.activation = Activation::kSilu;
  v.defaults.gated_mlp = true;
  v.defaults.mlp_bias = v.defaults.attention_bias = false;
  v.defaults.max_positions = 2048;
  v.defaults.layer_norm_eps = 1e-6;
  v.defaults.rotary_base = 10000.0;
  return v;
}

const ArchitectureRegistrar kLlama{decoder_architecture(llama())};

}  // namespace
}  // namespace linsweep
