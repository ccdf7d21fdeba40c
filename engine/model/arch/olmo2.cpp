// OLMo 2: Llama's layer with its norms moved onto the sublayers' outputs (no norm before attention
// or the MLP), RMSNorm weights applied before the cast to the stream's dtype, and an RMSNorm on q
// and on k over the whole projection (all heads at once) before rotary; no sliding window.
#include "engine/model/decoder_config.hpp"

namespace linsweep {
namespace {

DecoderVariant olmo2() {
  DecoderVariant v = decoder_variant("olmo2", "Olmo2ForCausalLM");
  v.fixed_keys = {"mlp_bias", "sliding_window"};
  ModelConfig& d = v.defaults;
  d.norm = NormKind::kRmsNormFloatWeight;
  d.block_norms = BlockNorms::kPost;
  d.qk_norm = QkNorm::kWhole;
  d.layer_norm_eps = 1e-5;
  return v;
}

const ArchitectureRegistrar kOlmo2{decoder_architecture(olmo2())};

}  // namespace
}  // namespace linsweep
