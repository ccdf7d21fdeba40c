// Architecture lookup by name.
#include "workers/model/architecture_registry.hpp"

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

std::vector<std::string> ArchitectureRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& a : archs_) out.push_back(a.name);
  return out;
}

}  // namespace linsweep
