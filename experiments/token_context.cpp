// `token_context`: how much of a gate's signal is the token itself. Linear gates on X, on the
// token component e (token + position embedding), on the context component c = X − e, a
// per-token lookup baseline and a random baseline, with AUCs on a seeded hold-out of the gate
// split; and the sizes of e and c and their cosine (DESIGN §4 "Token vs context").
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <map>
#include <random>

#include "common/errors.hpp"
#include "experiments/capture_data.hpp"
#include "experiments/classification.hpp"
#include "experiments/experiment.hpp"
#include "experiments/unit_data.hpp"
#include "experiments/gate_model.hpp"
#include "workers/model/language_model.hpp"

namespace linsweep {
namespace {

// e_t for every captured row: the rows are window-major with positions 0..T−2, so they
// reshape to [windows, T−1] token ids whose embedding is taken as the model does.
at::Tensor token_component(LanguageModel& model, const CapturedRows& rows) {
  const std::int64_t n = rows.size();
  std::int64_t per_window = 0;
  while (per_window < n && rows.position[static_cast<std::size_t>(per_window)] == per_window) ++per_window;
  if (per_window == 0 || n % per_window != 0) throw InputError("captured rows are not whole windows");
  for (std::int64_t r = 0; r < n; ++r)
    if (rows.position[static_cast<std::size_t>(r)] != r % per_window) throw InputError("captured rows are not whole windows");
  const at::Tensor ids = at::tensor(std::vector<std::int64_t>(rows.token_ids.begin(), rows.token_ids.end()), at::kLong)
                             .view({n / per_window, per_window})
                             .to(model.parameters().front().device());
  c10::InferenceMode guard;
  return model.input_embedding(ids).reshape({n, -1}).to(at::kCPU, at::kDouble);
}

UnitResult run_token_context(const ExperimentInput& in) {
  const UnitResult& capture = dep_of_kind(in.deps, "capture", in.unit_id);
  const auto layer = in.params["layer"].get<std::int64_t>();
  const auto seed = in.params["seed"].get<std::uint64_t>() + static_cast<std::uint64_t>(layer);
  const LabelledRows labelled = read_labelled(in.store_dir, capture, layer, in.params["holdout"].get<double>(), seed);
  const CapturedRows& rows = labelled.rows;
  const std::vector<std::uint8_t>& labels = labelled.labels;
  const HoldoutSplit& hs = labelled.split;
  const std::vector<std::uint8_t> y_hold = rows_of(labels, hs.holdout);
  const at::Tensor y_train = at::tensor(std::vector<double>(labels.begin(), labels.end()), at::kDouble)
                                 .index_select(0, at::tensor(hs.train, at::kLong));

  if (rows.x.size(1) != in.model->config().d_model)
    throw StorageError(in.unit_id + ": captured X has width " + std::to_string(rows.x.size(1)) + ", the model " +
                           std::to_string(in.model->config().d_model), ExitCode::kBadInput);
  for (auto id : rows.token_ids)
    if (id < 0 || id >= in.model->config().vocab_size)
      throw StorageError(in.unit_id + ": captured token id " + std::to_string(id) + " is outside the vocabulary", ExitCode::kBadInput);
  const at::Tensor x = rows.x.to(at::kDouble);
  const at::Tensor e = token_component(*in.model, rows);
  const at::Tensor c = x - e;
  Table out_rows = empty_table("token_context");
  const double e_norm = e.norm(2, 1).mean().item<double>(), c_norm = c.norm(2, 1).mean().item<double>();
  const double cosine = at::cosine_similarity(e, c, 1).mean().item<double>();
  auto add = [&](const std::string& variant, double auc) {
    out_rows.rows.push_back({in.model_name, layer, variant, auc, in.corpus_name, e_norm, c_norm, cosine, rows.size()});
  };
  GateTraining training;
  training.seed = seed;
  for (const auto& [name, features] : {std::pair<const char*, at::Tensor>{"X", x}, {"e", e}, {"c", c}}) {
    const Gate g = Gate::train(GateVariant{}, rows_of(features, hs.train), y_train, training);
    add(name, roc_auc(to_vector(g.logits(rows_of(features, hs.holdout))), y_hold));
  }
  // Lookup: each token's label rate on the training rows; unseen tokens get the overall rate.
  std::map<std::int32_t, std::pair<double, double>> rate;  // token -> (positives, count)
  double positives = 0;
  for (auto i : hs.train) {
    auto& r = rate[rows.token_ids[static_cast<std::size_t>(i)]];
    r.first += labels[static_cast<std::size_t>(i)], r.second += 1;
    positives += labels[static_cast<std::size_t>(i)];
  }
  const double overall = hs.train.empty() ? 0.5 : positives / static_cast<double>(hs.train.size());
  std::vector<double> lookup, random;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (auto i : hs.holdout) {
    auto it = rate.find(rows.token_ids[static_cast<std::size_t>(i)]);
    lookup.push_back(it == rate.end() ? overall : it->second.first / it->second.second);
    random.push_back(uniform(rng));
  }
  add("token_lookup", roc_auc(lookup, y_hold));
  add("random", roc_auc(random, y_hold));

  UnitResult out = unit_result(in);
  out.tables.push_back(std::move(out_rows));
  return out;
}

const ExperimentRegistrar kTokenContext{"token_context", run_token_context, /*needs_model=*/true};

}  // namespace
}  // namespace linsweep
