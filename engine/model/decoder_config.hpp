// The facts of a pre-norm decoder architecture (Llama and its relatives) without torch.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/model/architecture_registry.hpp"
#include "engine/model/layer_types.hpp"
#include "engine/model/model_config.hpp"
#include "engine/model/moe_config.hpp"

namespace linsweep {

// What sets one pre-norm decoder apart from another. Every such architecture has Llama's tensors
// (model.embed_tokens, model.layers.N.{self_attn.{q,k,v,o}_proj, mlp.{gate,up,down}_proj, norms},
// model.norm, lm_head) and Llama's config.json keys, with the variations that `defaults` selects
// (ModelConfig: norm kind and placement, q/k norms, fused projections, experts) and the keys
// below; a variant fixes the defaults of its HF config class and the keys that class lacks.
struct DecoderVariant {
  const char* model_type = "";  // HF model_type, the registry name
  const char* hf_class = "";    // architectures[0] written to config.json
  ModelConfig defaults;         // every field before config.json is read
  // Keys of the shared field table (and "sliding_window") that this architecture's config class
  // lacks: they are neither read nor written, and `defaults` holds (Qwen2's q/k/v biases are
  // always on; OLMo 2 has no sliding window).
  std::vector<std::string> fixed_keys;
  // Keys of the shared field table that this architecture's config class spells differently:
  // {shared key, its key} (StableLM's {"rms_norm_eps", "layer_norm_eps"}).
  std::vector<std::pair<std::string, std::string>> renamed_keys;
  // Llama's attention_bias covers o_proj as well as q, k and v; Qwen2's biases stop at v.
  bool out_bias_follows_attention_bias = true;
  // Which layers slide when config.json has a sliding_window but no layer_types, and whether a
  // config without use_sliding_window slides at all (Qwen's config classes: false).
  SlidingLayers sliding_layers = SlidingLayers::kEvery;
  bool sliding_by_default = true;
  // Keys only some config classes have; elsewhere a non-null value is refused, never ignored.
  bool softcapping = false;            // attn_logit_softcapping, final_logit_softcapping (Gemma 2, 3)
  bool query_pre_attn_scalar = false;  // the attention scale's 1/sqrt(query_pre_attn_scalar) (Gemma 2, 3)
  bool clip_qkv = false;               // OLMoE
  // The mixture-of-experts keys (experts null: a dense family).
  MoeKeys moe;
};

// A variant named `model_type` (written as `hf_class`) with Llama's defaults, which each
// relative then changes where its config class differs: RMSNorm (eps 1e-6) before attention and
// the MLP, a gated MLP with SiLU, no biases, rotary base 10000 on every dimension, 2048
// positions, untied head, no sliding window, every shared key read as spelled.
DecoderVariant decoder_variant(const char* model_type, const char* hf_class);

// The Architecture of `v`: body "decoder"; config.json read in the 4.x and 5.x forms
// (rope_theta/rope_scaling/torch_dtype or rope_parameters/dtype/layer_types) from one field table
// and written in the 5.x form; the exact parameter count (experts included); roles by the shared
// tensor names. Reading throws ModelError naming the file and the key for anything the decoder
// does not compute: an unknown rope type, logit soft-capping where the variant has none,
// bidirectional attention, a layer type other than full or sliding attention, StableLM's
// qk_layernorm, a parallel residual (use_parallel_residual), and for the sizes and expert counts
// that do not fit (moe_config.hpp, layer_types.hpp).
Architecture decoder_architecture(const DecoderVariant& v);

}  // namespace linsweep
