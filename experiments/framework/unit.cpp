// Unit labels, provenance and token counts.
#include "experiments/framework/unit.hpp"

#include "common/sha256.hpp"
#include "storage/table.hpp"

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
  nlohmann::json j = {{"slot", slot}, {"params", params}, {"inputs", inputs}, {"deps", deps}};
  if (setting.is_object() && !setting.empty()) j["setting"] = setting;
  return j.dump();
}

std::string unit_content_id(const Unit& u) {
  // The slot names the model and corpus, which the unit's rows and surrogate keys carry: two
  // corpora with the same contents (or two names for one model) are still different units.
  const nlohmann::json key = {{"kind", u.kind},     {"slot", u.slot}, {"params", u.params},
                              {"inputs", u.inputs}, {"deps", u.deps}, {"schema", kStoreSchemaVersion}};
  return u.kind + "-" + sha256_hex(key.dump()).substr(0, 24);
}

}  // namespace linsweep
