// The demo's models: which the spec names, pretraining them (several at once, with a progress
// line, checkpointed so that an interrupted demo continues), and their held-out perplexity.
// Used by run_demo (demo.hpp) only.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "demo/demo_recipes.hpp"
#include "engine/corpus/windows.hpp"
#include "engine/pretrain/pretrain.hpp"

namespace linsweep {

// Where the demo keeps its cache and writes its results.
struct Paths {
  std::string cache, demo, corpora, tokenizer, models, checkpoints, spec, out, store, report, figures;
};

// Wall-clock seconds, and a duration as "42s" or "3m07s", for the demo's lines.
inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

inline std::string duration_text(double s) {
  const auto total = static_cast<long long>(std::llround(std::max(0.0, s)));
  if (total < 60) return fmt::format("{}s", total);
  return fmt::format("{}m{:02}s", total / 60, total % 60);
}

// The demo models `spec_text` names: each `models:` entry's path, relative to the demo
// directory, that is models/<recipe name>. Only these are pretrained, so a spec of one model
// trains one. Throws InputError naming `spec_path` when the text is not YAML with a models list.
std::set<std::string> models_named(const std::string& spec_path, const std::string& spec_text);

// One model to train (or found cached) and what the progress line shows of it.
struct ModelJob {
  DemoModelRecipe recipe;
  nlohmann::json fingerprint;
  std::string dir, checkpoints;
  bool cached = false;
  std::atomic<std::int64_t> step{0};
  std::atomic<double> loss{std::nan("")};
  std::atomic<bool> running{false}, finished{false};
  PretrainOutcome outcome;
  double seconds = 0;
};

// Trains every job that is not cached, `workers` at a time, each on one thread with an equal
// share of the `cpus` as torch threads. Returns false when a signal stopped it (checkpoints saved).
bool train_models(std::vector<std::unique_ptr<ModelJob>>& jobs, const Windows& train, const Paths& p, int workers,
                  int cpus, bool quiet);

struct Heldout {
  std::string corpus;
  double ppl = 0, unigram = 0;
};

// The model's PPL and the unigram PPL on each corpus's held-out windows of `tokens` tokens,
// cached beside the model (keyed by its fingerprint) so that a cached demo does not evaluate
// again.
std::vector<Heldout> heldout_of(const ModelJob& job, const std::vector<std::pair<std::string, Windows>>& heldout,
                                std::int64_t tokens);

}  // namespace linsweep
