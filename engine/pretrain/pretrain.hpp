// Pretraining a small model from scratch: seeded initialisation, AdamW on a cosine schedule, resumable, saved as an HF
// directory.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/corpus/windows.hpp"
#include "engine/model/model_config.hpp"

namespace linsweep {

struct PretrainOptions {
  std::int64_t steps = 400;
  std::int64_t batch = 16;    // windows per optimizer step
  double lr = 3e-3;           // peak, after the warmup
  double min_lr_ratio = 0.1;  // the cosine ends at min_lr_ratio · lr
  std::int64_t warmup = 40;
  double weight_decay = 0.1;
  double clip = 1.0;
  std::uint64_t seed = 0;  // initialisation and batch order
  std::int64_t checkpoint_every = 50;

  nlohmann::json to_json() const;
};

// What the progress callback sees after each step.
struct PretrainStatus {
  std::int64_t step = 0;  // steps completed
  std::int64_t steps = 0;
  double loss = 0;  // this step's mean next-token cross-entropy
  double lr = 0;
};

struct PretrainOutcome {
  bool completed = false;       // false: `stop` asked to stop; a checkpoint holds the progress
  std::int64_t resumed_at = 0;  // step of the checkpoint it continued from (0: a fresh start)
  std::int64_t steps_done = 0;
  double last_loss = 0;  // mean loss of the last tenth of the steps run in this call
  std::int64_t parameters = 0;
};

// Initialises every parameter of `model` from `seed` alone (a private generator, so models
// initialised on several threads at once stay reproducible): matrices ~ N(0, 0.02), GPT-2's
// position embeddings ~ N(0, 0.01), the output projections of attention and MLP blocks
// ~ N(0, 0.02/√(2L)) (GPT-2's residual scaling), LayerNorm weights 1, biases 0.
class LanguageModel;
void initialise_weights(LanguageModel& model, std::uint64_t seed);

// Trains a model built from `config` (float32, CPU, weights from initialise_weights(seed))
// on `train` for options.steps steps: step s takes BatchOrder(seed)'s windows for s, the
// learning rate follows a linear warmup and a cosine decay, AdamW, gradient clipping.
// Every checkpoint_every steps, and when `stop` returns true (polled after each step), the
// parameters and optimizer state are saved under `checkpoint_dir` (the newest two are kept);
// a later call with the same arguments continues from the newest checkpoint and gives the
// same weights as an uninterrupted run. On completion writes `out_dir` as an HF directory
// (config.json from `config`, float32 model.safetensors, vocab.json and merges.txt copied
// from `tokenizer_dir`; see export_hf_directory, which replaces it atomically), then
// `out_dir`/pretrain.json holding `recipe`, and deletes the checkpoints.
// `progress` (may be empty) is called after each step from the calling thread.
// The caller sets torch's thread count; several calls may run at once on different threads
// when each has its own directories. Throws ModelError (bad config, unreadable checkpoint,
// non-finite loss), InputError (windows out of the vocabulary), StorageError (writes).
PretrainOutcome pretrain_model(const ModelConfig& config, const Windows& train, const PretrainOptions& options,
                               const std::string& tokenizer_dir, const std::string& checkpoint_dir,
                               const std::string& out_dir, const nlohmann::json& recipe,
                               const std::function<void(const PretrainStatus&)>& progress,
                               const std::function<bool()>& stop);

// True when `out_dir` holds a finished pretrain_model result for exactly `recipe`.
bool is_pretrained(const std::string& out_dir, const nlohmann::json& recipe);

// Perplexity of the HF model in `dir` (float32, CPU, the calling thread's torch threads) on
// `windows`, batch windows per forward pass. Throws as load_model and evaluate do.
double model_ppl(const std::string& dir, const Windows& windows, std::int64_t batch = 16);

// Perplexity of the empirical unigram distribution of the scored tokens of `windows`
// (positions 1..T−1 of each window, the tokens a model's PPL scores): exp of their entropy.
// It is the lowest PPL any context-free model can reach on exactly those tokens, so a model
// well below it uses context. Throws InputError when there is no scored token.
double unigram_ppl(const Windows& windows);

}  // namespace linsweep
