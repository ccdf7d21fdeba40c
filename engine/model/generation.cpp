// Prefill, then one decode step per new token; greedy or seeded sampling on the host.
#include "engine/model/generation.hpp"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <chrono>
#include <cmath>
#include <random>
#include <string>

#include "common/errors.hpp"

namespace linsweep {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A uniform double in [0, 1) from the top 53 bits of one draw (no library distribution, whose
// algorithm the standard leaves to the implementation).
double uniform53(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1p-53; }

// One row of logits [V] (float64, on the host) -> the greedy token or a draw by inverse CDF.
std::int64_t choose(const double* z, std::int64_t vocab, bool greedy, std::mt19937_64& rng) {
  std::int64_t best = 0;
  for (std::int64_t j = 1; j < vocab; ++j)
    if (z[j] > z[best]) best = j;
  if (greedy) return best;
  double total = 0;
  for (std::int64_t j = 0; j < vocab; ++j) total += std::exp(z[j] - z[best]);
  const double target = uniform53(rng) * total;
  double sum = 0;
  for (std::int64_t j = 0; j < vocab; ++j) {
    sum += std::exp(z[j] - z[best]);
    if (sum > target) return j;
  }
  return best;  // rounding left the target past the last partial sum
}

// The next token of every sequence [B] int64 on the host from logits [B, V].
at::Tensor next_tokens(const at::Tensor& logits, bool greedy, std::mt19937_64& rng) {
  const at::Tensor z = logits.to(at::kCPU, at::kDouble).contiguous();
  const std::int64_t B = z.size(0), V = z.size(1);
  at::Tensor out = at::empty({B}, at::kLong);
  for (std::int64_t b = 0; b < B; ++b) out[b] = choose(z.data_ptr<double>() + b * V, V, greedy, rng);
  return out;
}

void check_prompts(const LanguageModel& model, const at::Tensor& prompts, const GenerationOptions& o) {
  const ModelConfig& c = model.config();
  if (prompts.dim() != 2 || prompts.size(0) < 1 || prompts.size(1) < 1 || prompts.scalar_type() != at::kLong)
    throw ModelError("generation: prompts must be int64 [B, P] with B, P ≥ 1");
  if (o.max_new_tokens < 1) throw ModelError("generation: at least one new token");
  if (prompts.size(1) + o.max_new_tokens > c.max_context())
    throw ModelError("generation: a prompt of " + std::to_string(prompts.size(1)) + " tokens and " +
                     std::to_string(o.max_new_tokens) + " new ones exceed " + context_limit(c));
  const at::Tensor ids = prompts.to(at::kCPU);
  if (ids.min().item<std::int64_t>() < 0 || ids.max().item<std::int64_t>() >= c.vocab_size)
    throw ModelError("generation: a prompt id lies outside the vocabulary of " + std::to_string(c.vocab_size));
}

}  // namespace

Generation generate(LanguageModel& model, const at::Tensor& prompts, const GenerationOptions& options) {
  c10::InferenceMode guard;
  check_prompts(model, prompts, options);
  const at::Device device = model.parameters().front().device();
  const std::int64_t B = prompts.size(0), P = prompts.size(1), N = options.max_new_tokens;
  std::mt19937_64 rng(options.seed);
  KvCache cache = model.make_cache(B, P + N);
  std::vector<at::Tensor> tokens{prompts.to(at::kCPU)};
  Generation g;
  at::Tensor stopped = at::zeros({B}, at::kBool);
  auto take = [&](const at::Tensor& logits) {  // chooses, keeps, and says whether to go on
    if (options.keep_logits) g.logits.push_back(logits.to(at::kCPU, at::kFloat));
    const at::Tensor next = next_tokens(logits, options.greedy, rng);
    tokens.push_back(next.unsqueeze(1));
    ++g.new_tokens;
    if (options.stop_id) stopped.logical_or_(next.eq(*options.stop_id));
    return g.new_tokens < N && !(options.stop_id && stopped.all().item<bool>());
  };
  const auto t0 = Clock::now();
  bool more = take(model.prefill(prompts.to(device), cache));
  g.prefill_seconds = seconds_since(t0);
  const auto t1 = Clock::now();
  while (more) more = take(model.decode_step(tokens.back().squeeze(1).to(device), cache));
  g.decode_seconds = seconds_since(t1);
  g.ids = at::cat(tokens, 1);
  return g;
}

}  // namespace linsweep
