// Qwen3 (dense): Llama's layer with an RMSNorm on q and on k per head (q_norm, k_norm over
// head_dim) before rotary, a head_dim of its own (128 by default), attention_bias on q, k, v and
// o, and a sliding window only with use_sliding_window, on the layers from max_window_layers on.
#include "engine/model/decoder_config.hpp"

namespace linsweep {
namespace {

DecoderVariant qwen3() {
  DecoderVariant v = decoder_variant("qwen3", "Qwen3ForCausalLM");
  v.fixed_keys = {"mlp_bias"};
  v.sliding_layers = SlidingLayers::kFromMaxWindow;
  v.sliding_by_default = false;
  v.defaults.qk_norm = QkNorm::kPerHead;
  v.defaults.head_size = 128;
  v.defaults.max_positions = 32768;
  v.defaults.sliding_window = 4096;
  return v;
}

const ArchitectureRegistrar kQwen3{decoder_architecture(qwen3())};

}  // namespace
}  // namespace linsweep
