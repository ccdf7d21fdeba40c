// Routed evaluation against plain evaluation, for bench/routed_eval.sh: forward + scoring
// (hidden_states, score_hidden) of the same windows, once with every MLP and once with one
// layer's hook routed (a trained linear Gate decides per position between the MLP and a d×d
// affine surrogate). Plain and routed passes alternate; a warm-up pass of each is not timed.
// Usage: bench_routed_eval MODEL_DIR TOKENS.npy [context] [windows] [batch] [repeats] [layer] [threads]
//   defaults: 256 4 2 5 L/2 2
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "experiments/gate_model.hpp"
#include "workers/corpus/npy.hpp"
#include "workers/corpus/windows.hpp"
#include "workers/eval/scoring.hpp"
#include "workers/model/load_model.hpp"
#include "workers/runtime.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL_DIR TOKENS.npy [context] [windows] [batch] [repeats] [layer] [threads]\n",
                 argv[0]);
    return 2;
  }
  const std::int64_t context = argc > 3 ? std::atoll(argv[3]) : 256;
  const std::int64_t count = argc > 4 ? std::atoll(argv[4]) : 4;
  const std::int64_t batch = argc > 5 ? std::atoll(argv[5]) : 2;
  const int repeats = argc > 6 ? std::atoi(argv[6]) : 5;
  const int threads = argc > 8 ? std::atoi(argv[8]) : 2;
  linsweep::configure_threads(threads);  // torch's pool and OpenBLAS's
  at::manual_seed(0);

  linsweep::LoadedModel loaded = linsweep::load_model(argv[1], {.device = "cpu", .dtype = "float32"});
  linsweep::LanguageModel& model = *loaded.model;
  const std::int64_t layer = argc > 7 ? std::atoll(argv[7]) : model.num_layers() / 2;
  const std::int64_t d = model.config().d_model;
  const linsweep::Windows w =
      linsweep::make_windows(linsweep::read_npy_tokens(argv[2]), {0, count * context}, context, "bench tokens");
  linsweep::check_windows(model, w);
  c10::InferenceMode guard;
  const at::Device cpu(at::kCPU);

  // The gate: a linear Gate trained on this layer's MLP inputs from one window, with labels
  // from a random direction split at its median, so it routes about half the positions.
  at::Tensor gate_x;
  model.hook(layer).set_capture([&](const at::Tensor& x, const at::Tensor&) { gate_x = x.reshape({-1, d}).clone(); });
  model.hidden_states(linsweep::window_ids(w, 0, 1, cpu));
  model.hook(layer).clear_capture();
  const at::Tensor proj = gate_x.to(at::kDouble).mv(at::randn({d}, at::kDouble));
  const at::Tensor labels = proj.gt(proj.median()).to(at::kDouble);
  const linsweep::Gate gate =
      linsweep::Gate::train(linsweep::GateVariant::parse("linear"), gate_x, labels, linsweep::GateTraining{});
  // The surrogate: any d×d affine map (its values do not change the cost).
  const linsweep::AffineMap map{at::randn({d, d}) * 0.02, at::zeros({d})};

  std::vector<double> nll(static_cast<std::size_t>(count));
  double routed_positions = 0;
  auto pass = [&](bool routed) {
    if (routed)
      model.hook(layer).use_routed(map, [&gate, &routed_positions](const at::Tensor& x) {
        at::Tensor mask = gate.route(x);
        routed_positions += static_cast<double>(mask.sum().item<std::int64_t>());
        return mask;
      });
    else
      model.hook(layer).use_mlp();
    const auto t0 = std::chrono::steady_clock::now();
    for (std::int64_t b = 0; b < count; b += batch) {
      const std::int64_t n = std::min(batch, count - b);
      const at::Tensor ids = linsweep::window_ids(w, b, n, cpu);
      linsweep::score_hidden(model, model.hidden_states(ids), ids, &nll[static_cast<std::size_t>(b)], nullptr);
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    model.hook(layer).use_mlp();
    double sum = 0;
    for (double v : nll) sum += v;
    return std::pair{s / static_cast<double>(count), std::exp(sum / static_cast<double>(count * (context - 1)))};
  };
  pass(false), pass(true);  // warm-up: packed weights, allocator
  routed_positions = 0;
  std::vector<double> plain_s, routed_s;
  double ppl_plain = 0, ppl_routed = 0;
  for (int r = 0; r < repeats; ++r) {
    auto [p, pp] = pass(false);
    auto [q, pq] = pass(true);
    plain_s.push_back(p), routed_s.push_back(q);
    ppl_plain = pp, ppl_routed = pq;
  }
  const double plain = median(plain_s), routed = median(routed_s);
  const auto& cfg = model.config();
  std::printf(
      "model: %s shape d=%lld, %lld layers, %lld heads, vocab %lld (random weights); %lld windows of %lld, batch %lld, "
      "%d torch/OpenBLAS threads\n",
      cfg.architecture.c_str(), static_cast<long long>(d), static_cast<long long>(cfg.n_layers),
      static_cast<long long>(cfg.n_heads), static_cast<long long>(cfg.vocab_size), static_cast<long long>(count),
      static_cast<long long>(context), static_cast<long long>(batch), at::get_num_threads());
  std::printf(
      "routed layer %lld: linear gate (d+1 = %lld parameters), %.1f%% of positions on the affine map; "
      "ppl plain %.4f, routed %.4f\n",
      static_cast<long long>(layer), static_cast<long long>(gate.parameter_count()),
      100.0 * routed_positions / static_cast<double>(repeats * count * context), ppl_plain, ppl_routed);
  std::printf("per window, median of %d: plain %.3f s, routed %.3f s\n", repeats, plain, routed);
  std::printf("  plain: ");
  for (double s : plain_s) std::printf(" %.3f", s);
  std::printf("\n  routed:");
  for (double s : routed_s) std::printf(" %.3f", s);
  std::printf("\nratio routed/plain: %.3fx (target <= 1.3x)\n", routed / plain);
  return 0;
}
