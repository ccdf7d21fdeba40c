// Llama 2, 3, 3.1 and 3.2 (and TinyLlama, SmolLM, Yi: model_type "llama"): RMSNorm, SwiGLU,
// rotary embeddings with optional linear, dynamic or llama3 scaling, grouped-query attention.
#include "engine/model/decoder_config.hpp"

namespace linsweep {
namespace {

DecoderVariant llama() { return decoder_variant("llama", "LlamaForCausalLM"); }

const ArchitectureRegistrar kLlama{decoder_architecture(llama())};

}  // namespace
}  // namespace linsweep
