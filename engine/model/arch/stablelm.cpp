// StableLM 2 (model_type "stablelm"): Llama's layer with LayerNorms (weight and bias), rotary
// embeddings on a quarter of each head (partial_rotary_factor), optional q/k/v biases
// (use_qkv_bias), the norm epsilon under layer_norm_eps.
#include "engine/model/decoder_config.hpp"

namespace linsweep {
namespace {

DecoderVariant stablelm() {
  DecoderVariant v = decoder_variant("stablelm", "StableLmForCausalLM");
  v.fixed_keys = {"mlp_bias"};
  v.renamed_keys = {{"rms_norm_eps", "layer_norm_eps"}, {"attention_bias", "use_qkv_bias"}};
  v.out_bias_follows_attention_bias = false;
  v.defaults.norm = NormKind::kLayerNorm;
  v.defaults.rotary_pct = 0.25;
  v.defaults.max_positions = 4096;
  v.defaults.layer_norm_eps = 1e-5;
  return v;
}

const ArchitectureRegistrar kStablelm{decoder_architecture(stablelm())};

}  // namespace
}  // namespace linsweep
