// Mistral: Llama's layer without biases, one sliding window for all layers (4096 unless
// config.json says otherwise or null).
#include "engine/model/decoder_config.hpp"

namespace linsweep {
namespace {

DecoderVariant mistral() {
  DecoderVariant v = decoder_variant("mistral", "MistralForCausalLM");
  v.fixed_keys = {"attention_bias", "mlp_bias"};
  v.defaults.max_positions = 4096 * 32;
  v.defaults.sliding_window = 4096;
  return v;
}

const ArchitectureRegistrar kMistral{decoder_architecture(mistral())};

}  // namespace
}  // namespace linsweep
