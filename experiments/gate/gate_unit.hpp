// The gate experiment's unit: its parameters, and the two tables it writes (shared by its plan,
// its computation and its report section; docs/methods.md, "Gates").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/framework/unit_params.hpp"
#include "storage/table_def.hpp"

namespace linsweep {

struct GateUnitParams {
  std::vector<std::string> variants;
  std::int64_t seed = 0;
  double holdout = 0;
  std::string holdout_by;
  std::string select_by;
  std::int64_t bootstrap = 0;
  std::int64_t mlp_epochs = 0;
  std::int64_t curve_steps = 0;
  std::int64_t random_draws = 1;
  UnitBasics basics;  // eval split, context, λ, format
  Split select_split;
  std::int64_t layer = 0;
};
LINSWEEP_UNIT_PARAMS(GateUnitParams, variants, seed, holdout, holdout_by, select_by, bootstrap, mlp_epochs, curve_steps,
                     random_draws, select_split, layer)

struct GateRow {
  std::string model;
  std::int64_t layer = 0;
  std::string corpus, gate;
  std::int64_t params = 0;
  double auc = 0, pct_linear = 0, ppl = 0, delta_pct = 0, ci_low = 0, ci_high = 0;
  std::int64_t selected = 0;
  double select_auc = 0, eval_auc = 0, threshold = 0, ppl_base = 0;
  double select_delta_pct = 0;
  std::int64_t auc_pick = 0;
  double random_delta_pct = 0, random_ci_low = 0, random_ci_high = 0;
  double auc_ci_low = 0, auc_ci_high = 0;
  std::string flag;
  std::int64_t random_draws = 0;
  double random_mean_delta_pct = 0, random_sd_pct = 0;
  double vs_random_pct = 0, vs_random_ci_low = 0, vs_random_ci_high = 0, beats_random = 0;
};

// One row per model, corpus, layer and variant, reported on the eval split.
const TableDef<GateRow>& gates_table();

struct GateCurveRow {
  std::string model;
  std::int64_t layer = 0;
  std::string corpus;
  std::int64_t step = 0;
  std::string gate;
  double p_threshold = 0, pct_linear = 0, ppl = 0, delta_pct = 0, ci_low = 0, ci_high = 0;
};

// The chosen gate's threshold curve on the eval split.
const TableDef<GateCurveRow>& gate_curve_table();

}  // namespace linsweep
