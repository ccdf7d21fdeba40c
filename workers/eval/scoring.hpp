// Building blocks of evaluation for callers that run the model themselves (prefix caching).
#pragma once

#include <ATen/core/Tensor.h>

#include "workers/corpus/windows.hpp"

namespace linsweep {

class LanguageModel;

// Throws InputError when the context is longer than the model's positions or shorter than
// 2, or a token id is outside the model's vocabulary.
void check_windows(const LanguageModel& model, const Windows& windows);

// Windows [first, first + n) as an int64 tensor [n, T] on `device`.
at::Tensor window_ids(const Windows& windows, std::int64_t first, std::int64_t n, const at::Device& device);

// Scores final hidden states hidden [n, T, d] of windows `ids` [n, T]: position t predicts
// token t+1, log-softmax accumulated in float64. Writes n window sums to window_nll and, when
// token_nll is not null, n·(T−1) per-token values. Call under inference mode.
void score_hidden(LanguageModel& model, const at::Tensor& hidden, const at::Tensor& ids, double* window_nll,
                  double* token_nll);

}  // namespace linsweep
