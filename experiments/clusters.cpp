// `clusters`: is "linear is fine" a region of activation space? PCA of the gate split's X,
// k-means on the components (seeded k-means++), each cluster's label rate on the training rows
// as a score for held-out rows (cluster AUC), and the clusters whose training rows share one
// label ≥ 90% of the time (DESIGN §4 "Clusters").
#include <ATen/ATen.h>

#include "common/errors.hpp"
#include "experiments/capture_data.hpp"
#include "experiments/classification.hpp"
#include "experiments/experiment.hpp"
#include "experiments/unit_data.hpp"
#include "experiments/kmeans.hpp"
#include "experiments/pca.hpp"

namespace linsweep {
namespace {

UnitResult run_clusters(const ExperimentInput& in) {
  const UnitResult& capture = dep_of_kind(in.deps, "capture", in.unit_id);
  const auto layer = in.params["layer"].get<std::int64_t>();
  const auto seed = in.params["seed"].get<std::uint64_t>() + static_cast<std::uint64_t>(layer);
  const LabelledRows labelled = read_labelled(in.store_dir, capture, layer, in.params["holdout"].get<double>(), seed);
  const CapturedRows& rows = labelled.rows;
  const std::vector<std::uint8_t>& labels = labelled.labels;
  const HoldoutSplit& hs = labelled.split;
  if (hs.train.size() < 2) throw InputError(in.unit_id + ": too few captured rows for clusters");

  const at::Tensor x_train = rows_of(rows.x, hs.train);
  const Pca pca = fit_pca(x_train, in.params["pca"].get<std::int64_t>());
  const at::Tensor z_train = pca.project(x_train);
  KMeansOptions km;
  km.k = in.params["k"].get<std::int64_t>();
  km.n_init = in.params["n_init"].get<std::int64_t>();
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
  for (std::int64_t i = 0; i < held.size(0); ++i) score.push_back(rate[static_cast<std::size_t>(held[i].item<std::int64_t>())]);
  const double cluster_auc = roc_auc(score, rows_of(labels, hs.holdout));

  UnitResult out = unit_result(in);
  Table t = empty_table("clusters");
  t.rows.push_back({in.model_name, layer, pca.explained_ratio.sum().item<double>(), cluster_auc, clean, in.corpus_name, k,
                    clusters.inertia, rows.size()});
  out.tables.push_back(std::move(t));
  const std::string key = "clusters/" + in.model_name + "/" + in.corpus_name + "/layer" + std::to_string(layer);
  const at::Tensor ratio = pca.explained_ratio.contiguous();
  out.arrays[key + "/explained_ratio"] = {{ratio.numel()}, std::vector<double>(ratio.data_ptr<double>(), ratio.data_ptr<double>() + ratio.numel())};
  out.arrays[key + "/holdout"] = {{static_cast<std::int64_t>(hs.holdout.size())}, std::vector<double>(hs.holdout.begin(), hs.holdout.end())};
  out.arrays[key + "/label_rate"] = {{k}, rate};
  return out;
}

const ExperimentRegistrar kClusters{"clusters", run_clusters, /*needs_model=*/false};

}  // namespace
}  // namespace linsweep
