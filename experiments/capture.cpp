// `capture`: the MLP inputs X and per-token δ of every needed layer on the gate (and select,
// eval) splits, written as activation shards for the gate, token/context, cluster and routing
// list experiments (DESIGN §4 "Gate data"). One base pass per batch caches the stream entering
// each layer; layer ℓ's all-linear pass recomputes only layers ℓ..L−1.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <filesystem>
#include <memory>

#include "common/errors.hpp"
#include "experiments/capture_data.hpp"
#include "experiments/experiment.hpp"
#include "experiments/unit_data.hpp"
#include "storage/activation_shard.hpp"
#include "workers/comm/communicator.hpp"
#include "workers/eval/scoring.hpp"
#include "workers/model/language_model.hpp"

namespace linsweep {
namespace {

UnitResult run_capture(const ExperimentInput& in) {
  LanguageModel& model = *in.model;
  const UnitResult& fit = dep_of_kind(in.deps, "fit", in.unit_id);
  const auto layers = in.params["layers"].get<std::vector<std::int64_t>>();  // ascending
  const double lambda = in.params["lambda"].get<double>();
  const std::int64_t context = in.params["context"].get<std::int64_t>();
  ActivationOptions opt;
  opt.dtype = parse_activation_dtype(in.params["activation_dtype"].get<std::string>());
  opt.with_delta = true;
  const std::int64_t d = model.config().d_model;
  const std::size_t L = layers.size();
  const at::Device device = model.parameters().front().device();
  std::vector<AffineMap> maps;  // on the model's device once, not uploaded per batch
  for (std::int64_t layer : layers) {
    const AffineMap m = surrogate_map(fit, in.model_name, in.corpus_name, layer, lambda, in.unit_id);
    maps.push_back({m.weight.to(device), m.bias.to(device)});
  }
  const std::int64_t part = in.group == nullptr ? 0 : in.group->rank();
  const std::string unit_dir = in.store_dir + "/activations/" + in.unit_id;
  const std::int64_t per_window = context - 1;

  // The base pass records X at every captured layer; the all-linear passes must not (their
  // capture would also run the MLP beside each surrogate).
  std::vector<at::Tensor> captured(L);  // X of the current batch per layer [n, T, d]
  auto capture_x = [&](bool on) {
    for (std::size_t k = 0; k < L; ++k) {
      if (on) model.hook(layers[k]).set_capture([&captured, k](const at::Tensor& x, const at::Tensor&) { captured[k] = x; });
      else model.hook(layers[k]).clear_capture();
    }
  };
  HookReset reset(model);
  const std::vector<TokenId> stream = unit_stream(in);  // tokenized once for every split
  for (const auto& [split_name, split] : in.params["splits"].items()) {
    const Windows all = unit_windows(in, stream, split, context);
    check_windows(model, all);
    const Windows mine = my_shard(in, all);
    const std::int64_t first = my_shard_begin(in, all);
    std::vector<std::unique_ptr<ActivationWriter>> writers;
    std::error_code ec;
    std::filesystem::create_directories(unit_dir + "/" + split_name, ec);
    if (ec) throw StorageError(unit_dir + "/" + split_name + ": cannot create directory: " + ec.message());
    for (std::int64_t layer : layers)
      writers.push_back(std::make_unique<ActivationWriter>(capture_shard_path(in.store_dir, in.unit_id, split_name, layer, part), d, opt));
    c10::InferenceMode guard;
    for (std::int64_t b = 0; b < mine.count; b += in.batch) {
      const std::int64_t n = std::min(in.batch, mine.count - b);
      const at::Tensor ids = window_ids(mine, b, n, device);  // [n, T]
      std::vector<at::Tensor> entering(L);                    // [n, T, d]
      capture_x(true);
      at::Tensor h = model.embed(ids);
      for (std::int64_t l = 0, k = 0; l < model.num_layers(); ++l) {
        if (static_cast<std::size_t>(k) < L && layers[static_cast<std::size_t>(k)] == l) entering[static_cast<std::size_t>(k++)] = h;
        h = model.run_layer(l, h);
      }
      const auto rows = static_cast<std::size_t>(n * per_window);
      std::vector<double> window_nll(static_cast<std::size_t>(n)), full(rows), lin(rows);
      score_hidden(model, model.final_norm(h), ids, window_nll.data(), full.data());
      // Row r = window i, position t (t = 0..T−2): the token at t, its window, t.
      const at::Tensor ids_cpu = ids.slice(1, 0, per_window).to(at::kCPU, at::kInt).contiguous();
      std::vector<std::int64_t> window(rows);
      std::vector<std::int32_t> position(rows);
      for (std::size_t r = 0; r < rows; ++r) {
        window[r] = first + b + static_cast<std::int64_t>(r) / per_window;
        position[r] = static_cast<std::int32_t>(static_cast<std::int64_t>(r) % per_window);
      }
      std::vector<at::Tensor> xs;
      for (std::size_t k = 0; k < L; ++k)
        xs.push_back(captured[k].slice(1, 0, per_window).to(at::kCPU, at::kFloat).contiguous());
      capture_x(false);
      for (std::size_t k = 0; k < L; ++k) {
        model.hook(layers[k]).use_affine(maps[k]);
        score_hidden(model, model.hidden_from(layers[k], entering[k]), ids, window_nll.data(), lin.data());
        model.hook(layers[k]).use_mlp();
        std::vector<float> delta(rows);
        for (std::size_t r = 0; r < rows; ++r) delta[r] = static_cast<float>(lin[r] - full[r]);
        writers[k]->append(xs[k].data_ptr<float>(), nullptr, delta.data(), ids_cpu.data_ptr<std::int32_t>(), window.data(),
                           position.data(), static_cast<std::int64_t>(rows));
      }
    }
    for (auto& w : writers) w->close();
  }
  // The directories created above are durable too (each writer synced its own), and every
  // part is on disk before the group's leader commits the unit that names them.
  for (const auto& [split_name, split] : in.params["splits"].items()) sync_directory(unit_dir + "/" + split_name);
  sync_directory(unit_dir);
  sync_directory(in.store_dir + "/activations");
  sync_directory(in.store_dir);
  if (in.group != nullptr) in.group->barrier();
  UnitResult out = unit_result(in);
  out.arrays["capture/parts"] = {{1}, {static_cast<double>(in.group == nullptr ? 1 : in.group->size())}};
  out.arrays["capture/layers"] = {{static_cast<std::int64_t>(L)}, std::vector<double>(layers.begin(), layers.end())};
  return out;
}

const ExperimentRegistrar kCapture{"capture", run_capture, /*needs_model=*/true};

}  // namespace
}  // namespace linsweep
