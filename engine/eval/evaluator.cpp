// Batched forward passes and float64 log-softmax accumulation.
#include "engine/eval/evaluator.hpp"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/errors.hpp"
#include "engine/eval/scoring.hpp"
#include "engine/model/language_model.hpp"
#include "engine/parallel_as_caller.hpp"

namespace linsweep {
namespace {

// Logit elements per head chunk: bounds the float32 logits in memory. A GPU takes larger
// chunks: fewer, larger kernels, and its memory is reserved for the model and its batch.
constexpr std::int64_t kHeadChunkElements = std::int64_t{32} << 20;
constexpr std::int64_t kDeviceHeadChunkElements = std::int64_t{256} << 20;
// Logit rows per step of max_and_sum_exp: 8 rows of GPT-2's vocabulary are 1.6 MB, within a
// core's L2 or its share of L3, so the three passes over them after the first read hit cache.
constexpr std::int64_t kCacheRows = 8;

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
  if (T > cfg.max_context()) throw InputError("context " + std::to_string(T) + " is longer than " + context_limit(cfg));
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

at::Tensor all_window_ids(const Windows& windows, const at::Device& device) {
  at::Tensor ids = window_ids(windows, 0, windows.count, at::kCPU);
  if (device.is_cpu()) return ids;
  return ids.pin_memory().to(device, at::kLong, /*non_blocking=*/true);
}

at::Tensor token_nll(LanguageModel& model, const at::Tensor& hidden, const at::Tensor& ids) {
  const std::int64_t n = ids.size(0), T = ids.size(1);
  if (!model.scores()) return at::zeros({n, T - 1}, hidden.options().dtype(at::kDouble));  // another stage scores
  const std::int64_t chunk = hidden.device().is_cpu() ? kHeadChunkElements : kDeviceHeadChunkElements;
  const std::int64_t rows_per_chunk = std::max<std::int64_t>(1, chunk / ((T - 1) * model.config().vocab_size));
  at::Tensor h = hidden.narrow(1, 0, T - 1);                   // [n, T-1, d]: position t predicts t+1
  at::Tensor targets = ids.narrow(1, 1, T - 1).unsqueeze(-1);  // [n, T-1, 1]
  at::Tensor nll = at::empty({n, T - 1}, hidden.options().dtype(at::kDouble));
  for (std::int64_t r0 = 0; r0 < n; r0 += rows_per_chunk) {
    const std::int64_t rn = std::min(rows_per_chunk, n - r0);
    at::Tensor logits = model.head(h.narrow(0, r0, rn)).to(at::kFloat);  // [rn, T-1, V]
    at::Tensor target_logit = logits.gather(-1, targets.narrow(0, r0, rn)).squeeze(-1).to(at::kDouble);
    const auto [max_logit, sum_exp] = max_and_sum_exp(logits.reshape({rn * (T - 1), -1}));
    at::Tensor m = max_logit.view({rn, T - 1}).to(at::kDouble);
    nll.narrow(0, r0, rn).copy_(m + sum_exp.view({rn, T - 1}).to(at::kDouble).log() - target_logit);
  }
  return nll;
}

void sum_windows(const at::Tensor& token_nll, double* window_nll, double* token_nll_out) {
  const at::Tensor nll = token_nll.to(at::kCPU, at::kDouble).contiguous();
  const std::int64_t n = nll.size(0), t1 = nll.size(1);
  const double* p = nll.data_ptr<double>();
  for (std::int64_t w = 0; w < n; ++w) {
    double s = 0;
    for (std::int64_t t = 0; t < t1; ++t) s += p[w * t1 + t];
    window_nll[w] = s;
  }
  if (token_nll_out != nullptr) std::copy(p, p + n * t1, token_nll_out);
}

void score_hidden(LanguageModel& model, const at::Tensor& hidden, const at::Tensor& ids, double* window_nll,
                  double* token_nll_out) {
  sum_windows(token_nll(model, hidden, ids), window_nll, token_nll_out);
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
  // Every window's ids go to the device at once and every score stays there until the end, so
  // that a GPU never waits for the host between batches.
  const at::Tensor all_ids = all_window_ids(windows, device);  // [count, T]
  at::Tensor nll = at::empty({windows.count, T - 1}, all_ids.options().dtype(at::kDouble));
  for (std::int64_t first = 0; first < windows.count; first += batch) {
    const std::int64_t n = std::min(batch, windows.count - first);
    const at::Tensor ids = all_ids.narrow(0, first, n);  // [n, T]
    nll.narrow(0, first, n).copy_(token_nll(model, model.hidden_states(ids), ids));
    if (options.progress) options.progress(first + n, windows.count);
  }
  sum_windows(nll, r.window_nll.data(), options.keep_token_nll ? r.token_nll.data() : nullptr);
  for (double v : r.window_nll) r.nll_sum += v;
  return r;
}

}  // namespace linsweep
