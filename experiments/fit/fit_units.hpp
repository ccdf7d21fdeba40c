// The parameters of `stats` and `fit` units, which every experiment that replaces MLPs reads
// through the "fit" provider (fit.cpp).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/framework/sweep.hpp"
#include "experiments/framework/unit_params.hpp"

namespace linsweep {

// stats: the normal equations of `layers` over `split`.
struct StatsUnitParams {
  UnitBasics basics;  // split, context, format
  std::vector<std::int64_t> layers;
};
LINSWEEP_UNIT_PARAMS(StatsUnitParams, layers)

// fit: the λ grid of `layers`; `report` false for a fit that only training units read.
struct FitUnitParams {
  std::vector<double> lambda;
  std::vector<std::int64_t> layers;
  bool report = true;
};
inline void to_json(nlohmann::json& j, const FitUnitParams& p) {
  j = {{"lambda", p.lambda}, {"layers", p.layers}};
  if (!p.report) j["report"] = false;
}
inline void from_json(const nlohmann::json& j, FitUnitParams& p) {
  j.at("lambda").get_to(p.lambda);
  j.at("layers").get_to(p.layers);
  p.report = j.value("report", true);
}

// The λ every experiment uses: the first of the spec's `fit.lambda` (or the default).
double first_lambda(const Sweep& sweep);

}  // namespace linsweep
