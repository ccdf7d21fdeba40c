// Training tokens/s of a small GPT-2 under linsweep::Trainer, timed for bench/training_throughput.sh.
// The model is GPT-2's architecture at d=192, 6 layers, 6 heads, d_ff 768, vocab 4096 (tied
// head, gelu tanh), built seeded by build_model; it trains with AdamW (lr 1e-3, wd 0.01) and
// clipping at 1.0 on windows of a seeded uniform random token stream. Warm-up steps are not
// timed; the timed steps give tokens/s = steps × batch × context / seconds. With --breakdown,
// extra steps (after the timed ones) time forward + loss, backward, clipping and AdamW apart.
// Prints one JSON object.
// Usage: bench_training_throughput [--threads N] [--warmup N] [--steps N] [--batch N]
//          [--context N] [--windows N] [--seed N] [--breakdown N]
#include <ATen/ATen.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/heap_policy.hpp"
#include "engine/corpus/windows.hpp"
#include "engine/model/language_model.hpp"
#include "engine/model/load_model.hpp"
#include "engine/runtime.hpp"
#include "engine/train/trainer.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::int64_t> opt = {{"threads", 0},   {"warmup", 3},    {"steps", 20}, {"batch", 8},
                                             {"context", 128}, {"windows", 256}, {"seed", 0},   {"breakdown", 0}};
  for (int i = 1; i < argc; i += 2) {
    const std::string key = argv[i];
    if (key.rfind("--", 0) != 0 || !opt.count(key.substr(2)) || i + 1 >= argc) {
      std::fprintf(stderr,
                   "usage: %s [--threads N] [--warmup N] [--steps N] [--batch N] [--context N] [--windows N] "
                   "[--seed N] [--breakdown N]\n",
                   argv[0]);
      return 2;
    }
    opt[key.substr(2)] = std::atoll(argv[i + 1]);
  }
  const std::int64_t B = opt["batch"], T = opt["context"], steps = opt["steps"], warmup = opt["warmup"];
  static_cast<void>(linsweep::keep_large_blocks_in_heap());       // as `linsweep` does for every command
  linsweep::configure_threads(static_cast<int>(opt["threads"]));  // torch's pool and OpenBLAS's

  linsweep::ModelConfig c = linsweep::model_config(
      "gpt2", {.vocab_size = 4096, .d_model = 192, .n_layers = 6, .n_heads = 6, .d_ff = 768, .max_positions = 1024});
  c.activation = linsweep::Activation::kGeluTanh, c.tied_head = true;
  at::manual_seed(static_cast<std::uint64_t>(opt["seed"]));
  auto model = linsweep::build_model(c);
  model->train();
  std::vector<linsweep::NamedParameter> params;
  std::int64_t n_params = 0;
  for (auto& item : model->named_parameters()) {
    item.value().set_requires_grad(true);
    params.push_back({item.key(), item.value()});
    n_params += item.value().numel();
  }

  // Uniform random tokens: throughput does not depend on what the tokens are.
  std::mt19937_64 rng(static_cast<std::uint64_t>(opt["seed"]));
  std::uniform_int_distribution<linsweep::TokenId> token(0, static_cast<linsweep::TokenId>(c.vocab_size - 1));
  std::vector<linsweep::TokenId> stream(static_cast<std::size_t>(opt["windows"] * T));
  for (auto& t : stream) t = token(rng);
  const linsweep::Windows windows = linsweep::make_windows(stream, {0, opt["windows"] * T}, T, "random tokens");

  linsweep::TrainerOptions options;
  options.adam = linsweep::AdamWOptions{.lr = 1e-3, .weight_decay = 0.01};
  options.clip = 1.0;
  options.batch = B;
  options.seed = static_cast<std::uint64_t>(opt["seed"]);
  linsweep::Trainer trainer(*model, params, windows, options);

  std::int64_t s = 0;
  double first_loss = 0;
  for (; s < warmup; ++s) {
    const double loss = trainer.step(s).loss;
    if (s == 0) first_loss = loss;
  }
  const auto t0 = Clock::now();
  linsweep::StepStats last;
  for (std::int64_t k = 0; k < steps; ++k, ++s) last = trainer.step(s);
  const double seconds = since(t0);

  // Breakdown (not part of the headline): the trainer's step taken apart with the same public
  // pieces it uses, on windows 0..B-1, so that each phase can be set against Python's.
  double fwd = 0, bwd = 0, clip = 0, adam = 0;
  const std::int64_t parts = opt["breakdown"];
  if (parts > 0) {
    std::vector<std::int64_t> ids(windows.ids.begin(), windows.ids.begin() + B * T);
    const at::Tensor x = at::tensor(ids, at::kLong).view({B, T});
    for (std::int64_t k = 0; k < parts; ++k) {
      trainer.optimizer().zero_grad();
      auto t = Clock::now();
      const at::Tensor loss = linsweep::next_token_loss(*model, x);
      loss.item<double>();
      fwd += since(t), t = Clock::now();
      loss.backward();
      bwd += since(t), t = Clock::now();
      linsweep::clip_gradients(trainer.optimizer().parameters(), 1.0);
      clip += since(t), t = Clock::now();
      trainer.optimizer().step(1e-3);
      adam += since(t);
    }
  }

  const double tokens = static_cast<double>(steps * B * T);
  std::printf(
      "{\"side\": \"linsweep\", \"tokens_per_second\": %.3f, \"seconds\": %.6f, \"steps\": %lld, \"warmup\": %lld, "
      "\"batch\": %lld, \"context\": %lld, \"threads\": %d, \"parameters\": %lld, \"first_loss\": %.6f, "
      "\"final_loss\": %.6f",
      tokens / seconds, seconds, static_cast<long long>(steps), static_cast<long long>(warmup),
      static_cast<long long>(B), static_cast<long long>(T), at::get_num_threads(), static_cast<long long>(n_params),
      first_loss, last.loss);
  if (parts > 0)
    std::printf(
        ", \"breakdown_steps\": %lld, \"forward_s\": %.6f, \"backward_s\": %.6f, \"clip_s\": %.6f, \"adamw_s\": %.6f",
        static_cast<long long>(parts), fwd / parts, bwd / parts, clip / parts, adam / parts);
  std::printf("}\n");
  return 0;
}
