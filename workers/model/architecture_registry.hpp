// Registry of model architectures: each architecture file registers itself by HF model_type.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "workers/model/model_config.hpp"

namespace linsweep {

class LanguageModel;

struct Architecture {
  std::string name;  // HF `model_type`
  // Parses a config.json document (path for messages) into a ModelConfig: the fields of this
  // architecture; read_model_config sets `architecture` and eos_token_id.
  std::function<ModelConfig(const nlohmann::json&, const std::string& path)> parse_config;
  // Builds an untrained module with HF parameter names, on CPU in float32.
  std::function<std::shared_ptr<LanguageModel>(const ModelConfig&)> build;
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
};

// Process-wide list of architectures, filled by static registrars before main() and only
// read afterwards (so lookups are thread safe).
class ArchitectureRegistry {
 public:
  static ArchitectureRegistry& instance();
  void add(Architecture a);
  // Throws ModelError("<where>: unsupported architecture 'x' (known: a, b)") when unknown.
  const Architecture& get(const std::string& name, const std::string& where) const;
  std::vector<std::string> names() const;

 private:
  std::vector<Architecture> archs_;
};

// Registers an architecture at static-initialisation time: `static ArchitectureRegistrar r{...};`
struct ArchitectureRegistrar {
  explicit ArchitectureRegistrar(Architecture a) { ArchitectureRegistry::instance().add(std::move(a)); }
};

// `a` with `build` making a Model (a LanguageModel constructed from the ModelConfig): the
// config half of an architecture is torch-free (the fuzzers parse configs), the model half adds this.
template <typename Model>
Architecture built_as(Architecture a) {
  a.build = [](const ModelConfig& c) -> std::shared_ptr<LanguageModel> { return std::make_shared<Model>(c); };
  return a;
}

}  // namespace linsweep
