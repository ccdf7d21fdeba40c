// Qwen2 and Qwen2.5: Llama's layer with biases on q, k and v (not o), a sliding window only
// when use_sliding_window is true.
#include "workers/model/decoder_config.hpp"

namespace linsweep {
namespace {

DecoderVariant qwen2() {
  DecoderVariant v;
  v.model_type = "qwen2";
  v.hf_class = "Qwen2ForCausalLM";
  v.fixed_keys = {"attention_bias", "mlp_bias"};
  v.out_bias_follows_attention_bias = false;
  v.defaults.norm = NormKind::kRmsNorm;
  v.defaults.activation = Activation::kSilu;
  v.defaults.gated_mlp = true;
  v.defaults.attention_bias = true;
  v.defaults.mlp_bias = v.defaults.attention_out_bias = false;
  v.defaults.max_positions = 32768;
  v.defaults.layer_norm_eps = 1e-6;
  v.defaults.rotary_base = 10000.0;
  v.defaults.sliding_window = 4096;
  return v;
}

const ArchitectureRegistrar kQwen2{decoder_architecture(qwen2())};

}  // namespace
}  // namespace linsweep
