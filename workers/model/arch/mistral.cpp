// Mistral: Llama's layer without biases, one sliding window for all layers (4096 unless
// config.json says otherwise or null).
#include "workers/model/decoder_config.hpp"

namespace linsweep {
namespace {

DecoderVariant mistral() {
  DecoderVariant v;
  v.model_type = "mistral";
  v.hf_class = "MistralForCausalLM";
  v.fixed_keys = {"attention_bias", "mlp_bias"};
  v.defaults.norm = NormKind::kRmsNorm;
  v.defaults.activation = Activation::kSilu;
  v.defaults.gated_mlp = true;
  v.defaults.mlp_bias = v.defaults.attention_bias = v.defaults.attention_out_bias = false;
  v.defaults.max_positions = 4096 * 32;
  v.defaults.layer_norm_eps = 1e-6;
  v.defaults.rotary_base = 10000.0;
  v.defaults.sliding_window = 4096;
  return v;
}

const ArchitectureRegistrar kMistral{decoder_architecture(mistral())};

}  // namespace
}  // namespace linsweep
