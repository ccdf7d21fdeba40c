// The experts experiment's table.
#include "experiments/experts/experts_unit.hpp"

namespace linsweep {

const TableDef<ExpertRow>& experts_table() {
  static const TableDef<ExpertRow> t =
      TableDef<ExpertRow>("experts",
                          "one row per model, corpus, sparse layer and expert: the expert alone replaced by its "
                          "surrogate, and how the router uses it")
          .key("model", &ExpertRow::model)
          .key("layer", &ExpertRow::layer)
          .key("corpus", &ExpertRow::corpus)
          .key("expert", &ExpertRow::expert, "the expert's index in its layer, 0..experts−1")
          .column("share", &ExpertRow::share,
                  "fraction of the eval split's (position, slot) choices routed to the expert (uniform: 1/experts)")
          .column("mean_weight", &ExpertRow::mean_weight, "the router's mean mixing weight of the expert where chosen")
          .column("fit_rows", &ExpertRow::fit_rows, "fit-split positions routed to the expert: its surrogate's rows")
          .column("r2", &ExpertRow::r2, "R² of the expert's surrogate on its fit rows (its output before the weight)")
          .column("rel_mse", &ExpertRow::rel_mse, "residual sum of squares over Σ‖y‖² on those rows")
          .column("ppl_base", &ExpertRow::ppl_base, "perplexity of the untouched model on the eval split")
          .column("ppl_expert", &ExpertRow::ppl_expert, "perplexity with this expert alone replaced by its surrogate")
          .column("delta_pct", &ExpertRow::delta_pct, "100·(ppl_expert/ppl_base − 1)")
          .column("ci_low", &ExpertRow::ci_low, "2.5% quantile of delta_pct, paired bootstrap over eval windows")
          .column("ci_high", &ExpertRow::ci_high, "97.5% quantile of delta_pct")
          .column("tokens", &ExpertRow::tokens, "scored positions of the eval split")
          .column("router_entropy", &ExpertRow::router_entropy,
                  "the layer's mean entropy (nats) of the router's softmax over all experts (at most ln experts)")
          .column("topk_entropy", &ExpertRow::topk_entropy,
                  "the layer's mean entropy (nats) of the top_k mixing weights, renormalised (at most ln top_k)")
          .column("experts", &ExpertRow::experts, "the layer's experts E")
          .column("top_k", &ExpertRow::top_k, "experts chosen per position k")
          .column("family", &ExpertRow::family, "the model's architecture (HF model_type)")
          .column("flag", &ExpertRow::flag, "why the row is no (or a weak) measurement; empty when it is one");
  return t;
}

}  // namespace linsweep
