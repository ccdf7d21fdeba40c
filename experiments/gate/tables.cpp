// The gate experiment's tables.
#include "experiments/gate/gate_unit.hpp"

namespace linsweep {

const TableDef<GateRow>& gates_table() {
  static const TableDef<GateRow> t =
      TableDef<GateRow>("gates", "one row per model, corpus, layer and gate variant, reported on the eval split")
          .key("model", &GateRow::model)
          .key("layer", &GateRow::layer)
          .key("corpus", &GateRow::corpus)
          .key("gate", &GateRow::gate, "linear, pca:K or mlp:H")
          .column("params", &GateRow::params, "the gate's parameter count")
          .column("auc", &GateRow::auc, "AUC on the gate split's hold-out")
          .column("pct_linear", &GateRow::pct_linear, "% of scored positions routed to the surrogate")
          .column("ppl", &GateRow::ppl, "perplexity with hard routing")
          .column("delta_pct", &GateRow::delta_pct, "100·(ppl/ppl_base − 1)")
          .column("ci_low", &GateRow::ci_low, "2.5% bootstrap quantile of delta_pct (windows resampled)")
          .column("ci_high", &GateRow::ci_high, "97.5% bootstrap quantile of delta_pct")
          .added("selected", &GateRow::selected, "1 for the variant chosen on the select split")
          .added("select_auc", &GateRow::select_auc, "AUC on the select split")
          .added("eval_auc", &GateRow::eval_auc, "AUC on the eval split (reported, never used to choose)")
          .added("threshold", &GateRow::threshold, "the δ threshold of the labels")
          .added("ppl_base", &GateRow::ppl_base, "perplexity of the untouched model")
          .added("select_delta_pct", &GateRow::select_delta_pct, "hard-routed Δ% on the select split")
          .added("auc_pick", &GateRow::auc_pick, "1 for the variant with the best select-split AUC")
          .added("random_delta_pct", &GateRow::random_delta_pct,
                 "Δ% of random routing at the gate's share: in each eval window as many positions as the gate "
                 "routed, drawn uniformly")
          .added("random_ci_low", &GateRow::random_ci_low, "95% bootstrap interval of random_delta_pct")
          .added("random_ci_high", &GateRow::random_ci_high, "its upper end")
          .added("auc_ci_low", &GateRow::auc_ci_low, "95% bootstrap interval of `auc`, hold-out windows resampled")
          .added("auc_ci_high", &GateRow::auc_ci_high, "its upper end")
          .added("flag", &GateRow::flag,
                 "why the row is not a measurement: constant labels, an undefined AUC, routing none or all (\"\": "
                 "it is)")
          .added("random_draws", &GateRow::random_draws,
                 "random routings at the variant's share (the first is random_*)")
          .added("random_mean_delta_pct", &GateRow::random_mean_delta_pct, "mean Δ% over the draws")
          .added("random_sd_pct", &GateRow::random_sd_pct, "standard deviation of Δ% over the draws (NaN for one)")
          .added("vs_random_pct", &GateRow::vs_random_pct, "delta_pct − random_mean_delta_pct, on the same windows")
          .added("vs_random_ci_low", &GateRow::vs_random_ci_low,
                 "paired 95% bootstrap interval of vs_random_pct (windows resampled once for the gate and every draw)")
          .added("vs_random_ci_high", &GateRow::vs_random_ci_high, "its upper end")
          .added("beats_random", &GateRow::beats_random, "share of the draws whose Δ% is above the gate's");
  return t;
}

const TableDef<GateCurveRow>& gate_curve_table() {
  static const TableDef<GateCurveRow> t =
      TableDef<GateCurveRow>("gate_curve",
                             "the chosen gate's cost against its share on the eval split, its probability threshold "
                             "swept; p_threshold 0 routes every position (all-linear), 0.5 is the gate itself")
          .key("model", &GateCurveRow::model)
          .key("layer", &GateCurveRow::layer)
          .key("corpus", &GateCurveRow::corpus)
          .key("step", &GateCurveRow::step, "k of k/curve_steps")
          .column("gate", &GateCurveRow::gate, "the chosen variant")
          .column("p_threshold", &GateCurveRow::p_threshold,
                  "k/curve_steps: routed linear where p > it (0: everywhere)")
          .column("pct_linear", &GateCurveRow::pct_linear, "% of scored positions routed to the surrogate")
          .column("ppl", &GateCurveRow::ppl, "perplexity with hard routing")
          .column("delta_pct", &GateCurveRow::delta_pct, "100·(ppl/ppl_base − 1)")
          .column("ci_low", &GateCurveRow::ci_low)
          .column("ci_high", &GateCurveRow::ci_high);
  return t;
}

namespace {

const TableRegistrar kGatesTable{gates_table().schema()};
const TableRegistrar kGateCurveTable{gate_curve_table().schema()};

}  // namespace
}  // namespace linsweep
