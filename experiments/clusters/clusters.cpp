// `clusters`: is "linear is fine" a region of activation space? PCA of the gate split's X,
// k-means on the components (seeded k-means++), each cluster's label rate on the training rows
// as a score for held-out rows (cluster AUC), and the clusters whose training rows share one
// label ≥ 90% of the time (docs/methods.md, "Clusters").
#include <ATen/ATen.h>

#include <algorithm>
#include <tuple>

#include "common/errors.hpp"
#include "experiments/framework/capture_data.hpp"
#include "experiments/framework/experiment.hpp"
#include "experiments/framework/layer_params.hpp"
#include "experiments/framework/unit_data.hpp"
#include "experiments/numerics/classification.hpp"
#include "experiments/numerics/kmeans.hpp"
#include "experiments/numerics/pca.hpp"
#include "presentation/cells.hpp"
#include "presentation/section.hpp"
#include "storage/table_def.hpp"

namespace linsweep {
namespace {

struct ClustersParams {
  nlohmann::json layers = "all";
  std::int64_t pca = 50;
  std::int64_t k = 20;
  std::int64_t n_init = 10;
  std::int64_t seed = 0;
  double holdout = 0.3;
  std::string holdout_by = "window";
};

const ParamSchema<ClustersParams>& clusters_schema() {
  static const ParamSchema<ClustersParams> s =
      ParamSchema<ClustersParams>()
          .layers("layers", &ClustersParams::layers, "layers to cluster (`all`: the sweep's)")
          .add("pca", &ClustersParams::pca, at_least(1), "principal components kept before k-means")
          .add("k", &ClustersParams::k, at_least(1), "clusters")
          .add("n_init", &ClustersParams::n_init, at_least(1), "seeded k-means++ restarts; the lowest inertia wins")
          .add("seed", &ClustersParams::seed, at_least(0), "seed of the hold-out and of k-means (plus the layer)")
          .add("holdout", &ClustersParams::holdout, fraction(), "share of the gate split held out for the cluster AUC")
          .add("holdout_by", &ClustersParams::holdout_by, one_of({"window", "row"}),
               "hold-out drawn by window (all of a window's rows on one side) or by row (the paper's)");
  return s;
}

struct ClustersUnitParams {
  std::int64_t pca = 0, k = 0, n_init = 0, seed = 0;
  double holdout = 0;
  std::string holdout_by;
  std::int64_t layer = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ClustersUnitParams, pca, k, n_init, seed, holdout, holdout_by, layer)

struct ClustersRow {
  std::string model;
  std::int64_t layer = 0;
  double pca_var = 0, cluster_auc = 0;
  std::int64_t clean_clusters = 0;
  std::string corpus;
  std::int64_t k = 0;
  double inertia = 0;
  std::int64_t samples = 0;
};

const TableDef<ClustersRow>& clusters_table() {
  static const TableDef<ClustersRow> t =
      TableDef<ClustersRow>("clusters", "one row per model, corpus and layer")
          .key("model", &ClustersRow::model)
          .key("layer", &ClustersRow::layer)
          .column("pca_var", &ClustersRow::pca_var, "variance share of the kept components")
          .column("cluster_auc", &ClustersRow::cluster_auc, "AUC of each held-out row's cluster label rate")
          .column("clean_clusters", &ClustersRow::clean_clusters, "clusters whose training rows share one label ≥ 90%")
          .added_key("corpus", &ClustersRow::corpus)
          .added("k", &ClustersRow::k, "clusters of k-means")
          .added("inertia", &ClustersRow::inertia, "k-means objective of the best restart")
          .added("samples", &ClustersRow::samples, "captured rows of the gate split");
  return t;
}
const TableRegistrar kClustersTable{clusters_table().schema()};

void expand_clusters(const ClustersParams& p, PlanBuilder& b) {
  add_per_captured_layer(b, p.layers, "clusters", [&](std::int64_t layer) -> nlohmann::json {
    return ClustersUnitParams{p.pca, p.k, p.n_init, p.seed, p.holdout, p.holdout_by, layer};
  });
}

const ExperimentRegistrar kClusters{make_experiment<ClustersParams>(
    "clusters", "whether \"linear is fine\" is a region of activation space", 50, clusters_schema(), expand_clusters,
    validate_layer_param<ClustersParams, &ClustersParams::layers>("layers"),
    captured_layer_needs<ClustersParams, &ClustersParams::layers>())};

UnitResult run_clusters(const ExperimentInput& in) {
  const auto p = in.params.get<ClustersUnitParams>();
  const std::int64_t layer = p.layer;
  const std::uint64_t seed = layer_seed(p.seed, layer);
  const LabelledRows labelled = read_labelled(in, layer, {p.holdout, seed, p.holdout_by});
  const auto& [rows, threshold, labels, hs] = labelled;
  if (hs.train.size() < 2) throw InputError(in.unit_id + ": too few captured rows for clusters");

  const at::Tensor x_train = rows_of(rows.x, hs.train);
  const Pca pca = fit_pca(x_train, p.pca);
  const at::Tensor z_train = pca.project(x_train);
  KMeansOptions km;
  km.k = p.k;
  km.n_init = p.n_init;
  km.seed = seed;
  const KMeansResult clusters = kmeans(z_train, km);
  const std::int64_t k = clusters.centers.size(0);

  std::vector<double> ones(static_cast<std::size_t>(k), 0), count(static_cast<std::size_t>(k), 0);
  const at::Tensor assigned = clusters.labels.contiguous();
  for (std::size_t i = 0; i < hs.train.size(); ++i) {
    const auto c = static_cast<std::size_t>(assigned[static_cast<std::int64_t>(i)].item<std::int64_t>());
    ones[c] += labels[static_cast<std::size_t>(hs.train[i])], count[c] += 1;
  }
  std::int64_t clean = 0;
  std::vector<double> rate(static_cast<std::size_t>(k), 0.5);
  for (std::size_t c = 0; c < rate.size(); ++c) {
    if (count[c] == 0) continue;
    rate[c] = ones[c] / count[c];
    if (rate[c] >= 0.9 || rate[c] <= 0.1) ++clean;
  }
  std::vector<double> score;
  const at::Tensor held = nearest_center(pca.project(rows_of(rows.x, hs.holdout)), clusters.centers).contiguous();
  for (std::int64_t i = 0; i < held.size(0); ++i)
    score.push_back(rate[static_cast<std::size_t>(held[i].item<std::int64_t>())]);
  const double cluster_auc = roc_auc(score, rows_of(labels, hs.holdout));

  UnitResult out = unit_result(in);
  out.tables.push_back(clusters_table().table({{.model = in.model_name,
                                                .layer = layer,
                                                .pca_var = pca.explained_ratio.sum().item<double>(),
                                                .cluster_auc = cluster_auc,
                                                .clean_clusters = clean,
                                                .corpus = in.corpus_name,
                                                .k = k,
                                                .inertia = clusters.inertia,
                                                .samples = rows.size()}}));
  const std::string key = "clusters/" + in.model_name + "/" + in.corpus_name + "/layer" + std::to_string(layer);
  const at::Tensor ratio = pca.explained_ratio.contiguous();
  out.arrays[key + "/explained_ratio"] = {
      {ratio.numel()}, std::vector<double>(ratio.data_ptr<double>(), ratio.data_ptr<double>() + ratio.numel())};
  out.arrays[key + "/holdout"] = {{static_cast<std::int64_t>(hs.holdout.size())},
                                  std::vector<double>(hs.holdout.begin(), hs.holdout.end())};
  out.arrays[key + "/label_rate"] = {{k}, rate};
  return out;
}

// The gate split's captured rows in float32 and their standardised copy (for the PCA). No model.
MemoryNeed clusters_memory(const MemoryQuery& q) {
  return MemoryNeed{.activations = 2 * captured_rows(q, "gate") * static_cast<double>(q.model.d_model) * 4};
}

const UnitKindRegistrar kClustersKind{"clusters", run_clusters, /*needs_model=*/false, clusters_memory,
                                      /*runs_split=*/true};

void clusters_tables(const TableSet& tables, std::vector<ReportTable>* out) {
  const auto rows =
      clusters_table().sorted_rows(tables, [](const ClustersRow& r) { return std::tie(r.model, r.corpus, r.layer); });
  if (rows.empty()) return;
  ReportTable rt{"clusters",
                 "Residual clusters: PCA + k-means of X; clean clusters share one label on ≥90% of their rows",
                 {"model", "corpus", "layer", "PCA variance %", "clean clusters", "cluster AUC", "samples"},
                 {},
                 "",
                 "Table 6"};
  for (const auto& r : rows)
    rt.rows.push_back({r.model, r.corpus, std::to_string(r.layer), pct(100 * r.pca_var),
                       std::to_string(r.clean_clusters) + " / " + std::to_string(r.k), num(r.cluster_auc, 3),
                       std::to_string(r.samples)});
  out->push_back(std::move(rt));
}

const SectionRegistrar kClustersSection{{"clusters", 50, clusters_tables, {}}};

}  // namespace
}  // namespace linsweep
