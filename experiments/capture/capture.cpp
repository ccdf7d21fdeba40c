// `capture`: the MLP inputs X and per-token δ of every covered layer on the gate (and select,
// eval) splits, written as activation shards for the gate, token/context, cluster and routing
// list experiments (docs/methods.md, "Gate data"). One base pass per batch caches the stream
// entering each layer; layer ℓ's all-linear pass recomputes only layers ℓ..L−1. The "capture"
// provider gives those experiments the capture unit of their model and corpus; the δ
// histograms of the captured gate splits are this file's figures.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/eval/scoring.hpp"
#include "engine/model/language_model.hpp"
#include "experiments/fit/fit_units.hpp"
#include "experiments/framework/capture_data.hpp"
#include "experiments/framework/experiment.hpp"
#include "experiments/framework/stage_data.hpp"
#include "experiments/framework/unit_data.hpp"
#include "presentation/figures.hpp"
#include "presentation/section.hpp"
#include "storage/activation_shard.hpp"
#include "storage/store.hpp"

namespace linsweep {
namespace {

struct CaptureUnitParams {
  UnitBasics basics;                    // context, λ, format (its splits are its own)
  std::map<std::string, Split> splits;  // gate, and select and eval when the spec has them
  std::vector<std::int64_t> layers;     // ascending
  std::string activation_dtype;
};
LINSWEEP_UNIT_PARAMS(CaptureUnitParams, splits, layers, activation_dtype)

// What is captured must not depend on which experiment reads it, so that changing one
// experiment's layers or adding one reruns only that experiment: every covered layer, and
// every one of the gate, select and eval splits the spec defines.
std::string provide_capture(PlanBuilder& b, const ModelSpec& m, const std::string& corpus, const nlohmann::json&) {
  const std::string fit = b.provide("fit", m, corpus);
  CaptureUnitParams p;
  p.basics = b.basics(corpus, "", first_lambda(b.sweep()));
  p.splits["gate"] = b.split("gate").get<Split>();
  for (const char* name : {"select", "eval"})
    if (b.has_split(name)) p.splits[name] = b.split(name).get<Split>();
  p.layers = b.covered_layers(m);
  p.activation_dtype = b.sweep().runtime.activation_dtype;
  return b.add_with_inputs(Unit{.kind = "capture", .model = m.name, .corpus = corpus, .params = p, .deps = {fit}});
}
const ProviderRegistrar kCaptureProvider{"capture", provide_capture};

// The shard part this rank writes: its replica's index in the worker group (one part per
// replica, each written by the stages that hold the layers).
std::int64_t capture_part(const ExperimentInput& in) { return in.group == nullptr ? 0 : in.group->rank() / in.stages; }

// One capture unit across its splits: the layers, their surrogates on the model's device (not
// uploaded per batch), and X at each layer as the base pass records it.
class CaptureRun {
 public:
  CaptureRun(const ExperimentInput& in, const CaptureUnitParams& p)
      : in_(in), model_(*in.model), layers_(p.layers), context_(p.basics.context), captured_(p.layers.size()) {
    const UnitResult& fit = dep_of_kind(in.deps, "fit", in.unit_id);
    const at::Device device = model_.parameters().front().device();
    for (std::int64_t layer : layers_) {
      const AffineMap m = surrogate_map(fit, in.model_name, in.corpus_name, layer, p.basics.lambda, in.unit_id);
      maps_.push_back({m.weight.to(device), m.bias.to(device)});
    }
    opt_.dtype = parse_activation_dtype(p.activation_dtype);
    opt_.with_delta = true;
  }

  // Every row of `split`'s windows in this rank's shard: X, δ, tokens, window and position, one
  // shard part per layer.
  void write_split(const std::vector<TokenId>& stream, const std::string& split_name, const Split& split) {
    const Windows all = unit_windows(in_, stream, split, context_);
    check_windows(model_, all);
    const Windows mine = my_shard(in_, all);
    const std::int64_t first = my_shard_begin(in_, all);
    std::vector<std::unique_ptr<ActivationWriter>> writers = open_writers(split_name);
    c10::InferenceMode guard;
    for (std::int64_t b = 0; b < mine.count; b += in_.batch)
      write_batch(mine, first, b, std::min(in_.batch, mine.count - b), writers);
    for (auto& w : writers)
      if (w) w->close();
  }

 private:
  // The base pass records X at every captured layer; the all-linear passes must not (their
  // capture would also run the MLP beside each surrogate).
  void capture_x(bool on) {
    for (std::size_t k = 0; k < layers_.size(); ++k) {
      if (on)
        model_.hook(layers_[k]).set_capture([this, k](const at::Tensor& x, const at::Tensor&) { captured_[k] = x; });
      else
        model_.hook(layers_[k]).clear_capture();
    }
  }

