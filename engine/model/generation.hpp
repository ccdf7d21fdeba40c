// Text generation with a KV cache: the prompt read once (prefill), then one token per sequence
// per step (decode), chosen greedily or drawn from the model's distribution with a seed.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/model/language_model.hpp"

namespace linsweep {

struct GenerationOptions {
  std::int64_t max_new_tokens = 16;  // N ≥ 1
  // The most probable token (the lowest id among equals), or a draw from softmax(logits) in
  // float64 by inverse CDF with a std::mt19937_64 seeded by `seed`, one 53-bit uniform per
  // sequence and step in that order: the same draws on every platform.
  bool greedy = true;
  std::uint64_t seed = 0;
  // Ends generation after the step in which every sequence has produced this id (an EOS); the
  // ids after a sequence's stop are generated as usual, for the caller to cut.
  std::optional<std::int64_t> stop_id;
  // Keep each new token's logits (the distribution it was chosen from), [B, vocab] in float32
  // on the CPU per token: for tests and scoring, at the cost of a copy per step.
  bool keep_logits = false;
};

struct Generation {
  at::Tensor ids;                  // [B, P + n] int64 on the CPU: the prompts, then n ≤ N new tokens
  std::int64_t new_tokens = 0;     // n
  double prefill_seconds = 0;      // reading the prompts (and choosing the first new token)
  double decode_seconds = 0;       // the n − 1 decode steps that follow, each choosing one token
  std::vector<at::Tensor> logits;  // with keep_logits: n tensors [B, vocab]
};

// Generates from `prompts` [B, P] int64 (every sequence of the batch as long, P ≥ 1) with
// `model` as its hooks stand (a routed hook routes each new token: docs/methods.md,
// "Generation"), in a KvCache of P + N positions on the model's device. The new token's
// logits at each step are those of a forward over the whole sequence so far, to the bound of
// docs/numerics.md ("Generation"). Runs under inference mode (the returned tensors are
// inference tensors). Times are wall-clock, each step synchronised by reading its tokens back.
// Throws ModelError when P + N exceeds the model's positions, an id lies outside
// the vocabulary or N < 1. Not thread safe (the model).
Generation generate(LanguageModel& model, const at::Tensor& prompts, const GenerationOptions& options);

}  // namespace linsweep
