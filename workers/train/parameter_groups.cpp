// Parameter groups by name.
#include "workers/train/parameter_groups.hpp"

#include <regex>

namespace linsweep {

std::string parameter_group(const std::string& n) {
  auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
  if (has(".attn.") || has(".attention.")) return "attention";
  if (has(".mlp.")) return "mlp";
  if (has("ln_") || has("layernorm") || has("layer_norm")) return "layernorm";
  // GPT-2's tied head is wte (also its input embedding); an untied GPT-2 has lm_head.
  if (n == "wte.weight" || n == "lm_head.weight" || has("embed_out")) return "head";
  return "embeddings";  // wpe, embed_in
}

std::int64_t parameter_layer(const std::string& n) {
  static const std::regex layer(R"((?:^|\.)(?:h|layers)\.(\d+)\.)");
  std::smatch m;
  return std::regex_search(n, m, layer) ? std::stoll(m[1].str()) : -1;
}

}  // namespace linsweep