  std::vector<std::unique_ptr<ActivationWriter>> open_writers(const std::string& split_name) {
    const std::string dir = in_.store.unit_activations(in_.unit_id) + "/" + split_name;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw StorageError(dir + ": cannot create directory: " + ec.message());
    const std::int64_t part = capture_part(in_);
    std::vector<std::unique_ptr<ActivationWriter>> writers;
    for (std::int64_t layer : layers_) {
      if (!model_.holds(layer)) {  // the stage that holds it writes its rows
        writers.push_back(nullptr);
        continue;
      }
      opt_.describes = {
          .model = in_.model_name, .corpus = in_.corpus_name, .split = split_name, .layer = layer, .unit = in_.unit_id};
      writers.push_back(std::make_unique<ActivationWriter>(
          in_.store.activation_shard(in_.unit_id, split_name, layer, part), model_.config().d_model, opt_));
    }
    return writers;
  }

  // Windows b..b+n of `mine` (the shard's first window is window `first` of the split). X is
  // captured on the stage that holds its layer, δ scored on the last: the stages sum δ, zeros
  // but on the last, so that the holder writes both.
  void write_batch(const Windows& mine, std::int64_t first, std::int64_t b, std::int64_t n,
                   std::vector<std::unique_ptr<ActivationWriter>>& writers) {
    const std::size_t L = layers_.size();
    const std::int64_t per_window = context_ - 1;
    const at::Tensor ids = window_ids(mine, b, n, model_.parameters().front().device());  // [n, T]
    std::vector<at::Tensor> entering(L);                                                  // [n, T, d]
    capture_x(true);
    at::Tensor h = model_.embed(ids);
    for (std::int64_t l = 0, k = 0; l < model_.num_layers(); ++l) {
      if (static_cast<std::size_t>(k) < L && layers_[static_cast<std::size_t>(k)] == l)
        entering[static_cast<std::size_t>(k++)] = h;
      h = model_.run_layer(l, h);
    }
    const auto rows = static_cast<std::size_t>(n * per_window);
    std::vector<double> window_nll(static_cast<std::size_t>(n)), full(rows), lin(rows), delta(L * rows);
    score_hidden(model_, model_.final_norm(h), ids, window_nll.data(), full.data());
    std::vector<at::Tensor> xs(L);
    for (std::size_t k = 0; k < L; ++k)
      if (writers[k]) xs[k] = captured_[k].slice(1, 0, per_window).to(at::kCPU, at::kFloat).contiguous();
    capture_x(false);
    for (std::size_t k = 0; k < L; ++k) {
      model_.hook(layers_[k]).use_affine(maps_[k]);
      score_hidden(model_, model_.hidden_from(layers_[k], entering[k]), ids, window_nll.data(), lin.data());
      model_.hook(layers_[k]).use_mlp();
      for (std::size_t r = 0; r < rows; ++r) delta[k * rows + r] = lin[r] - full[r];
    }
    stage_sum(in_, delta);
    append_rows(ids, first + b, rows, xs, delta, writers);
  }

  // Row r = window first + r / (T−1), position t = r mod (T−1): the token at t, the next one
  // (what δ scores), its window, t; X and δ of every layer this rank writes.
  void append_rows(const at::Tensor& ids, std::int64_t first, std::size_t rows, const std::vector<at::Tensor>& xs,
                   const std::vector<double>& delta, std::vector<std::unique_ptr<ActivationWriter>>& writers) {
    const std::int64_t per_window = context_ - 1;
    const at::Tensor ids_cpu = ids.slice(1, 0, per_window).to(at::kCPU, at::kInt).contiguous();
    const at::Tensor next_cpu = ids.slice(1, 1, context_).to(at::kCPU, at::kInt).contiguous();
    std::vector<std::int64_t> window(rows);
    std::vector<std::int32_t> position(rows);
    for (std::size_t r = 0; r < rows; ++r) {
      window[r] = first + static_cast<std::int64_t>(r) / per_window;
      position[r] = static_cast<std::int32_t>(static_cast<std::int64_t>(r) % per_window);
    }
    std::vector<float> d(rows);
    for (std::size_t k = 0; k < layers_.size(); ++k) {
      if (!writers[k]) continue;
      for (std::size_t r = 0; r < rows; ++r) d[r] = static_cast<float>(delta[k * rows + r]);
      writers[k]->append({.x = xs[k].data_ptr<float>(),
                          .delta = d.data(),
                          .token_ids = ids_cpu.data_ptr<std::int32_t>(),
                          .next_token_ids = next_cpu.data_ptr<std::int32_t>(),
                          .window = window.data(),
                          .position = position.data(),
                          .rows = static_cast<std::int64_t>(rows)});
    }
  }

