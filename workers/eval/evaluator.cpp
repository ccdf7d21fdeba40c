// Batched forward passes and float64 log-softmax accumulation.
#include "workers/eval/evaluator.hpp"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/errors.hpp"
#include "workers/eval/scoring.hpp"
#include "workers/model/language_model.hpp"
#include "workers/parallel_as_caller.hpp"

namespace linsweep {
namespace {

// Positions per head chunk: bounds the float32 logits and their float64 sums in memory.
constexpr std::int64_t kHeadChunkElements = std::int64_t{32} << 20;
// Logit rows per step of max_and_sum_exp: 8 rows of GPT-2's vocabulary are 1.6 MB, within a
// core's L2 or its share of L3, so the three passes over them after the first read hit cache.
constexpr std::int64_t kCacheRows = 8;

// Per row of logits [R, V] (float32; overwritten): its max m and Σ exp(l − m), each [R]. The
// sum is of values in (0, 1], in float32 (ATen's cascade sum: relative error ~1e-7, far inside
// the parity tolerances; a float64 sum would first convert the whole block). On the CPU the
// rows go in cache-sized steps spread over torch's threads (one read of the block from memory
// instead of one per pass); elsewhere in whole-block ops.
std::pair<at::Tensor, at::Tensor> max_and_sum_exp(at::Tensor logits) {
  if (!logits.device().is_cpu()) {
    at::Tensor m = at::amax(logits, -1, /*keepdim=*/true);
    return {m.squeeze(-1), logits.sub_(m).exp_().sum(-1)};
  }
  const std::int64_t rows = logits.size(0);
  at::Tensor max_logit = at::empty({rows}, logits.options()), sum_exp = at::empty({rows}, logits.options());
  parallel_for_as_caller(0, rows, kCacheRows, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t r = first; r < last; r += kCacheRows) {
      const std::int64_t n = std::min(kCacheRows, last - r);
      at::Tensor block = logits.narrow(0, r, n);
      const at::Tensor m = at::amax(block, -1, /*keepdim=*/true);
      max_logit.narrow(0, r, n).copy_(m.squeeze(-1));
      sum_exp.narrow(0, r, n).copy_(block.sub_(m).exp_().sum(-1));
    }
  });
  return {max_logit, sum_exp};
}

}  // namespace

double EvalResult::ppl() const {
  return tokens_scored > 0 ? std::exp(nll_sum / static_cast<double>(tokens_scored)) : NAN;
}

void EvalResult::append(const EvalResult& next) {
  windows += next.windows;
  tokens_scored += next.tokens_scored;
  window_nll.insert(window_nll.end(), next.window_nll.begin(), next.window_nll.end());
  token_nll.insert(token_nll.end(), next.token_nll.begin(), next.token_nll.end());
  nll_sum = 0;
  for (double v : window_nll) nll_sum += v;
}

void check_windows(const LanguageModel& model, const Windows& windows) {
  const auto& cfg = model.config();
  const std::int64_t T = windows.context;
  if (T > cfg.max_positions)
    throw InputError("context " + std::to_string(T) + " is longer than the model's " +
                     std::to_string(cfg.max_positions) + " positions");
  if (T < 2) throw InputError("context must be at least 2 tokens");
  for (std::size_t i = 0; i < windows.ids.size(); ++i) {
    if (windows.ids[i] < 0 || windows.ids[i] >= cfg.vocab_size)
      throw InputError((windows.source.empty() ? "" : windows.source + ": ") + "token id " +
                       std::to_string(windows.ids[i]) + " at window " + std::to_string(i / T) +
                       " is outside the model's vocabulary (" + std::to_string(cfg.vocab_size) + ")");
  }
}

at::Tensor window_ids(const Windows& windows, std::int64_t first, std::int64_t n, const at::Device& device) {
  return at::from_blob(const_cast<TokenId*>(windows.ids.data() + first * windows.context), {n, windows.context},
                       at::kInt)
      .to(device, at::kLong);
}

void score_hidden(LanguageModel& model, const at::Tensor& hidden, const at::Tensor& ids, double* window_nll,
                  double* token_nll) {
  const std::int64_t n = ids.size(0), T = ids.size(1);
  const std::int64_t rows_per_chunk =
      std::max<std::int64_t>(1, kHeadChunkElements / ((T - 1) * model.config().vocab_size));
  at::Tensor h = hidden.narrow(1, 0, T - 1);                   // [n, T-1, d]: position t predicts t+1
  at::Tensor targets = ids.narrow(1, 1, T - 1).unsqueeze(-1);  // [n, T-1, 1]
  for (std::int64_t r0 = 0; r0 < n; r0 += rows_per_chunk) {
    const std::int64_t rn = std::min(rows_per_chunk, n - r0);
    at::Tensor logits = model.head(h.narrow(0, r0, rn)).to(at::kFloat);  // [rn, T-1, V]
    at::Tensor target_logit = logits.gather(-1, targets.narrow(0, r0, rn)).squeeze(-1).to(at::kDouble);
    const auto [max_logit, sum_exp] = max_and_sum_exp(logits.reshape({rn * (T - 1), -1}));
    at::Tensor m = max_logit.view({rn, T - 1}).to(at::kDouble);
    at::Tensor nll = (m + sum_exp.view({rn, T - 1}).to(at::kDouble).log() - target_logit).cpu().contiguous();
    const double* p = nll.data_ptr<double>();
    for (std::int64_t w = 0; w < rn; ++w) {
      double s = 0;
      for (std::int64_t t = 0; t < T - 1; ++t) s += p[w * (T - 1) + t];
      window_nll[r0 + w] = s;
      if (token_nll != nullptr) std::copy(p + w * (T - 1), p + (w + 1) * (T - 1), token_nll + (r0 + w) * (T - 1));
    }
  }
}

EvalResult evaluate(LanguageModel& model, const Windows& windows, const EvalOptions& options) {
  const std::int64_t T = windows.context;
  check_windows(model, windows);
  const std::int64_t batch = std::max<std::int64_t>(1, options.batch);
  c10::InferenceMode guard;
  const at::Device device = model.parameters().front().device();

  EvalResult r;
  r.windows = windows.count;
  r.tokens_scored = windows.count * (T - 1);
  r.window_nll.assign(static_cast<std::size_t>(windows.count), 0.0);
  if (options.keep_token_nll) r.token_nll.assign(static_cast<std::size_t>(r.tokens_scored), 0.0);
  for (std::int64_t first = 0; first < windows.count; first += batch) {
    const std::int64_t n = std::min(batch, windows.count - first);
    const at::Tensor ids = window_ids(windows, first, n, device);  // [n, T]
    score_hidden(model, model.hidden_states(ids), ids, r.window_nll.data() + first,
                 options.keep_token_nll ? r.token_nll.data() + first * (T - 1) : nullptr);
    if (options.progress) options.progress(first + n, windows.count);
  }
  for (double v : r.window_nll) r.nll_sum += v;
  return r;
}

}  // namespace linsweep
