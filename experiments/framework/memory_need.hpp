// What one unit needs in memory on one rank, planned before anything runs (docs/spec.md,
// "Memory"). Each unit kind registers how its need grows with the model, the batch and its
// parameters (UnitKind::memory); the orchestrator adds the process's own footprint, prints the
// plan and refuses a spec that does not fit `runtime.memory_per_rank`. Torch-free.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace linsweep {

// The sizes of a model that its memory depends on.
struct ModelSize {
  std::int64_t parameters = 0;
  // Of those, the embedding's and the head's (one matrix where they are tied): a split model
  // holds the embedding on its first stage and the head on its last.
  std::int64_t outer_parameters = 0;
  std::int64_t d_model = 0, d_ff = 0, layers = 0, vocab = 0, heads = 0;
  double weight_bytes = 4;  // bytes a rank holds per weight: its compute dtype's size
};

// One unit as its memory sees it.
struct MemoryQuery {
  const nlohmann::json& params;  // the unit's canonical parameters
  ModelSize model;
  std::int64_t batch = 1;    // windows per forward pass (runtime.batch)
  std::int64_t stages = 1;   // the model's layers are split over this many ranks
  std::int64_t context = 0;  // the sweep's window length
  // Tokens of each of the sweep's splits ("gate", "select", ...), for units that hold rows of
  // captured activations in memory.
  std::map<std::string, std::int64_t> split_tokens{};
};

// Bytes one rank holds at the unit's peak, by what holds them.
struct MemoryNeed {
  double weights = 0;      // the model's weights (its stage's share)
  double activations = 0;  // a forward (and backward) pass's tensors, caches, captured rows
  double statistics = 0;   // normal equations and other float64 sums
  double optimizer = 0;    // a training unit's own weights, gradients and AdamW's moments
  double total() const noexcept { return weights + activations + statistics + optimizer; }
};

using MemoryFn = std::function<MemoryNeed(const MemoryQuery&)>;

// The weights a rank of the unit's model holds, times weight_bytes: the whole model, or on a
// split model its stage's share of the layers' parameters and one vocabulary matrix (the
// first stage's embedding, the last's head; both ends hold the one matrix of a tied head).
double stage_weight_bytes(const MemoryQuery& q);
// The peak of one forward pass over a batch: the residual stream and one layer's attention and
// MLP intermediates in float32, and the head's logits with their log-softmax.
double forward_bytes(const MemoryQuery& q, std::int64_t context);
// The need of a unit that runs its model forward over batches of `context` tokens (0: the
// sweep's) and holds nothing else of size: the weights and forward_bytes. The default of every
// kind that needs a model.
MemoryNeed forward_need(const MemoryQuery& q, std::int64_t context = 0);
// Rows of captured activations of split `name` (its windows × (context − 1)); 0 without it.
double captured_rows(const MemoryQuery& q, const std::string& name);
// Normal equations of one layer: XᵀX | XᵀY, float64 [d, 2d].
double normal_equation_bytes(const ModelSize& m);

}  // namespace linsweep
