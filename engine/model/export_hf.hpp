// Writing a (possibly partly linearized) LanguageModel back out as a HuggingFace model directory.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/language_model.hpp"
#include "engine/model/mlp_hook.hpp"

namespace linsweep {

struct ExportOptions {
  // Extra string entries for the safetensors header's __metadata__. "format" is always "pt"
  // (transformers refuses a safetensors file whose metadata says otherwise); a different
  // value here is refused.
  std::map<std::string, std::string> metadata;
};

// The tokenizer files copied from the source directory when present.
inline constexpr const char* kExportedTokenizerFiles[] = {"vocab.json", "merges.txt", "tokenizer.json",
                                                          "tokenizer_config.json", "special_tokens_map.json"};

// Writes `model` as the HF directory `out_dir`, loadable by load_model and by transformers'
// from_pretrained:
//   - config.json: `source_dir/config.json`, byte for byte (it must describe `model`: same
//     architecture and sizes, checked with read_model_config);
//   - model.safetensors: every parameter under its name in `model.named_parameters()` (the
//     HF names), float32, C order, whatever the parameters' device and dtype; the
//     metadata is {"format": "pt"} plus options.metadata;
//   - the files of kExportedTokenizerFiles that exist in `source_dir`, byte for byte.
// Only the parameters are exported: the model's hooks are ignored. Instead, `linear` maps a
// layer index to an affine map y = x·W + b (W [d, d] input rows, b [d]) that is written into
// that layer's ordinary MLP weights, found by the architecture's MlpLayout. Ungated MLPs use
// act(z) − act(−z) = z (true of exact GELU, its tanh form and SiLU): the first linear layer
// maps x to [x, −x, 0…] with zero bias, the second takes [W; −W; 0] with bias b. Gated MLPs
// (which need MLP biases) get a gate of weight 0 and bias 1, so that every unit is scaled by
// the constant act(1), which the up projection divides out. So the exported MLP computes the
// affine map up to float32 rounding, and the exported model is an ordinary checkpoint of the
// same architecture.
//
// The directory is built in a fresh sibling `.<name>.export-*` directory, every file and that
// directory are fsynced, and it is then renamed into place (an existing `out_dir` is
// exchanged atomically where the file system supports it, then deleted with everything in
// it, best effort); finally the parent directory is fsynced. The parent is created when missing. On
// any failure the temporary directory is removed and an existing `out_dir` is untouched.
//
// Throws ModelError on: an unknown architecture; a layer of `linear` out of range, or a map
// whose shapes are not W [d, d], b [d]; when `linear` is not empty, an MLP without biases
// (Llama's mlp_bias false, Mistral, Qwen2, Gemma) or d_ff below 2·d (ungated) or d (gated); a source config.json that
// is missing or describes another model; an unusable `out_dir` (empty, "/", ".", "..", an existing non-directory); any
// read, write, fsync or rename failure. Nothing is written before the model, the maps and the source config have been
// checked. Not thread safe with respect to `model`: reads its parameters (no gradients recorded), so nothing else may
// modify it meanwhile.
void export_hf_directory(LanguageModel& model, const std::map<std::int64_t, AffineMap>& linear,
                         const std::string& source_dir, const std::string& out_dir, const ExportOptions& options = {});

// export_hf_directory of a model given as `config` and its parameters by HF name, in module
// order: a model split over ranks, whose stages' parameters were gathered on one rank.
void export_hf_parameters(const ModelConfig& config, const std::vector<std::pair<std::string, at::Tensor>>& parameters,
                          const std::map<std::int64_t, AffineMap>& linear, const std::string& source_dir,
                          const std::string& out_dir, const ExportOptions& options = {});

}  // namespace linsweep
