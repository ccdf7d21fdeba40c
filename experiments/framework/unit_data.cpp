// Windows, hook cleanup and the bootstrap shared by experiments.
#include "experiments/framework/unit_data.hpp"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "common/bootstrap.hpp"
#include "common/errors.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/corpus/corpus.hpp"
#include "engine/eval/scoring.hpp"
#include "engine/model/language_model.hpp"
#include "storage/surrogate_store.hpp"

namespace linsweep {

std::vector<TokenId> unit_stream(const ExperimentInput& in) {
  const CorpusFormat format = parse_corpus_format(in.corpus_format);
  return read_model_token_stream(in.corpus_path, format, in.model_path,
                                 in.model != nullptr ? in.model->config().eos_token_id : std::nullopt);
}

Windows unit_windows(const ExperimentInput& in, const std::vector<TokenId>& stream, const Split& split,
                     std::int64_t context) {
  return make_windows(stream, split, context, in.corpus_path);
}

Windows unit_windows(const ExperimentInput& in, const Split& split, std::int64_t context) {
  return unit_windows(in, unit_stream(in), split, context);
}

UnitResult unit_result(const ExperimentInput& in) {
  UnitResult out;
  out.unit_id = in.unit_id;
  out.kind = in.kind;
  out.params = in.provenance;
  return out;
}

double perplexity(const std::vector<double>& window_nll, double tokens) {
  double sum = 0;
  for (double v : window_nll) sum += v;
  return std::exp(sum / tokens);
}

std::vector<double> block(const std::vector<double>& v, std::size_t k, std::size_t count) {
  return std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(k * count),
                             v.begin() + static_cast<std::ptrdiff_t>((k + 1) * count));
}

void for_my_windows(const ExperimentInput& in, const Windows& w,
                    const std::function<void(const at::Tensor& ids, std::size_t at_window)>& batch) {
  LanguageModel& model = *in.model;
  const Windows mine = my_shard(in, w);
  const auto first = static_cast<std::size_t>(my_shard_begin(in, w));
  HookReset reset(model);
  c10::InferenceMode guard;
  const at::Device device = model.parameters().front().device();
  for (std::int64_t b = 0; b < mine.count; b += in.batch) {
    const std::int64_t n = std::min(in.batch, mine.count - b);
    batch(window_ids(mine, b, n, device), first + static_cast<std::size_t>(b));
  }
}

AffineMap surrogate_map(const UnitResult& fit, const std::string& model, const std::string& corpus, std::int64_t layer,
                        double lambda, const std::string& unit_id) {
  const StoredSurrogate s = get_surrogate(fit, surrogate_key(model, corpus, layer));
  for (const auto& f : s.fits) {
    if (f.lambda != lambda) continue;
    const std::int64_t d = s.stats.d;
    return {at::from_blob(const_cast<double*>(f.weight.data()), {d, d}, at::kDouble).to(at::kFloat),
            at::from_blob(const_cast<double*>(f.bias.data()), {d}, at::kDouble).to(at::kFloat)};
  }
  throw InputError(unit_id + ": no surrogate with lambda " + std::to_string(lambda) + " for layer " +
                   std::to_string(layer));
}

HookReset::~HookReset() { model_.reset_hooks(); }

Windows my_shard(const ExperimentInput& in, const Windows& w) {
  if (in.group == nullptr) return w;
  return shard_windows(w, in.group->rank() / static_cast<int>(in.stages),
                       in.group->size() / static_cast<int>(in.stages), in.batch);
}

std::int64_t my_shard_begin(const ExperimentInput& in, const Windows& w) {
  if (in.group == nullptr) return 0;
  return shard_begin(w.count, in.group->rank() / static_cast<int>(in.stages),
                     in.group->size() / static_cast<int>(in.stages), in.batch);
}

std::pair<double, double> bootstrap_delta_interval(const std::vector<double>& a, const std::vector<double>& b,
                                                   std::int64_t tokens_per_window, std::int64_t resamples,
                                                   std::uint64_t seed) {
  return bootstrap_interval(a.size(), resamples, seed, [&](const std::vector<std::size_t>& picks) {
    return window_delta(a, b, picks, tokens_per_window);
  });
}

}  // namespace linsweep
