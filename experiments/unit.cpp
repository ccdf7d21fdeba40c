// Unit labels, provenance and token counts.
#include "experiments/unit.hpp"

namespace linsweep {

std::int64_t Unit::tokens() const {
  if (!params.is_object()) return 0;
  if (params.contains("split") && params["split"].contains("tokens"))
    return params["split"]["tokens"].get<std::int64_t>();
  std::int64_t sum = 0;  // capture units read several splits
  if (params.contains("splits"))
    for (const auto& [name, split] : params["splits"].items()) sum += split.value("tokens", std::int64_t{0});
  return sum;
}

std::string Unit::label() const {
  // The slot without its kind: "tiny-gpt2/stream-a", or ".../layer3" for per-layer units.
  return kind + " " + (slot.size() > kind.size() + 1 ? slot.substr(kind.size() + 1) : model + "/" + corpus);
}

std::string Unit::provenance() const {
  return nlohmann::json({{"slot", slot}, {"params", params}, {"inputs", inputs}, {"deps", deps}}).dump();
}

}  // namespace linsweep
