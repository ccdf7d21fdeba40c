// Parameter groups by name.
#include "engine/train/parameter_groups.hpp"

#include <regex>

namespace linsweep {

std::string parameter_group(const ParameterRoles& roles, const std::string& n) {
  auto has_any = [&](const std::vector<std::string>& fragments) {
    for (const auto& f : fragments)
      if (n.find(f) != std::string::npos) return true;
    return false;
  };
  auto is_any = [&](const std::vector<std::string>& names) {
    for (const auto& f : names)
      if (n == f) return true;
    return false;
  };
  if (has_any(roles.attention)) return "attention";
  if (has_any(roles.mlp)) return "mlp";
  if (has_any(roles.norm)) return "layernorm";
  if (is_any(roles.head)) return "head";
  return "embeddings";
}

std::int64_t parameter_layer(const std::string& n) {
  static const std::regex layer(R"((?:^|\.)(?:h|layers)\.(\d+)\.)");
  std::smatch m;
  return std::regex_search(n, m, layer) ? std::stoll(m[1].str()) : -1;
}

}  // namespace linsweep
