// Perplexity of a model over windows: per-position NLL accumulated in float64 (docs/methods.md, "NLL and perplexity").
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "engine/corpus/windows.hpp"

namespace linsweep {

class LanguageModel;

struct EvalOptions {
  std::int64_t batch = 8;       // windows per forward pass
  bool keep_token_nll = false;  // fill EvalResult::token_nll
  // Called after each batch with (windows done, windows total); may be empty.
  std::function<void(std::int64_t, std::int64_t)> progress;
};

struct EvalResult {
  std::int64_t windows = 0;
  std::int64_t tokens_scored = 0;  // windows · (context − 1)
  double nll_sum = 0;              // Σ over windows of window_nll, in window order
  std::vector<double> window_nll;  // per window: Σ_t nll(t), t = 0..T−2
  std::vector<double> token_nll;   // windows · (T−1) when keep_token_nll
  double ppl() const;              // exp(nll_sum / tokens_scored)
  // Appends another shard's result (windows that follow this one's) and re-sums.
  void append(const EvalResult& next);
};

// Runs `model` (as configured, hooks included) over every window under inference mode, in
// batches of options.batch. Position t of each window predicts token t+1; log-softmax is
// accumulated in float64. Per-window values do not depend on the batch size or sharding.
// Throws InputError when a token id is outside the model's vocabulary or the context is
// longer than the model's positions. Drives the model from the calling thread only.
EvalResult evaluate(LanguageModel& model, const Windows& windows, const EvalOptions& options = {});

}  // namespace linsweep
