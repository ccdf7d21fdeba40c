// One optimizer step of next-token training: batch, loss, backward, group all-reduce, clip, AdamW.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "engine/corpus/windows.hpp"
#include "engine/train/adamw.hpp"
#include "engine/train/batch_order.hpp"

namespace linsweep {

class Communicator;
class LanguageModel;

struct TrainerOptions {
  AdamWOptions adam;
  double clip = 1.0;       // max global gradient norm; <= 0 disables clipping
  std::int64_t batch = 8;  // windows per optimizer step, over the whole group
  std::uint64_t seed = 0;  // batch order
  LrSchedule schedule = LrSchedule::kConstant;
  std::int64_t warmup = 0;       // steps of linear warmup
  std::int64_t total_steps = 0;  // for the cosine schedule
  std::int64_t step_offset = 0;  // the schedule's step 0 (a later phase's first global step)
  // On CUDA, the forward pass under bfloat16 autocast (master weights stay float32); on the
  // CPU training is always float32.
  bool bf16_autocast = false;
};

struct StepStats {
  double loss = 0;       // mean next-token cross-entropy over the batch (all ranks)
  double extra = 0;      // the extra loss term's value (all ranks), 0 without one
  double grad_norm = 0;  // global L2 norm before clipping
  double lr = 0;
};

// Trains `params` (a subset of the model's parameters, plus any extra modules the hooks
// call, such as soft gates) on `train`. Step s reads BatchOrder(seed)'s windows for s;
// within a worker group each rank takes a contiguous share of them, and gradients, losses and
// the set of parameters that received a gradient are summed over the group, so every rank
// applies the same update. On CUDA the forward runs under bf16 autocast when the options ask
// for it, else in float32; on CPU in float32.
// The model, windows and communicator must outlive the trainer. Not thread safe.
class Trainer {
 public:
  Trainer(LanguageModel& model, std::vector<NamedParameter> params, const Windows& train, TrainerOptions options,
          Communicator* group = nullptr);

  // Runs optimizer step number `step` (0-based). `extra`, when set, is called after the
  // forward pass and returns a scalar added to this rank's loss (scale it to this rank's
  // share of the batch; the group sums the shares). Throws on non-finite loss.
  StepStats step(std::int64_t step, const std::function<at::Tensor(double share)>& extra = {});

  AdamW& optimizer() noexcept { return adam_; }
  const TrainerOptions& options() const noexcept { return options_; }

 private:
  LanguageModel& model_;
  const Windows& train_;
  TrainerOptions options_;
  Communicator* group_;
  AdamW adam_;
  BatchOrder order_;
};

// Mean next-token cross-entropy of ids [B, T] under the model (as hooked): position t
// predicts token t+1, t = 0..T−2; the sum over positions is returned when `sum` is true.
at::Tensor next_token_loss(LanguageModel& model, const at::Tensor& ids, bool sum = false);

// PyTorch's clip_grad_norm_(max_norm, p=2): scales every gradient by
// min(1, max_norm / (norm + 1e-6)); returns the norm before clipping.
double clip_gradients(const std::vector<NamedParameter>& params, double max_norm);

}  // namespace linsweep
