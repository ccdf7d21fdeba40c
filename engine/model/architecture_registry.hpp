// Registry of model architectures: each architecture file registers itself by HF model_type.
// An architecture is two halves: its facts (config.json fields, tensor roles, sizes), which need
// no torch and register with ArchitectureRegistrar, and the torch module family ("body") that
// computes it, which registers with ModelBodyRegistrar. Several architectures share a body
// (llama, mistral, qwen2 and gemma are all the pre-norm "decoder").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "engine/model/model_config.hpp"

namespace linsweep {

class LanguageModel;

// Which parameters play which part, by fragments of their HF names: parameter groups (fine-tune
// learning rates), pretraining's scaled initialisation and `inspect` ask these, never the name
// of an architecture.
struct ParameterRoles {
  std::vector<std::string> attention;     // substrings of attention parameters (".attn.")
  std::vector<std::string> mlp;           // substrings of MLP parameters (".mlp.")
  std::vector<std::string> norm;          // substrings of norm parameters ("ln_", "layernorm")
  std::vector<std::string> head;          // exact names of the output matrix, own or tied
  std::vector<std::string> position;      // exact names of learned position embeddings
  std::vector<std::string> residual_out;  // suffixes of the projections that add into the residual stream
};

// Where layer L's MLP lies in the checkpoint: "<layer_prefix>L<up>.weight" and so on (export
// writes an affine map into these tensors).
struct MlpLayout {
  std::string layer_prefix;  // "h.", "gpt_neox.layers.", "model.layers."
  std::string up, down;      // ".mlp.c_fc", ".mlp.c_proj"
  std::string gate;          // ".mlp.gate_proj"; empty for an ungated MLP
  bool in_out = false;       // weights stored [in, out] (GPT-2's Conv1D); otherwise nn.Linear's [out, in]
};

struct Architecture {
  std::string name;  // HF `model_type`
  std::string body;  // the torch module family that builds it (a ModelBodyRegistrar's name)
  // Parses a config.json document (path for messages) into a ModelConfig: the fields of this
  // architecture; read_model_config sets `architecture` and eos_token_id.
  std::function<ModelConfig(const nlohmann::json&, const std::string& path)> parse_config;
  // Checkpoint key prefixes tried before a parameter's own name ("transformer." for GPT-2).
  std::vector<std::string> checkpoint_prefixes;
  // Checkpoint tensors that are not parameters and are ignored (suffix match).
  std::vector<std::string> ignored_suffixes;
  // Exact parameter count of the module `build` makes, computed without allocating, so that
  // a config.json that disagrees with its weights is refused before a huge allocation.
  std::function<std::int64_t(const ModelConfig&)> count_parameters;
  // The config.json document that parse_config reads back as the same ModelConfig (for
  // models this program creates, such as the demo's pretrained ones); model_config_json adds
  // the token ids.
  std::function<nlohmann::json(const ModelConfig&)> write_config;
  ParameterRoles roles;
  MlpLayout mlp;
  // The fields of a config built in code (model_config()) before its sizes are set: the
  // architecture's norm, activation, MLP form, biases and so on.
  ModelConfig defaults;
};

// Builds an untrained module of a body with HF parameter names, on CPU in float32.
using BuildModel = std::function<std::shared_ptr<LanguageModel>(const ModelConfig&)>;

// Process-wide list of architectures, filled by static registrars before main() and only
// read afterwards (so lookups are thread safe).
class ArchitectureRegistry {
 public:
  static ArchitectureRegistry& instance();
  void add(Architecture a);
  // Throws ModelError("<where>: unsupported architecture 'x' (known: a, b)") when unknown.
  const Architecture& get(const std::string& name, const std::string& where) const;
  std::vector<std::string> names() const;  // sorted
  void add_body(std::string name, BuildModel build);
  // The module of `config`'s architecture, built by its body. Throws ModelError for an unknown
  // architecture or a body that this program was linked without.
  std::shared_ptr<LanguageModel> build(const ModelConfig& config, const std::string& where) const;

 private:
  std::vector<Architecture> archs_;
  std::vector<std::pair<std::string, BuildModel>> bodies_;
};

// Registers an architecture at static-initialisation time: `static ArchitectureRegistrar r{...};`
struct ArchitectureRegistrar {
  explicit ArchitectureRegistrar(Architecture a) { ArchitectureRegistry::instance().add(std::move(a)); }
};

// Registers the body `name` built as a Model (a LanguageModel constructed from the ModelConfig):
// `static const ModelBodyRegistrar<Gpt2Model> r{"gpt2"};` beside the module.
template <typename Model>
struct ModelBodyRegistrar {
  explicit ModelBodyRegistrar(std::string name) {
    ArchitectureRegistry::instance().add_body(
        std::move(name),
        [](const ModelConfig& c) -> std::shared_ptr<LanguageModel> { return std::make_shared<Model>(c); });
  }
};

}  // namespace linsweep
