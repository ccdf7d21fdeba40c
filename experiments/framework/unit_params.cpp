// The shared unit parameters as JSON: only the fields a kind sets.
#include "experiments/framework/unit_params.hpp"

namespace linsweep {

void put_basics(nlohmann::json& j, const UnitBasics& b) {
  if (b.split.tokens > 0) j["split"] = b.split;
  if (b.context > 0) j["context"] = b.context;
  if (b.lambda > 0) j["lambda"] = b.lambda;
  if (!b.format.empty()) j["format"] = b.format;
}

UnitBasics get_basics(const nlohmann::json& j) {
  UnitBasics b;
  if (j.contains("split")) j.at("split").get_to(b.split);
  if (j.contains("context")) j.at("context").get_to(b.context);
  if (j.contains("lambda")) j.at("lambda").get_to(b.lambda);
  if (j.contains("format")) j.at("format").get_to(b.format);
  return b;
}

}  // namespace linsweep
