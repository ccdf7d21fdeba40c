// The experts experiment's unit and table, shared by its plan, its computation and its report
// section (docs/methods.md, "Experts").
#pragma once

#include <cstdint>
#include <string>

#include "experiments/framework/unit_params.hpp"
#include "storage/table_def.hpp"

namespace linsweep {

// One sparse layer of one model on one corpus: its experts fitted on `fit`, substituted on
// basics.split (the eval split) one at a time.
struct ExpertsUnitParams {
  UnitBasics basics;  // eval split, context, λ, format
  Split fit;          // the split the experts' surrogates are fitted on
  std::int64_t layer = 0;
  std::int64_t experts = 0;  // the layer's E, from the model's config (checked against the loaded model)
  std::int64_t bootstrap = 0;
  std::int64_t seed = 0;
};
LINSWEEP_UNIT_PARAMS(ExpertsUnitParams, fit, layer, experts, bootstrap, seed)

struct ExpertRow {
  std::string model;
  std::int64_t layer = 0;
  std::string corpus;
  std::int64_t expert = 0;
  double share = 0, mean_weight = 0;
  std::int64_t fit_rows = 0;
  double r2 = 0, rel_mse = 0;
  double ppl_base = 0, ppl_expert = 0, delta_pct = 0, ci_low = 0, ci_high = 0;
  std::int64_t tokens = 0;
  double router_entropy = 0, topk_entropy = 0;
  std::int64_t experts = 0, top_k = 0;
  std::string family;
  std::string flag;
};

// One row per model, corpus, sparse layer and expert.
const TableDef<ExpertRow>& experts_table();

}  // namespace linsweep
