// The facts of a pre-norm decoder architecture (Llama and its relatives) without torch.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/model/architecture_registry.hpp"
#include "engine/model/model_config.hpp"

namespace linsweep {

// What sets one pre-norm decoder (Llama, Mistral, Qwen2, Gemma) apart from another. Every
// such architecture has the same tensors (model.embed_tokens, model.layers.N.{input_layernorm,
// self_attn.{q,k,v,o}_proj, post_attention_layernorm, mlp.{gate,up,down}_proj}, model.norm,
// lm_head) and the same config.json keys; a variant fixes the defaults and the keys its HF class
// does not have.
struct DecoderVariant {
  const char* model_type = "";  // HF model_type, the registry name
  const char* hf_class = "";    // architectures[0] written to config.json
  ModelConfig defaults;         // every field before config.json is read
  // Keys of the shared field table that this architecture's config class lacks: they are
  // neither read nor written, and `defaults` holds (Qwen2's q/k/v biases are always on).
  std::vector<std::string> fixed_keys;
  // Keys of the shared field table that this architecture's config class spells differently:
  // {shared key, its key} (StableLM's {"rms_norm_eps", "layer_norm_eps"}).
  std::vector<std::pair<std::string, std::string>> renamed_keys;
  // Llama's attention_bias covers o_proj as well as q, k and v; Qwen2's biases stop at v.
  bool out_bias_follows_attention_bias = true;
};

// A variant named `model_type` (written as `hf_class`) with Llama's defaults, which each
// relative then changes where its config class differs: RMSNorm (eps 1e-6), a gated MLP with
// SiLU, no biases, rotary base 10000 on every dimension, 2048 positions, untied head, no
// sliding window, every shared key read as spelled.
DecoderVariant decoder_variant(const char* model_type, const char* hf_class);

// The Architecture of `v`: body "decoder"; config.json read in the 4.x and 5.x forms
// (rope_theta/rope_scaling/torch_dtype or rope_parameters/dtype) from one field table and
// written in the 5.x form; the parameter count; roles by the shared tensor names. Reading
// throws ModelError naming the file and the key for anything the decoder does not compute: an
// unknown rope type, logit soft-capping, bidirectional attention, a layer type other than full
// attention, q/k norms (qk_layernorm), a parallel residual (use_parallel_residual). A sliding window is recorded
// (ModelConfig::sliding_window) and refused by the model for windows longer than it.
Architecture decoder_architecture(const DecoderVariant& v);

}  // namespace linsweep
