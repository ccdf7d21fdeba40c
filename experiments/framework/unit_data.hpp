// What experiments share: a unit's stream and windows, surrogates, result skeleton, perplexity, hook cleanup.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/corpus/windows.hpp"
#include "engine/model/mlp_hook.hpp"
#include "experiments/framework/experiment.hpp"

namespace linsweep {

// The token stream of the unit's corpus: text corpora are tokenized with the model
// directory's tokenizer, documents joined by its end-of-text id. Throws InputError naming the
// corpus.
std::vector<TokenId> unit_stream(const ExperimentInput& in);
// The windows of `split` ({start, tokens}) of `stream` with `context` tokens each (a unit that
// reads several splits tokenizes once). Throws InputError naming the corpus.
Windows unit_windows(const ExperimentInput& in, const std::vector<TokenId>& stream, const Split& split,
                     std::int64_t context);
// unit_windows of unit_stream(in).
Windows unit_windows(const ExperimentInput& in, const Split& split, std::int64_t context);

// A result carrying the unit's id, kind and provenance, for the experiment to fill.
UnitResult unit_result(const ExperimentInput& in);

// exp(Σ nll / tokens) of per-window NLL sums.
double perplexity(const std::vector<double>& window_nll, double tokens);
// Entries [k·count, (k+1)·count) of `v`: one block of a [blocks × windows] NLL array.
std::vector<double> block(const std::vector<double>& v, std::size_t k, std::size_t count);

// This rank's contiguous shard of `w` within in.group (all of `w` without a group), in whole
// batches of in.batch windows, so that each window meets the same batch as in one process. With
// the model split over stages, the shard of this rank's replica (its stages share it).
Windows my_shard(const ExperimentInput& in, const Windows& w);
// First window index of this rank's shard.
std::int64_t my_shard_begin(const ExperimentInput& in, const Windows& w);

// Calls `batch(ids, at_window)` over this rank's shard of `w`, in.batch windows at a time: ids
// [n, T] on the model's device, at_window the index in `w` of the batch's first window. Runs
// under c10::InferenceMode and resets the model's MLP hooks afterwards, also on exceptions.
void for_my_windows(const ExperimentInput& in, const Windows& w,
                    const std::function<void(const at::Tensor& ids, std::size_t at_window)>& batch);

// The surrogate of (model, corpus, layer) with `lambda` from a committed fit unit, as a
// float32 map on the CPU. Throws InputError naming `unit_id` when that λ was not fitted.
AffineMap surrogate_map(const UnitResult& fit, const std::string& model, const std::string& corpus, std::int64_t layer,
                        double lambda, const std::string& unit_id);

// Resets every MLP hook of a model when it goes out of scope, also on exceptions.
class HookReset {
 public:
  explicit HookReset(LanguageModel& model) : model_(model) {}
  ~HookReset();
  HookReset(const HookReset&) = delete;
  HookReset& operator=(const HookReset&) = delete;

 private:
  LanguageModel& model_;
};

// 95% percentile bootstrap interval of Δ% = 100·(PPL_b/PPL_a − 1) over windows resampled
// with replacement (`resamples` draws, seeded). a and b are per-window NLL sums.
std::pair<double, double> bootstrap_delta_interval(const std::vector<double>& a, const std::vector<double>& b,
                                                   std::int64_t tokens_per_window, std::int64_t resamples,
                                                   std::uint64_t seed);

}  // namespace linsweep
