// Layer parameters of experiments.
#include "experiments/framework/layer_params.hpp"

namespace linsweep {

std::vector<std::int64_t> experiment_layers(const nlohmann::json& layers, const Sweep& sweep, const ModelSpec& m) {
  const LayerSelection sel = LayerSelection::from_json(layers);
  return sel.all ? sweep.layers.resolve(m.layers) : sel.resolve(m.layers);
}

void check_layers_exist(const nlohmann::json& layers, const std::string& key, const Sweep& sweep,
                        std::vector<ParamProblem>& problems) {
  const LayerSelection sel = LayerSelection::from_json(layers);
  for (const auto& m : sweep.models)
    for (const auto& [a, b] : sel.ranges)
      if (b >= m.layers) {
        problems.push_back({key, "layer " + std::to_string(b) + " is outside model '" + m.name + "'"});
        return;
      }
}

void need_captured_layers(const nlohmann::json& layers, const Sweep& sweep, PlanNeeds& n) {
  n.capture = true;
  for (const auto& m : sweep.models)
    for (std::int64_t l : experiment_layers(layers, sweep, m)) n.measured_layers[m.name].insert(l);
}

void for_each_capture(PlanBuilder& b, const nlohmann::json& layers, const CapturedUnits& add) {
  for (const auto& m : b.sweep().models)
    for (const auto& c : b.sweep().corpora) {
      const std::vector<std::int64_t> selected = experiment_layers(layers, b.sweep(), m);
      if (selected.empty()) continue;
      add(m, c.name, b.provide("capture", m, c.name), selected);
    }
}

void add_per_captured_layer(PlanBuilder& b, const nlohmann::json& layers, const std::string& kind,
                            const std::function<nlohmann::json(std::int64_t layer)>& params) {
  for_each_capture(
      b, layers,
      [&](const ModelSpec& m, const std::string& corpus, const std::string& capture,
          const std::vector<std::int64_t>& selected) {
        for (std::int64_t layer : selected)
          b.add_with_inputs(
              Unit{.kind = kind, .model = m.name, .corpus = corpus, .params = params(layer), .deps = {capture}},
              "/layer" + std::to_string(layer));
      });
}

std::string layer_set(const std::vector<std::int64_t>& layers) {
  std::string out;
  for (std::size_t i = 0; i < layers.size();) {
    std::size_t j = i;
    while (j + 1 < layers.size() && layers[j + 1] == layers[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(layers[i]);
    if (j > i) out += "-" + std::to_string(layers[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace linsweep
