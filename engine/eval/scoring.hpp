// Building blocks of evaluation for callers that run the model themselves (prefix caching).
#pragma once

#include <ATen/core/Tensor.h>

#include "engine/corpus/windows.hpp"

namespace linsweep {

class LanguageModel;

// Throws InputError when the context is longer than the model's positions or shorter than
// 2, or a token id is outside the model's vocabulary.
void check_windows(const LanguageModel& model, const Windows& windows);

// Windows [first, first + n) as an int64 tensor [n, T] on `device`.
at::Tensor window_ids(const Windows& windows, std::int64_t first, std::int64_t n, const at::Device& device);

// The windows' token ids as int64 [count, T] on `device`, copied from the host once: on a CUDA
// device through pinned memory without blocking the host, so that the copy of a whole split
// costs no synchronisation (slice it per batch).
at::Tensor all_window_ids(const Windows& windows, const at::Device& device);

// Per-token NLL [n, T−1] in float64 on hidden's device for final hidden states hidden [n, T, d]
// of windows `ids` [n, T]: position t predicts token t+1, nll = m + log Σ exp(l − m) − l_target
// with the max m and the target logit exact in float32 and the sum of exp in float32, combined
// in float64; zeros on a stage of a split model that does not score (LanguageModel::scores).
// Never synchronises with the host. Call under inference mode.
at::Tensor token_nll(LanguageModel& model, const at::Tensor& hidden, const at::Tensor& ids);

// Sums each window's row of token_nll [n, T−1] (any device; copied to the host here) in
// position order into window_nll[0..n), and copies the rows to token_nll_out when not null.
void sum_windows(const at::Tensor& token_nll, double* window_nll, double* token_nll_out);

// token_nll, then sum_windows: n window sums to window_nll and, when token_nll_out is not
// null, n·(T−1) per-token values. Synchronises with the device once. Call under inference mode.
void score_hidden(LanguageModel& model, const at::Tensor& hidden, const at::Tensor& ids, double* window_nll,
                  double* token_nll_out);

}  // namespace linsweep
