// Architecture-neutral description of a decoder-only transformer read from HF config.json.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/model/moe_config.hpp"

namespace linsweep {

enum class Activation { kGeluTanh, kGeluExact, kSilu };

// The normalisation of every norm of the model (around attention and the MLP, on q and k, after
// the last layer): LayerNorm (weight and bias), RMSNorm (x / rms(x) · w) with the weight applied
// after the cast back to the stream's dtype (Llama) or before it (OLMo 2), or Gemma's RMSNorm
// scaled by 1 + w.
enum class NormKind { kLayerNorm, kRmsNorm, kRmsNormPlusOne, kRmsNormFloatWeight };

// Where a pre-norm decoder layer's norms sit (n: a norm of its own at each place):
//   kPre       h += attn(n(h));     h += mlp(n(h))       Llama and most relatives
//   kSandwich  h += n(attn(n(h)));  h += n(mlp(n(h)))    Gemma 2 and 3
//   kPost      h += n(attn(h));     h += n(mlp(h))       OLMo 2
enum class BlockNorms { kPre, kSandwich, kPost };

// RMSNorm on queries and keys before rotary: none; per head over head_dim (Qwen3, Gemma 3); or
// over the whole projection, all heads at once (OLMo 2, OLMoE).
enum class QkNorm { kNone, kPerHead, kWhole };

// How rotary frequencies are scaled past the training context (HF's rope_type): kDefault leaves
// them; kLinear divides positions by `factor`; kDynamic raises the base for windows longer than
// original_max_positions (NTK); kLlama3 divides the low frequencies by `factor` and blends the
// middle band between low_freq_factor and high_freq_factor.
enum class RopeType { kDefault, kLinear, kDynamic, kLlama3 };

struct RopeScaling {
  RopeType type = RopeType::kDefault;
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  std::int64_t original_max_positions = 0;  // 0: max_positions
  bool operator==(const RopeScaling&) const = default;
};

// Everything the model builders need. Filled by an architecture's config parser; fields
// an architecture does not use keep their defaults.
struct ModelConfig {
  std::string architecture;  // registry name, e.g. "gpt2", "gpt_neox"
  std::int64_t vocab_size = 0;
  std::int64_t d_model = 0;
  std::int64_t n_layers = 0;
  std::int64_t n_heads = 0;
  std::int64_t n_kv_heads = 0;  // key/value heads (grouped-query attention); 0: n_heads
  std::int64_t head_size = 0;   // per head; 0: d_model / n_heads
  std::int64_t d_ff = 0;
  std::int64_t max_positions = 0;
  double layer_norm_eps = 1e-5;  // the epsilon of every norm, LayerNorm or RMSNorm
  NormKind norm = NormKind::kLayerNorm;
  Activation activation = Activation::kGeluTanh;
  // A gated MLP computes down(act(gate·x) ⊙ up·x) (SwiGLU, GeGLU); otherwise down(act(up·x)).
  bool gated_mlp = false;
  bool mlp_bias = true;
  bool tied_head = false;
  bool attention_bias = true;      // q, k, v (GPT-NeoX: the fused projection and dense)
  bool attention_out_bias = true;  // the output projection (pre-norm decoders)
  bool scale_embedding = false;    // the embedding is multiplied by sqrt(d_model) (Gemma)
  RopeScaling rope;
  // Sliding-window attention: a query at i sees keys j with i − window < j ≤ i, on the layers of
  // sliding_layers (empty: every layer). Canonical after parsing: sliding_layers is empty when
  // every layer slides, and no window is kept that no layer uses.
  std::optional<std::int64_t> sliding_window;
  std::vector<bool> sliding_layers;
  // Gemma 3: sliding layers rotate with their own base and scaling (rope_local_base_freq).
  std::optional<double> sliding_rotary_base;
  RopeScaling sliding_rope;
  // The pre-norm decoders' variants (decoder_config.hpp): norm placement, q/k norms, fused
  // projections (Phi-3's qkv_proj [q | k | v] and gate_up_proj [gate | up]), OLMoE's clamp of
  // q, k and v, Gemma's logit soft-capping (x → tanh(x / cap)·cap on the scaled attention scores
  // before the mask, and on the final logits) and attention scale 1/sqrt(query_pre_attn_scalar).
  BlockNorms block_norms = BlockNorms::kPre;
  QkNorm qk_norm = QkNorm::kNone;
  bool fused_qkv = false;
  bool fused_gate_up = false;
  std::optional<double> clip_qkv;
  std::optional<double> attn_softcap;
  std::optional<double> final_softcap;
  std::optional<double> query_pre_attn_scalar;
  // Mixture of experts (moe_config.hpp); moe.experts == 0 for a dense model.
  MoeConfig moe;
  // GPT-2
  bool scale_attn_weights = true;
  bool scale_attn_by_inverse_layer_idx = false;
  // Rotary embeddings (GPT-NeoX, the pre-norm decoders): the share of each head rotated, the base.
  double rotary_pct = 1.0;
  double rotary_base = 10000.0;
  // Attention and MLP read the same block input and both add to it (GPT-NeoX's default).
  bool parallel_residual = false;
  std::optional<std::int64_t> eos_token_id;

