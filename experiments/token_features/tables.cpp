// The token-features experiment's tables.
#include "experiments/token_features/token_features_unit.hpp"

namespace linsweep {

const TableDef<TokenClassRow>& token_classes_table() {
  static const TableDef<TokenClassRow> t =
      TableDef<TokenClassRow>("token_classes",
                              "one row per model, corpus, layer and token category: δ on the gate split")
          .key("model", &TokenClassRow::model)
          .key("corpus", &TokenClassRow::corpus)
          .key("layer", &TokenClassRow::layer)
          .key("scheme", &TokenClassRow::scheme, "class (of the token's text) or pos (Brown corpora: the word's tag)")
          .key("category", &TokenClassRow::category, "the class or part of speech")
          .column("count", &TokenClassRow::count, "scored positions of the category")
          .column("mean_delta", &TokenClassRow::mean_delta, "mean δ (nats)")
          .column("sd_delta", &TokenClassRow::sd_delta, "standard deviation of δ (population, nats)")
          .added("key", &TokenClassRow::key, kKeyDoc);
  return t;
}
const TableDef<TokenRegressionRow>& token_regression_table() {
  static const TableDef<TokenRegressionRow> t =
      TableDef<TokenRegressionRow>("token_regression",
                                   "one row per model, corpus, layer and feature (or `all`): δ regressed on it")
          .key("model", &TokenRegressionRow::model)
          .key("corpus", &TokenRegressionRow::corpus)
          .key("layer", &TokenRegressionRow::layer)
          .key("feature", &TokenRegressionRow::feature, "a per-token feature, a categorical one, or all of them")
          .column("r2", &TokenRegressionRow::r2, "R² of least squares with an intercept, in sample")
          .column("r2_holdout", &TokenRegressionRow::r2_holdout,
                  "R² on held-out windows (window mod 10 ≥ 7) of a fit on the others")
          .column("pearson_r", &TokenRegressionRow::pearson_r,
                  "Pearson r with δ (NaN for categorical features and all)")
          .column("predictors", &TokenRegressionRow::predictors, "regression columns besides the intercept")
          .column("samples", &TokenRegressionRow::samples, "scored positions")
          .added("key", &TokenRegressionRow::key, kKeyDoc)
          .added("pearson_ci_low", &TokenRegressionRow::pearson_ci_low,
                 "95% bootstrap interval of pearson_r, windows resampled (n = samples)")
          .added("pearson_ci_high", &TokenRegressionRow::pearson_ci_high, "its upper end")
          .added("flag", &TokenRegressionRow::flag,
                 "why pearson_r is not a measurement: undefined, or over fewer than 10 positions (\"\": it is)");
  return t;
}
}  // namespace linsweep
