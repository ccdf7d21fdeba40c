// The demo's eleven models: three sizes each of GPT-2, GPT-NeoX and Llama, two of Mixtral (a
// mixture of experts), and how each is pretrained.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/model/model_config.hpp"
#include "engine/pretrain/pretrain.hpp"

namespace linsweep {

// The demo tokenizer: GPT-2's BPE cut to its first kDemoMerges merges, vocabulary 2,048
// (256 bytes, 1,791 merges, <|endoftext|> at id 2,047). The output layer dominates the cost
// of models this small, and halving the vocabulary halves it.
inline constexpr std::size_t kDemoMerges = 1791;
inline constexpr std::int64_t kDemoContext = 128;  // pretraining and the sweep

struct DemoModelRecipe {
  std::string name;  // directory under <cache>/demo/models and the spec's model name
  ModelConfig config;
  PretrainOptions training;
  // Everything that decides the weights: a model trained for another recipe is retrained.
  nlohmann::json fingerprint(const std::string& data_fingerprint) const;
  // FLOPs per training token, 3 · model_flops (experiments/numerics/flops.hpp: the products with
  // weights, forward, and a backward pass of twice that), to order and weigh the training jobs.
  double cost_per_token() const;
};

// gpt2-{s,m,l}, neox-{s,m,l}, llama-{s,m,l} and mixtral-{s,m} (d = 48/64/96, 2/3/4 layers,
// heads of 16 dimensions; d_ff = 4d, or 128/176/256 for Llama's gated MLP; NeoX with parallel
// residual and rotary on a quarter of each head; Llama with RMSNorm, SwiGLU and rotary on the
// whole head; Mixtral Llama's layer with 4 SwiGLU experts of width 64/88, top-2, in place of
// the MLP), for a vocabulary of `vocab_size` whose end-of-text id is `eos`. A static recipe;
// thread safe.
std::vector<DemoModelRecipe> demo_model_recipes(std::int64_t vocab_size, std::int64_t eos);

}  // namespace linsweep
