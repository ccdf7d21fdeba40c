// The chosen gates and surrogates of a committed compound unit.
#include "experiments/compound/compound_routing.hpp"

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "experiments/framework/unit_data.hpp"

namespace linsweep {

CompoundRouting compound_routing(const CompoundUnits& units, const std::string& model, const std::string& corpus) {
  const nlohmann::json provenance = nlohmann::json::parse(units.compound.params, nullptr, false);
  if (units.compound.kind != "compound" || !provenance.is_object() || !provenance.contains("params"))
    throw InputError("unit " + units.compound.unit_id + ": not a compound unit with readable parameters");
  const nlohmann::json& params = provenance["params"];
  CompoundRouting out;
  out.layers = params.at("layers").get<std::vector<std::int64_t>>();
  if (out.layers.size() != units.gates.size())
    throw InputError("unit " + units.compound.unit_id + ": " + std::to_string(out.layers.size()) + " layers but " +
                     std::to_string(units.gates.size()) + " gate units");
  const double lambda = params.at("lambda").get<double>();
  for (std::size_t k = 0; k < out.layers.size(); ++k) {
    out.gates.push_back(Gate::load(units.gates[k], gate_key(model, corpus, out.layers[k]) + "/chosen"));
    out.maps.push_back(surrogate_map(units.fit, model, corpus, out.layers[k], lambda, units.fit.unit_id));
  }
  out.model_fingerprint = provenance.value("inputs", nlohmann::json::object()).value("model", "");
  return out;
}

}  // namespace linsweep
