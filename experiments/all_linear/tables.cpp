// The all-linear experiment's table.
#include "experiments/all_linear/all_linear_unit.hpp"

namespace linsweep {

const TableDef<AllLinearRow>& all_linear_table() {
  static const TableDef<AllLinearRow> t =
      TableDef<AllLinearRow>("all_linear", "one row per model, corpus and layer: the layer's MLP replaced everywhere")
          .key("model", &AllLinearRow::model)
          .key("layer", &AllLinearRow::layer)
          .key("corpus", &AllLinearRow::corpus)
          .column("ppl_base", &AllLinearRow::ppl_base, "perplexity of the untouched model on the eval split")
          .column("ppl_linear", &AllLinearRow::ppl_linear, "perplexity with the layer's surrogate")
          .column("delta_pct", &AllLinearRow::delta_pct, "100·(ppl_linear/ppl_base − 1)")
          .column("ci_low", &AllLinearRow::ci_low, "2.5% bootstrap quantile of delta_pct")
          .column("ci_high", &AllLinearRow::ci_high, "97.5% bootstrap quantile of delta_pct")
          .column("tokens", &AllLinearRow::tokens, "scored positions")
          .added("family", &AllLinearRow::family, "the model's architecture (HF model_type)")
          .added("params", &AllLinearRow::params, "the model's parameter count (for the cross-scale table and figure)")
          .added("select_delta_pct", &AllLinearRow::select_delta_pct,
                 "the same Δ% on the select split (NaN without one): what progressive's order is chosen by");
  return t;
}

}  // namespace linsweep
