// Experiments whose `layers` parameter selects among a model's layers.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/framework/params.hpp"
#include "experiments/framework/plan_builder.hpp"
#include "experiments/framework/sweep.hpp"

namespace linsweep {

// The layers of model `m` that a `layers` parameter selects: `all` means the sweep's layers.
std::vector<std::int64_t> experiment_layers(const nlohmann::json& layers, const Sweep& sweep, const ModelSpec& m);

// "0-2,5": ascending layers as ranges. The `layer_set` column of the compound and speed
// tables, on which the two join.
std::string layer_set(const std::vector<std::int64_t>& layers);

// A problem for every layer of the parameter outside one of the sweep's models.
void check_layers_exist(const nlohmann::json& layers, const std::string& key, const Sweep& sweep,
                        std::vector<ParamProblem>& problems);

// A validate callback for an experiment whose parameter struct has a `layers` member.
template <typename P, nlohmann::json P::*Member>
std::function<void(const P&, const Sweep&, std::vector<ParamProblem>&)> validate_layer_param(const char* key) {
  return [key](const P& p, const Sweep& sweep, std::vector<ParamProblem>& problems) {
    check_layers_exist(p.*Member, key, sweep, problems);
  };
}

// The needs of an experiment that reads the captured activations of the layers `layers`
// selects: a capture, and those layers measured.
void need_captured_layers(const nlohmann::json& layers, const Sweep& sweep, PlanNeeds& n);

// A needs callback for an experiment whose parameter struct's `layers` member selects the
// captured layers it reads.
template <typename P, nlohmann::json P::*Member>
std::function<void(const P&, const Sweep&, PlanNeeds&)> captured_layer_needs() {
  return [](const P& p, const Sweep& sweep, PlanNeeds& n) { need_captured_layers(p.*Member, sweep, n); };
}

// What an experiment reading captured activations adds for one model and corpus: `capture`
// is the id of their capture unit, `layers` those of the model that the parameter selects
// (never empty).
using CapturedUnits = std::function<void(const ModelSpec& m, const std::string& corpus, const std::string& capture,
                                         const std::vector<std::int64_t>& layers)>;

// Calls `add` for every model and corpus of the sweep, in order, where `layers` selects a layer
// of the model; the capture unit is provided first.
void for_each_capture(PlanBuilder& b, const nlohmann::json& layers, const CapturedUnits& add);

// One unit of `kind` per model, corpus and selected layer, reading that capture: its params are
// `params(layer)`, its slot suffix "/layer<l>". For experiments that work on one layer's
// captured rows at a time (token_context, clusters).
void add_per_captured_layer(PlanBuilder& b, const nlohmann::json& layers, const std::string& kind,
                            const std::function<nlohmann::json(std::int64_t layer)>& params);

}  // namespace linsweep
