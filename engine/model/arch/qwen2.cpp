// Qwen2 and Qwen2.5: Llama's layer with biases on q, k and v (not o), a sliding window only
// when use_sliding_window is true, on the layers from max_window_layers on.
#include "engine/model/decoder_config.hpp"

namespace linsweep {
namespace {

DecoderVariant qwen2() {
  DecoderVariant v = decoder_variant("qwen2", "Qwen2ForCausalLM");
  v.fixed_keys = {"attention_bias", "mlp_bias"};
  v.out_bias_follows_attention_bias = false;
  v.sliding_layers = SlidingLayers::kFromMaxWindow;
  v.sliding_by_default = false;
  v.defaults.attention_bias = true;
  v.defaults.max_positions = 32768;
  v.defaults.sliding_window = 4096;
  return v;
}

const ArchitectureRegistrar kQwen2{decoder_architecture(qwen2())};

}  // namespace
}  // namespace linsweep
