// Experiments whose `layers` parameter selects among a model's layers.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/params.hpp"
#include "experiments/sweep.hpp"

namespace linsweep {

// The layers of model `m` that a `layers` parameter selects: `all` means the sweep's layers.
std::vector<std::int64_t> experiment_layers(const nlohmann::json& layers, const Sweep& sweep, const ModelSpec& m);

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

}  // namespace linsweep
