// Architecture lookup by name.
#include "engine/model/architecture_registry.hpp"

#include <algorithm>

#include "common/errors.hpp"

namespace linsweep {

ArchitectureRegistry& ArchitectureRegistry::instance() {
  static ArchitectureRegistry registry;
  return registry;
}

void ArchitectureRegistry::add(Architecture a) { archs_.push_back(std::move(a)); }

const Architecture& ArchitectureRegistry::get(const std::string& name, const std::string& where) const {
  for (const auto& a : archs_)
    if (a.name == name) return a;
  std::string known;
  for (const auto& n : names()) known += (known.empty() ? "" : ", ") + n;
  throw ModelError(where + ": unsupported architecture '" + name + "' (known: " + known + ")");
}

void ArchitectureRegistry::add_body(std::string name, BuildModel build) {
  bodies_.emplace_back(std::move(name), std::move(build));
}

std::shared_ptr<LanguageModel> ArchitectureRegistry::build(const ModelConfig& config, const std::string& where) const {
  const Architecture& a = get(config.architecture, where);
  for (const auto& [name, build] : bodies_)
    if (name == a.body) return build(config);
  throw ModelError(where + ": architecture '" + a.name + "' needs the model body '" + a.body +
                   "', which this program does not include");
}

std::vector<std::string> ArchitectureRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& a : archs_) out.push_back(a.name);
  std::sort(out.begin(), out.end());  // registration order depends on static initialisation
  return out;
}

}  // namespace linsweep