  const ExperimentInput& in_;
  LanguageModel& model_;
  std::vector<std::int64_t> layers_;
  std::vector<AffineMap> maps_;
  std::int64_t context_;
  ActivationOptions opt_;
  std::vector<at::Tensor> captured_;  // X of the current batch per layer [n, T, d]
};

UnitResult run_capture(const ExperimentInput& in) {
  const auto p = in.params.get<CaptureUnitParams>();
  CaptureRun run(in, p);
  HookReset reset(*in.model);
  const std::vector<TokenId> stream = unit_stream(in);  // tokenized once for every split
  for (const auto& [split_name, split] : p.splits) run.write_split(stream, split_name, split);
  // The directories created above are durable too (each writer synced its own), and every
  // part is on disk before the group's leader commits the unit that names them.
  const std::string unit_dir = in.store.unit_activations(in.unit_id);
  for (const auto& [split_name, split] : p.splits) sync_directory(unit_dir + "/" + split_name);
  sync_directory(unit_dir);
  sync_directory(in.store.activations_dir());
  sync_directory(in.store.dir());
  if (in.group != nullptr) in.group->barrier();
  UnitResult out = unit_result(in);
  const std::int64_t parts = in.group == nullptr ? 1 : in.group->size() / in.stages;
  out.arrays["capture/parts"] = {{1}, {static_cast<double>(parts)}};
  out.arrays["capture/layers"] = {{static_cast<std::int64_t>(p.layers.size())},
                                  std::vector<double>(p.layers.begin(), p.layers.end())};
  return out;
}

// The forward pass and, per batch, three of width d per captured layer: the stream entering it,
// X as captured and X's float32 copy for the shard.
MemoryNeed capture_memory(const MemoryQuery& q) {
  MemoryNeed n = forward_need(q);
  const auto layers = static_cast<double>(q.params.at("layers").size());
  n.activations += 3 * layers * static_cast<double>(q.batch * q.context * q.model.d_model) * 4;
  return n;
}

const UnitKindRegistrar kCapture{"capture", run_capture, /*needs_model=*/true, capture_memory, /*runs_split=*/true};

// δ of every row of the given shard parts (a layer's gate split: one part per rank of the
// capture's worker group, concatenated in rank order).
std::vector<float> read_deltas(const std::vector<std::string>& parts) {
  std::vector<float> all;
  for (const auto& path : parts) {
    ActivationReader r(path);
    for (std::int64_t b = 0; b < r.rows(); b += 65536) {
      auto part = r.delta(b, std::min<std::int64_t>(65536, r.rows() - b));
      all.insert(all.end(), part.begin(), part.end());
    }
  }
  return all;
}

// A histogram panel of δ (50 bins between its extremes).
SvgChart delta_histogram(std::vector<float> all, const std::string& title) {
  auto [lo_it, hi_it] = std::minmax_element(all.begin(), all.end());
  const double lo = *lo_it, hi = *hi_it > *lo_it ? *hi_it : *lo_it + 1;
  const int bins = 50;
  std::vector<double> edges(bins + 1), counts(bins, 0);
  for (int i = 0; i <= bins; ++i) edges[i] = lo + (hi - lo) * i / bins;
  for (float v : all) counts[std::min(bins - 1, static_cast<int>((v - lo) / (hi - lo) * bins))] += 1;
  SvgChart chart(title, "δ = NLL(surrogate) − NLL(MLP) (nats)", "positions");
  chart.set_histogram(edges, counts);
  return chart;
}

// Per model and corpus, a panel per layer: δ of the gate split of the committed capture units
// (not failed attempts' leftovers, nor the select and eval shards), every shard part of a
// layer in one histogram, titled by model, corpus and layer from the unit's slot
// (capture/<model>/<corpus>).
void capture_figures(const FigureInput& in, std::vector<Figure>* out) {
  for (const auto& id : in.store.committed_units()) {
    if (id.rfind("capture-", 0) != 0) continue;
    const nlohmann::json provenance = nlohmann::json::parse(in.store.read_unit_params(id), nullptr, false);
    if (!provenance.is_object() || !provenance.contains("params")) continue;
    const auto slot = provenance.value("slot", std::string());
    const auto first = slot.find('/'), second = slot.find('/', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string model = slot.substr(first + 1, second - first - 1), corpus = slot.substr(second + 1);
    const auto parts = static_cast<std::int64_t>(in.store.read_unit(id).arrays.at("capture/parts").values.at(0));
    SvgFigure fig("δ per position on the gate split: " + model + " · " + corpus, 2);
    for (std::int64_t layer : provenance["params"]["layers"].get<std::vector<std::int64_t>>()) {
      std::vector<std::string> paths;
      for (std::int64_t part = 0; part < parts; ++part) {
        const std::string path = in.store.layout().activation_shard(id, "gate", layer, part);
        if (std::filesystem::is_regular_file(path) && ActivationReader(path).has_delta()) paths.push_back(path);
      }
      std::vector<float> deltas = read_deltas(paths);
      if (!deltas.empty()) fig.add(delta_histogram(std::move(deltas), "layer " + std::to_string(layer)));
    }
    if (fig.empty()) continue;
    out->push_back({"delta_hist_" + safe_name(model) + "_" + safe_name(corpus), fig.render(),
                    "δ histograms of the gate split: " + corpus,
                    "One panel per layer: the loss change δ at each scored position when that layer's MLP is "
                    "replaced by its surrogate (positive: the MLP helps). Gates learn to route the left of the "
                    "distribution to the surrogate.",
                    model, "", /*folded=*/true});
  }
}

const SectionRegistrar kCaptureSection{{"capture", 90, {}, capture_figures}};

}  // namespace
}  // namespace linsweep