  std::int64_t head_dim() const noexcept { return head_size > 0 ? head_size : n_heads > 0 ? d_model / n_heads : 0; }
  std::int64_t kv_heads() const noexcept { return n_kv_heads > 0 ? n_kv_heads : n_heads; }
  // The longest window computed exactly: the positions.
  std::int64_t max_context() const noexcept { return max_positions; }
  // Whether `layer` attends through the sliding window.
  bool sliding(std::int64_t layer) const noexcept {
    return sliding_window &&
           (sliding_layers.empty() || (layer >= 0 && layer < static_cast<std::int64_t>(sliding_layers.size()) &&
                                       sliding_layers[static_cast<std::size_t>(layer)]));
  }
  // Whether `layer`'s MLP is a mixture of experts.
  bool sparse(std::int64_t layer) const noexcept { return moe.sparse(layer); }

  // Which of its layers this process builds, for a model split by layers over ranks
  // (runtime.stages; model_stages.hpp): [built_first, built_end), every layer when built_end is
  // 0; and the dtype each layer is converted to as soon as it is built ("": float32), so that a
  // model loaded in bfloat16 is never held whole in float32. Neither is read from or written
  // to config.json.
  std::int64_t built_first = 0, built_end = 0;
  std::string built_dtype;
  // Whether a checkpoint's weights will overwrite every parameter (load_model): the builder then
  // leaves them uninitialised instead of drawing HF's random initialisation, which the load
  // would overwrite (a draw per weight, slower still in bfloat16).
  bool built_to_load = false;
  bool builds_layer(std::int64_t layer) const noexcept {
    return built_end == 0 || (layer >= built_first && layer < built_end);
  }
  // Whether this process embeds (it builds the first layer) and scores (it builds the last):
  // a stage holds the input embedding only where it embeds, and the output head only where it
  // scores (a head tied to the embedding brings the embedding's matrix with it).
  bool builds_input() const noexcept { return built_end == 0 || built_first == 0; }
  bool builds_output() const noexcept { return built_end == 0 || built_end == n_layers; }
  bool builds_token_matrix() const noexcept { return builds_input() || (tied_head && builds_output()); }
  bool operator==(const ModelConfig&) const = default;
};

// The sizes that shape a model.
struct ModelShape {
  std::int64_t vocab_size = 0, d_model = 0, n_layers = 0, n_heads = 0, d_ff = 0, max_positions = 0;
};

// A config of `architecture` with `shape`'s sizes and every other field at the architecture's
// default (Architecture::defaults; for models built in code: the demo's, benchmarks', tests').
// Throws ModelError for an unknown architecture; checks nothing else: the sizes are the
// caller's to get right.
ModelConfig model_config(const std::string& architecture, const ModelShape& shape);

// Reads `dir/config.json` (at most 16 MiB), finds its `model_type` in the architecture
// registry and lets that architecture parse it. Throws ModelError naming config.json on a
// missing or invalid file, an unknown architecture (listing the known ones), or
// inconsistent sizes (d_model not divisible by n_heads, non-positive sizes, ...).
ModelConfig read_model_config(const std::string& dir);

// The config.json of `c`, as its architecture's write_config writes it. Throws
// ModelError("<where>: ...") for an unknown architecture or a config that architecture cannot
// express.
nlohmann::json model_config_json(const ModelConfig& c, const std::string& where = "config.json");

// Writes `dir`/config.json (dir created with its parents) for `c` (model_config_json),
// atomically (temporary file, fsync, rename), such that
// read_model_config(dir) gives `c` back. Throws ModelError for an unknown architecture or a
// config that architecture cannot express, StorageError when the file cannot be written.
void write_model_config(const ModelConfig& c, const std::string& dir);

// The most layers a model may have (validate_common).
inline constexpr std::int64_t kMaxLayers = 1024;

// The most config.json may hold.
inline constexpr std::size_t kMaxConfigBytes = 16u << 20;

// A JSON file of a model directory (config.json, the safetensors index) read with
// read_json_file, whose errors (missing, too large, malformed) become ModelError: a model that
// cannot be read is the model's problem.
nlohmann::json read_model_json(const std::string& path, std::size_t max_bytes);

// Helpers for architecture parsers: typed field access that throws
// ModelError("<path>: field 'name' ...") on a missing or mistyped field.
std::int64_t config_int(const nlohmann::json& j, const std::string& path, const char* name);
std::int64_t config_int_or(const nlohmann::json& j, const std::string& path, const char* name, std::int64_t fallback);
double config_double_or(const nlohmann::json& j, const std::string& path, const char* name, double fallback);
bool config_bool_or(const nlohmann::json& j, const std::string& path, const char* name, bool fallback);
std::string config_string_or(const nlohmann::json& j, const std::string& path, const char* name,
                             const std::string& fallback);

// Why an affine map cannot be folded into the MLP weights of a model with config `c` (a
// mixture-of-experts block, a fused gate_up projection, an MLP without biases, or d_ff below
// 2·d_model ungated or d_model gated), or "" when it can: what
// export_hf_directory (export_hf.hpp) refuses before writing, for callers that must know before any work.
std::string affine_export_problem(const ModelConfig& c);

// What bounds max_context(), for messages: "the model's 1024 positions".
std::string context_limit(const ModelConfig& c);

// "layer_norm", "rms_norm", "rms_norm_plus_one" or "rms_norm_float_weight".
const char* norm_name(NormKind k) noexcept;

// Validates sizes shared by every architecture (d_model divisible by n_heads unless head_size
// is given, kv heads dividing heads); throws ModelError naming `path`.
void validate_common(const ModelConfig& c, const std::string& path);

}  // namespace linsweep
