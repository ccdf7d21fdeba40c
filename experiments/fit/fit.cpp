// `fit`: affine surrogates f(x) = x·W + b of each layer's MLP by ridge regression on its own
// inputs and outputs (docs/methods.md, "Surrogate"). A `stats` unit per model and corpus sums
// the normal equations over the fit split (stats.cpp); a `fit` unit solves the λ grid from them
// with one eigendecomposition of XcᵀXc per layer. The "fit" provider gives every experiment
// that replaces MLPs the fit of its model and corpus.
#include <algorithm>

#include "common/errors.hpp"
#include "experiments/fit/fit_units.hpp"
#include "experiments/framework/experiment.hpp"
#include "experiments/framework/unit_data.hpp"
#include "experiments/numerics/ridge.hpp"
#include "storage/surrogate_store.hpp"
#include "storage/table_def.hpp"

namespace linsweep {
namespace {

struct FitParams {
  std::vector<double> lambda{0.01};
};

const ParamSchema<FitParams>& fit_schema() {
  static const ParamSchema<FitParams> s = ParamSchema<FitParams>().add(
      "lambda", &FitParams::lambda, non_empty(distinct(positive())),
      "ridge penalties λ of the surrogate fit; the first is the one every experiment uses");
  return s;
}

// The spec's fit parameters, or the defaults when the spec does not list `fit`.
FitParams fit_params(const Sweep& sweep) {
  const nlohmann::json* j = sweep.requested("fit");
  return j == nullptr ? FitParams{} : fit_schema().from_json(*j);
}

struct FitRow {
  std::string model;
  std::int64_t layer = 0;
  std::string corpus;
  double lambda = 0;
  std::int64_t tokens = 0;
  double r2 = 0, rel_mse = 0, cond = 0;
};

const TableDef<FitRow>& fits_table() {
  static const TableDef<FitRow> t =
      TableDef<FitRow>("fits", "one row per model, corpus, layer and λ: how well the surrogate reproduces the MLP")
          .key("model", &FitRow::model)
          .key("layer", &FitRow::layer)
          .key("corpus", &FitRow::corpus, "the corpus whose fit split the surrogate was fitted on")
          .key("lambda", &FitRow::lambda, "ridge penalty")
          .column("tokens", &FitRow::tokens, "positions the normal equations summed")
          .column("r2", &FitRow::r2, "R² of the surrogate's output on the fit split")
          .column("rel_mse", &FitRow::rel_mse, "residual sum of squares over Σ‖y‖²")
          .column("cond", &FitRow::cond, "(s_max + λ)/(s_min + λ) of XcᵀXc");
  return t;
}
const TableRegistrar kFitsTable{fits_table().schema()};

// The stats and fit units of (model, corpus) over `layers`; `suffix` "" for the sweep's own,
// "/training" for a fit that only training units read (it reports no rows).
std::string add_fit(PlanBuilder& b, const ModelSpec& m, const std::string& corpus, std::vector<std::int64_t> layers,
                    const std::string& suffix) {
  StatsUnitParams sp{b.basics(corpus, "fit"), layers};
  const std::string stats_id =
      b.add_with_inputs(Unit{.kind = "stats", .model = m.name, .corpus = corpus, .params = sp}, suffix);
  FitUnitParams fp{fit_params(b.sweep()).lambda, std::move(layers), suffix.empty()};
  Unit fit{.kind = "fit", .model = m.name, .corpus = corpus, .params = fp, .deps = {stats_id}};
  return b.add(std::move(fit), suffix);
}

// The "fit" provider. A null request: the sweep's fit of (model, corpus), over covered_layers.
// {"training": true}: that fit when it covers every layer the training experiments linearize
// in the model (PlanNeeds::training_layers), else one of their own, so that adding a training
// experiment never changes a measurement unit's id.
std::string provide_fit(PlanBuilder& b, const ModelSpec& m, const std::string& corpus, const nlohmann::json& request) {
  const auto covered = b.covered_layers(m);
  if (request.is_null()) return add_fit(b, m, corpus, covered, "");
  std::vector<std::int64_t> wanted;
  if (auto it = b.needs().training_layers.find(m.name); it != b.needs().training_layers.end())
    wanted.assign(it->second.begin(), it->second.end());
  bool inside = true;
  for (std::int64_t l : wanted) inside = inside && std::find(covered.begin(), covered.end(), l) != covered.end();
  if (inside) return b.provide("fit", m, corpus);
  return add_fit(b, m, corpus, std::move(wanted), "/training");
}
const ProviderRegistrar kFitProvider{"fit", provide_fit};

void expand_fit(const FitParams&, PlanBuilder& b) {
  for (const auto& m : b.sweep().models)
    for (const auto& c : b.sweep().corpora) b.provide("fit", m, c.name);
}

const ExperimentRegistrar kFit{make_experiment<FitParams>(
    "fit", "ridge surrogates of every covered layer's MLP, one per λ", 10, fit_schema(), expand_fit)};

// Solves every λ of one layer from its statistics; appends the fits and their rows.
void solve_layer(StoredSurrogate& s, const std::vector<double>& lambdas, const FitRow& key, std::vector<FitRow>* rows) {
  for (RidgeFit& f : solve_ridge(s.stats, lambdas)) {
    FitRow row = key;
    row.lambda = f.fit.lambda;
    row.tokens = s.stats.n;
    row.r2 = f.r2;
    row.rel_mse = f.rel_mse;
    row.cond = f.cond;
    rows->push_back(row);
    s.fits.push_back(std::move(f.fit));
  }
}

UnitResult run_fit(const ExperimentInput& in) {
  if (in.deps.size() != 1) throw InputError(in.unit_id + ": a fit needs exactly its stats unit");
  const auto p = in.params.get<FitUnitParams>();
  UnitResult out = unit_result(in);
  std::vector<FitRow> rows;
  for (std::int64_t layer : p.layers) {
    const std::string key = surrogate_key(in.model_name, in.corpus_name, layer);
    StoredSurrogate s = get_surrogate(in.deps[0], key);
    solve_layer(s, p.lambda, FitRow{.model = in.model_name, .layer = layer, .corpus = in.corpus_name}, &rows);
    put_surrogate(out, key, s);
  }
  // A fit that only serves training units (layers outside the sweep's) keeps its surrogates
  // but reports no rows: the sweep's own fit already reports the layers both cover.
  if (p.report) out.tables.push_back(fits_table().table(rows));
  return out;
}

// Every layer's normal equations as read, and one layer's solve (factor, surrogate, residual
// sums: three d × d in float64). No model.
MemoryNeed fit_memory(const MemoryQuery& q) {
  const auto layers = static_cast<double>(q.params.at("layers").size());
  const auto d = static_cast<double>(q.model.d_model);
  return MemoryNeed{.statistics = layers * normal_equation_bytes(q.model) + 24 * d * d};
}

const UnitKindRegistrar kFitKind{"fit", run_fit, /*needs_model=*/false, fit_memory, /*runs_split=*/true};

}  // namespace

double first_lambda(const Sweep& sweep) { return fit_params(sweep).lambda.front(); }

}  // namespace linsweep
